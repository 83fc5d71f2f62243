// Package store is the transfers service's PostgreSQL layer: batched, idempotent writes of chain
// data with their rollups, reorg removal, the attribution read model, and every read the API
// serves. All SQL of the service lives here.
package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool

	groupMin int // groups with more addresses than this are live
	memb     membCache
	attrs    *attrCache // nil: none
	rq       rollupQueue

	mu         sync.Mutex
	partitions map[string]bool // "<table>:<YYYYMM>" known to exist
	tuned      map[uint32]bool // backend pids whose session settings are set
}

// New returns a store over pool, whose schema is migrated.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, groupMin: DefaultGroupMin, attrs: newAttrCache(DefaultAttributionCache), partitions: map[string]bool{}, tuned: map[uint32]bool{},
		rq: rollupQueue{wake: make(chan struct{}, 1)}}
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
