package store

import (
	"context"
	"time"
)

// Options configure a Store; New takes them whole. DefaultOptions holds the service's defaults,
// which its configuration (internal/config) starts from: the one place they are written down.
type Options struct {
	// GroupMin is the number of addresses above which an attribution group is live (keeps its
	// own rollups): smaller groups are summed over their addresses at query time, as cheaply.
	// Groups already live stay live; Rematerialize applies it to every group.
	GroupMin int
	// AttributionCache is how many addresses' attributions the store keeps in process; 0 keeps
	// none (every page reads them from the read model).
	AttributionCache int

	// InlineRollups makes a write apply the rollup queue before it returns, so a read after it
	// sees its rows in every rollup. Otherwise (queued) a write returns once its rows are stored
	// and RunRollups applies them in the background.
	InlineRollups bool
	// RollupLagMax bounds the queue (queued rollups): a write that finds more rows queued than
	// this applies as many as it wrote before it returns. 0: no bound.
	RollupLagMax int64
	// RollupBatch is the most queued rows one apply takes.
	RollupBatch int
	// QueueLength, when set, is what the lag bound reads the queue's length from instead of the
	// statistics' estimate (tests).
	QueueLength func(context.Context) (int64, error)

	// ListSetMax is the size up to which a modelled address set (entities, types, deposit
	// services) is listed address by address when it is resolved (ResolveSet): a few addresses
	// are best read through their own index ranges. Tests set it to 0 to run every filter
	// through the plans of large sets.
	ListSetMax int
	// LateralMax is the most driving addresses a branch of a row read reads one by one, each
	// through its own ordered index range (cheap top-N per address); larger sets are one = ANY
	// scan.
	LateralMax int
	// CountChunkDays is how many days an all-time or capped group count reads in its first query
	// (each next one reads four times more).
	CountChunkDays int
	// PairJoinMax is the largest set a condition on a pair row's other side joins rather than
	// probes; a negative value probes every set.
	PairJoinMax int
	// PairUIDs makes a first page read a pair row of one known transfer by its natural key
	// rather than through its addresses' indexes.
	PairUIDs bool
	// PartitionRefresh is how often the store rereads which partitions transfers has: a
	// partition detached by an operator is read as part of transfers for at most this long.
	PartitionRefresh time.Duration
}

// DefaultOptions are the service's defaults.
func DefaultOptions() Options {
	return Options{
		GroupMin:         64,
		AttributionCache: 200_000,
		RollupLagMax:     500_000,
		RollupBatch:      20_000,
		ListSetMax:       64,
		LateralMax:       64,
		CountChunkDays:   16,
		PairJoinMax:      32 << 10,
		PairUIDs:         true,
		PartitionRefresh: time.Minute,
	}
}
