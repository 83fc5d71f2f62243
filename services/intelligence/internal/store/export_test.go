package store

// AttributionSelect is the publisher's query, for tests that look at its plan.
var AttributionSelect = attributionSelect

// VersionLock is the advisory lock every versioned writer holds, for tests that take it.
const VersionLock = versionLock

// HeuristicsLock is the advisory lock a heuristics pass holds, for tests that take it.
const HeuristicsLock = heuristicsLock

// ReorgLock is the advisory lock transfer batches take shared, and reorgs and entity moves
// exclusively, for tests that take it.
const ReorgLock = reorgLock

// ClusterActivitySQL is the cluster summary's statement, for benchmarks that look at its plan.
var ClusterActivitySQL = clusterActivitySQL

// CustomPlanNoJIT is the batch that runs a statement with a custom plan and JIT off, for tests
// that check it does.
var CustomPlanNoJIT = customPlanNoJIT
