package write

// Queued rollups. A transfers write stores its new rows and appends their keys (natural key and
// block) to transfers.rollup_keys, in one transaction (WriteTransfers). Applying moves a batch
// of queued keys out (DELETE ... RETURNING), reads their rows and adds them to every rollup, in
// one transaction: a queued row is counted once, whichever replica applies it and however often
// a write or an apply is retried.
//
// Why it is exact beside relabels and reorgs:
//   - an apply reads the groups of its rows when it applies them, holding groupLock shared. A
//     relabel (exclusive) moves only rows already in the rollups from the old groups to the new
//     ones; rows still queued are applied later under the new groups. Either way every row ends
//     counted once under the membership of the moment, as if the world had been loaded
//     relabelled (TestQueuedRollups).
//   - a reorg (exclusive) first applies the queued rows of the blocks it removes, so every row
//     it removes is in the rollups it subtracts from; other queued rows are not its concern.
//
// Inline (Options.InlineRollups), a write applies the queue before it returns, so a read after it
// sees its rows everywhere. Queued (the default), a write returns once its rows are stored
// and RunRollups applies them in the background; a write that finds more than the lag bound
// queued applies as many rows as it wrote before it returns, so the queue cannot grow without
// bound under a load the rollups cannot keep up with.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/progress"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/metric"
)

// keyColList are transfers.rollup_keys' columns: a row's natural key, which the apply reads it
// by, and its block, which a reorg takes its blocks' keys by (applyBlocks).
var keyColList = []string{"block_time", "uid", "block_number", "chain"}

// keyValues picks keyColList's values out of a row's transferColsUID values.
func keyValues(v []any) []any {
	return []any{v[5], v[len(v)-1], v[4], v[0]}
}

// An apply's upserts come in two statements (apply_cold.sql, apply_hot.sql). The first writes
// rows that batches rarely share; the second the rows every batch shares, right before the
// commit. Two applies at once (replicas) then overlap in their first statements and take turns
// only for the second, which holds the shared rows' locks only until the commit.

// applyBatch moves up to max queued rows into the rollups in tx, which holds groupLock (shared
// or exclusive). It returns how many it applied; 0 when nothing is queued that another apply
// does not hold.
func (s *Writer) applyBatch(ctx context.Context, tx pgx.Tx, max int) (int, error) {
	return s.apply(ctx, tx, takeQueuedBatchSQL, max)
}

// applyBlocks applies the queued rows of chain's blocks in tx, which holds groupLock
// exclusively: a reorg, which then removes them, so that it subtracts them from rollups that
// hold them. Other blocks' queued rows stay queued, but for rows of blocks of the same numbers,
// or, when a block's number is unknown (0), every queued row of the chain.
func (s *Writer) applyBlocks(ctx context.Context, tx pgx.Tx, chain string, blocks []Block) error {
	numbers := make([]int64, 0, len(blocks))
	for _, b := range blocks {
		if b.Number <= 0 {
			_, err := s.apply(ctx, tx, takeQueuedChainSQL, chain)
			return err
		}
		numbers = append(numbers, b.Number)
	}
	_, err := s.apply(ctx, tx, takeQueuedBlocksSQL, chain, numbers)
	return err
}

// apply moves the queued rows take (a take_queued_*.sql statement, with args) selects into the
// rollups, in tx, and returns how many.
func (s *Writer) apply(ctx context.Context, tx pgx.Tx, take string, args ...any) (int, error) {
	if _, err := tx.Exec(ctx, createApplyTablesSQL); err != nil {
		return 0, fmt.Errorf("prepare rollups: %w", err)
	}
	tag, err := tx.Exec(ctx, take, args...)
	if err != nil {
		return 0, fmt.Errorf("take queued rows: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return 0, nil
	}
	rows, err := tx.Query(ctx, applyAddressesSQL)
	if err != nil {
		return 0, fmt.Errorf("addresses of queued rows: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("addresses of queued rows: %w", err)
	}
	addrs := make(map[string][]string, len(list))
	for _, a := range list {
		addrs[a] = nil
	}
	if err := s.groupsOf(ctx, tx, addrs); err != nil {
		return 0, err
	}
	memb := make([][]any, 0, len(addrs))
	for a, g := range addrs {
		if len(g) > 0 {
			memb = append(memb, []any{a, g})
		}
	}
	if len(memb) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"apply_memb"}, []string{"address", "g"}, pgx.CopyFromRows(memb)); err != nil {
			return 0, fmt.Errorf("groups of queued rows: %w", err)
		}
	}
	for _, q := range []string{applyPairsSQL, applySidesSQL, applyColdSQL, applyHotSQL} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("apply rollups: %w", err)
		}
	}
	return int(tag.RowsAffected()), nil
}

