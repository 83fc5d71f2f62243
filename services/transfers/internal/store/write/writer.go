package write

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a Writer (the store's Options say what each means).
type Options struct {
	GroupMin      int
	InlineRollups bool
	RollupLagMax  int64
	RollupBatch   int
	QueueLength   func(context.Context) (int64, error)
}

// Writer is the store's write path: batched, idempotent writes of chain records with their
// natural ids, reorgs, attribution changes and the upkeep of every rollup. It is safe for
// concurrent use.
type Writer struct {
	pool *pgxpool.Pool
	db   *db.DB
	opt  Options

	memb membCache
	rq   rollupQueue

	mu         sync.Mutex
	partitions map[string]bool // "<table>:<YYYYMM>" known to exist
}

// New returns a writer over pool (d: the same pool with the store's session settings).
func New(pool *pgxpool.Pool, d *db.DB, o Options) *Writer {
	return &Writer{pool: pool, db: d, opt: o, partitions: map[string]bool{},
		rq: rollupQueue{queued: !o.InlineRollups, lagMax: o.RollupLagMax, batch: o.RollupBatch, lengthFn: o.QueueLength, wake: make(chan struct{}, 1)}}
}

// ensurePartitions creates the monthly partitions of table that times fall in.
func (s *Writer) ensurePartitions(ctx context.Context, table string, times []time.Time) error {
	var missing []time.Time
	seen := map[string]bool{}
	s.mu.Lock()
	for _, t := range times {
		k := table + ":" + t.UTC().Format("200601")
		if !s.partitions[k] && !seen[k] {
			seen[k] = true
			missing = append(missing, t)
		}
	}
	s.mu.Unlock()
	for _, t := range missing {
		if _, err := s.pool.Exec(ctx, ensurePartitionSQL, table, t); err != nil {
			return fmt.Errorf("create %s partition for %s: %w", table, t.UTC().Format("2006-01"), err)
		}
		s.mu.Lock()
		s.partitions[table+":"+t.UTC().Format("200601")] = true
		s.mu.Unlock()
	}
	return nil
}
