// Package db is the transfers store's access to PostgreSQL shared by its parts: connections
// with the store's session settings, statements run on them, and statements run under their
// generic plan.
package db

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB runs the store's statements over a pool; it is safe for concurrent use.
type DB struct {
	pool  *pgxpool.Pool
	mu    sync.Mutex
	tuned map[uint32]bool // backend pids whose session settings are set
}

// New returns a DB over pool.
func New(pool *pgxpool.Pool) *DB { return &DB{pool: pool, tuned: map[uint32]bool{}} }

// Pool is the pool itself, for statements that need none of the session settings.
func (s *DB) Pool() *pgxpool.Pool { return s.pool }

// Exec makes pgx send a query as an unnamed statement, so PostgreSQL plans it with the actual
// values every time: large address sets become hashed constants and time bounds prune
// partitions, which a cached generic plan would not do. It returns args to pass to Query.
func Exec(args []any) []any { return append([]any{pgx.QueryExecModeExec}, args...) }

// The statements of the store's connections, each file saying what its statement does.
var (
	//go:embed sql/session_settings.sql
	sessionSettingsSQL string
	//go:embed sql/begin_read_only.sql
	beginReadOnlySQL string
	//go:embed sql/force_generic_plan.sql
	forceGenericPlanSQL string
	//go:embed sql/commit.sql
	commitSQL string
)

// Conn acquires a connection with the store's session settings.
func (s *DB) Conn(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	pid := c.Conn().PgConn().PID()
	s.mu.Lock()
	done := s.tuned[pid]
	s.mu.Unlock()
	if !done {
		if _, err := c.Exec(ctx, sessionSettingsSQL); err != nil {
			c.Release()
			return nil, fmt.Errorf("session settings: %w", err)
		}
		s.mu.Lock()
		s.tuned[pid] = true
		s.mu.Unlock()
	}
	return c, nil
}

// Query is pool.Query on a connection with the store's session settings.
func (s *DB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, err := s.Conn(ctx)
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

// QueryRow is pool.QueryRow on a connection with the store's session settings.
func (s *DB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c, err := s.Conn(ctx)
	if err != nil {
		return errRow{err}
	}
	return connRow{row: c.QueryRow(ctx, sql, args...), c: c}
}

// QueryGeneric is Query with PostgreSQL's generic plan of sql, prepared once per connection:
// for hot statements whose best plan does not depend on their values, where PostgreSQL's own
// choice (plan_cache_mode auto) keeps planning them with each call's values because the generic
// plan's estimate counts every partition it will prune at run time. The statement runs in a
// read-only transaction that sets plan_cache_mode for itself alone, sent with it in one round
// trip (the transaction's statements cost much less than planning a keyset page turn's
// transfers read with its values). An error rolls the setting back with the transaction.
func (s *DB) QueryGeneric(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, err := s.Conn(ctx)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(beginReadOnlySQL)
	b.Queue(forceGenericPlanSQL)
	b.Queue(sql, args...) // prepared and cached: the pool's default mode
	b.Queue(commitSQL)
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

// batchRows are the rows of QueryGeneric's statement: when they are done, the transaction is
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