// applyRollups applies up to max queued rows (Options.RollupBatch when max ≤ 0) in one
// transaction and returns how many it applied.
func (s *Writer) applyRollups(ctx context.Context, max int) (int, error) {
	if max <= 0 {
		max = s.rollupBatch()
	}
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSharedSQL); err != nil {
			return fmt.Errorf("prepare rollups: %w", err)
		}
		var err error
		n, err = s.applyBatch(ctx, tx, max)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// DrainRollups applies queued rows until none are left that another apply does not hold, and
// returns how many it applied.
func (s *Writer) DrainRollups(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.applyRollups(ctx, s.rollupBatch())
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// QueuedRollups is how many rows wait for the rollups (exact; it counts the queue).
func (s *Writer) QueuedRollups(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, queuedRollupsSQL).Scan(&n)
	return n, err
}

// rollupQueue is the store's rollup mode (see the package comment above).
type rollupQueue struct {
	queued bool
	lagMax int64
	batch  int
	wake   chan struct{}
	// lengthFn, when set, replaces QueueLength (tests).
	lengthFn func(context.Context) (int64, error)

	mu    sync.Mutex
	lenAt time.Time // when lenN was read
	lenN  int64
}

// lengthTTL is how long the lag bound reuses a read of the queue's length: the statistics'
// estimate trails by about as much, so reading it for every write would only add a round trip.
const lengthTTL = time.Second

// length is the queue's length as the lag bound reads it.
func (q *rollupQueue) length(ctx context.Context, s *Writer) (int64, error) {
	if q.lengthFn != nil {
		return q.lengthFn(ctx)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if time.Since(q.lenAt) < lengthTTL {
		return q.lenN, nil
	}
	n, err := s.QueueLength(ctx)
	if err != nil {
		return 0, err
	}
	q.lenAt, q.lenN = time.Now(), n
	return n, nil
}

// QueueLength is the statistics' live-tuple count of the queue: an estimate that lags by about
// a second, which is as close as a bound needs, at the cost of a function call; exactly 0 when
// the queue is empty and at least 1 when it is not (sql/queue_length.sql).
func (s *Writer) QueueLength(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, queueLengthSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("rollup queue length: %w", err)
	}
	return n, nil
}

// defaultRollupBatch is the most queued rows one apply takes when Options.RollupBatch is not set.
const defaultRollupBatch = 20_000

func (s *Writer) rollupBatch() int {
	if s.rq.batch > 0 {
		return s.rq.batch
	}
	return defaultRollupBatch
}

// afterWrite runs after a write that queued n rows committed: inline, it applies the queue;
// queued, it wakes the worker and, past the lag bound, applies n rows itself.
func (s *Writer) afterWrite(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	if !s.rq.queued {
		_, err := s.DrainRollups(ctx)
		return err
	}
	select {
	case s.rq.wake <- struct{}{}:
	default:
	}
	if s.rq.lagMax <= 0 {
		return nil
	}
	queued, err := s.rq.length(ctx, s)
	if err != nil {
		return err
	}
	for done := 0; queued > s.rq.lagMax && done < n; {
		k, err := s.applyRollups(ctx, min(n-done, s.rollupBatch()))
		if err != nil || k == 0 {
			return err
		}
		done += k
	}
	return nil
}

// RunRollups applies queued rows until ctx ends: whenever a write of this store wakes it, and
// every poll (rows other replicas queued, or a failed apply to retry). It counts the rows it
// applies (transfers_rollups_applied_total) and records the queue's length after each pass
// (transfers_rollup_queue_rows, the statistics' estimate) with meter.
func (s *Writer) RunRollups(ctx context.Context, poll time.Duration, log *slog.Logger, meter metric.Meter) error {
	applied, _ := meter.Int64Counter("transfers_rollups_applied_total", metric.WithDescription("queued transfers added to the rollups"))
	queued, _ := meter.Int64Gauge("transfers_rollup_queue_rows", metric.WithDescription("transfers stored and not yet in the rollups (estimate)"))
	// The queue as a job: remaining is the rows queued, the ETA the lag in seconds at the
	// current apply rate (progress_eta_seconds{task="transfers.rollups"}).
	prog := progress.New(progress.Options{Job: "transfers.rollups", Unit: "rows", Log: log, Meter: meter})
	defer prog.Start(ctx)()
	var done int64
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		n, err := s.DrainRollups(ctx)
		applied.Add(ctx, int64(n))
		done += int64(n)
		prog.Set(done)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "applying queued rollups failed; retrying", "error", err)
		}
		if left, err := s.QueueLength(ctx); err == nil {
			queued.Record(ctx, left)
			prog.SetTotal(done + left)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.rq.wake:
		case <-t.C:
		}
	}
}
