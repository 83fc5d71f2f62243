package store

import "context"

// Test-only access to the version 2 row layout (TestMigrationFromVersion2 writes it).

// TransferColumns are the transfer columns without the natural id.
func TransferColumns() []string { return transferCols }

// TransferValues are a row's values for TransferColumns.
func TransferValues(r TransferRow) []any { return transferValues(r) }

// SetQueueLength makes the rollup lag bound read the queue's length from fn.
func (s *Store) SetQueueLength(fn func(context.Context) (int64, error)) { s.rq.lengthFn = fn }

// CappedCountHits is how many counts the store answered from the counts it knows are capped.
func (s *Store) CappedCountHits() int64 { return s.caps.hits.Load() }

// SetEdgeUIDs sets whether keyset first pages read pair rows of one known transfer by its uid;
// restore puts it back.
func SetEdgeUIDs(on bool) (restore func()) {
	old := useEdgeUIDs
	useEdgeUIDs = on
	return func() { useEdgeUIDs = old }
}
