// Package store is the transfers service's PostgreSQL layer: batched, idempotent writes of chain
// data with their rollups, reorg removal, the attribution read model, and every read the API
// serves. All SQL of the service lives here.
package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	opt  Options

	memb  membCache
	attrs *attrCache // nil: none
	rq    rollupQueue
	caps  capCache // counts known to be at the cap

	// shortPages counts first pages of an entity that edgeNewestPage read short and that were
	// read again hour by hour (ShortFirstPages).
	shortPages atomic.Int64

	mu         sync.Mutex
	partitions map[string]bool // "<table>:<YYYYMM>" known to exist
	parts      map[string]bool // transfers.transfers' partitions (attached), as of partsRead
	partsRead  time.Time
	tuned      map[uint32]bool // backend pids whose session settings are set
}

// ShortFirstPages is how many first pages (and keyset page turns) of a live entity were read
// short from the pair rows that can hold them and read again hour by hour since the store was
// made: a cost, not an error (their answers are the same).
func (s *Store) ShortFirstPages() int64 { return s.shortPages.Load() }

// New returns a store over pool, whose schema is migrated, configured by o (DefaultOptions for
// the service's defaults).
func New(pool *pgxpool.Pool, o Options) *Store {
	return &Store{pool: pool, opt: o, attrs: newAttrCache(o.AttributionCache), partitions: map[string]bool{}, tuned: map[uint32]bool{},
		rq: rollupQueue{queued: !o.InlineRollups, lagMax: o.RollupLagMax, batch: o.RollupBatch, lengthFn: o.QueueLength, wake: make(chan struct{}, 1)}}
}

// ensurePartitions creates the monthly partitions of table that times fall in.
func (s *Store) ensurePartitions(ctx context.Context, table string, times []time.Time) error {
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
		if _, err := s.pool.Exec(ctx, `SELECT transfers.ensure_partition($1, $2)`, table, t); err != nil {
			return fmt.Errorf("create %s partition for %s: %w", table, t.UTC().Format("2006-01"), err)
		}
		s.mu.Lock()
		s.partitions[table+":"+t.UTC().Format("200601")] = true
		s.mu.Unlock()
	}
	return nil
}

// sessionSettings are set once per connection the store reads through. The store's statements
// are short and planned per execution: JIT compilation (seconds for a statement with many CTEs)
// and parallel workers (milliseconds to start) cost more than they save, and a sort or hash of a
// few hundred thousand rollup rows should stay in memory.
const sessionSettings = `SET jit = off; SET max_parallel_workers_per_gather = 0; SET work_mem = '32MB'`

// conn acquires a connection with the store's session settings.
func (s *Store) conn(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	pid := c.Conn().PgConn().PID()
	s.mu.Lock()
	done := s.tuned[pid]
	s.mu.Unlock()
	if !done {
		if _, err := c.Exec(ctx, sessionSettings); err != nil {
			c.Release()
			return nil, fmt.Errorf("session settings: %w", err)
		}
		s.mu.Lock()
		s.tuned[pid] = true
		s.mu.Unlock()
	}
	return c, nil
}

// query is pool.Query on a connection with the store's session settings.
func (s *Store) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		c.Release()
		return nil, err
	}
	return &connRows{Rows: rows, c: c}, nil
}

// queryRow is pool.QueryRow on a connection with the store's session settings.
func (s *Store) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c, err := s.conn(ctx)
	if err != nil {
		return errRow{err}
	}
	return connRow{row: c.QueryRow(ctx, sql, args...), c: c}
}

// queryGeneric is query with PostgreSQL's generic plan of sql, prepared once per connection:
// for hot statements whose best plan does not depend on their values, where PostgreSQL's own
// choice (plan_cache_mode auto) keeps planning them with each call's values because the generic
// plan's estimate counts every partition it will prune at run time. The statement runs in a
// read-only transaction that sets plan_cache_mode for itself alone, sent with it in one round
// trip (the transaction's three statements cost about 0.1 ms; planning the transfers read of a
// keyset page turn at 10M rows, about 1 ms). An error rolls the setting back with the
// transaction.
func (s *Store) queryGeneric(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue("SET LOCAL plan_cache_mode = force_generic_plan")
	b.Queue(sql, args...) // prepared and cached: the pool's default mode
	b.Queue("COMMIT")
	br := c.SendBatch(ctx, b)
	fail := func(err error) (pgx.Rows, error) {
		_ = br.Close()
		c.Release()
		return nil, err
	}
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return fail(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	return &batchRows{Rows: rows, br: br, c: c}, nil
}

// batchRows are the rows of queryGeneric's statement: when they are done, the transaction is
// committed and the connection released.
type batchRows struct {
	pgx.Rows
	br   pgx.BatchResults
	c    *pgxpool.Conn
	once sync.Once
	err  error // of the commit
}

func (r *batchRows) Close() {
	r.Rows.Close()
	r.once.Do(func() {
		if r.Rows.Err() == nil {
			_, r.err = r.br.Exec()
		}
		if err := r.br.Close(); r.err == nil && r.Rows.Err() == nil {
			r.err = err
		}
		r.c.Release()
	})
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// connRows releases its connection when the rows are done.
type connRows struct {
	pgx.Rows
	c    *pgxpool.Conn
	once sync.Once
}

func (r *connRows) Close() {
	r.Rows.Close()
	r.once.Do(r.c.Release)
}

func (r *connRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

type connRow struct {
	row pgx.Row
	c   *pgxpool.Conn
}

func (r connRow) Scan(dst ...any) error {
	defer r.c.Release()
	return r.row.Scan(dst...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
