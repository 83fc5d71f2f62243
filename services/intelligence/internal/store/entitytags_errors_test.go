package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgconn"
)

// realErrors returns, by name, errors as pgx really returns them (not built by hand), so the
// classifier is checked on their real errors.As chains.
func realErrors(t *testing.T) map[string]error {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	errs := map[string]error{}

	// The server refuses the connection: a ConnectError holding a PgError 3D000.
	cfg, err := pgconn.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "chainintel_no_such_database"
	if c, err := pgconn.ConnectConfig(ctx, cfg); err == nil {
		_ = c.Close(ctx)
		t.Fatal("connected to a missing database")
	} else {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "3D000" {
			t.Fatalf("connecting to a missing database: %v, want a PgError 3D000 inside", err)
		}
		errs["connect refused"] = fmt.Errorf("store entity tags: %w", err)
	}

	// A statement timeout: the server's PgError 57014.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET statement_timeout = '20ms'`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `SELECT pg_sleep(5)`)
	if _, rerr := conn.Exec(ctx, `RESET statement_timeout`); rerr != nil {
		t.Fatal(rerr)
	}
	errs["statement timeout"] = fmt.Errorf("store entity tags: %w", err)

	// A client-side deadline passing during a statement.
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = pool.Exec(dctx, `SELECT pg_sleep(5)`)
	cancel()
	errs["client deadline"] = fmt.Errorf("store entity tags: %w", err)
	errs["client deadline before the statement"] = fmt.Errorf("store entity tags: %w", func() error {
		dctx, cancel := context.WithTimeout(ctx, -time.Second)
		defer cancel()
		_, err := pool.Exec(dctx, `SELECT 1`)
		return err
	}())

	// Shutdown: the work's context canceled during a statement.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = pool.Exec(cctx, `SELECT pg_sleep(5)`)
	errs["canceled"] = fmt.Errorf("store entity tags: %w", err)

	// An entity's own failure: a value the server rejects.
	_, err = pool.Exec(ctx, `SELECT 'x'::jsonb`)
	errs["bad value"] = fmt.Errorf("store entity tags: %w", err)
	return errs
}

// TestEntityTagsErrorClasses checks how a round classes real errors: a connection the server
// refused stops the round (not an entity's failure, whatever code the PgError inside says); a
// timeout, server- or client-side, is not attributable to an entity (bisected, then the round
// fails whole), not a connection failure; cancellation stops the round; a rejected value is the
// entity's.
func TestEntityTagsErrorClasses(t *testing.T) {
	want := map[string]struct{ stops, notAttributable bool }{
		"connect refused":                      {stops: true},
		"statement timeout":                    {notAttributable: true},
		"client deadline":                      {notAttributable: true},
		"client deadline before the statement": {notAttributable: true},
		"canceled":                             {stops: true},
		"bad value":                            {},
		"context.DeadlineExceeded":             {notAttributable: true},
		"context.Canceled":                     {stops: true},
		"08006 connection failure":             {stops: true},
		"57P01 admin shutdown":                 {stops: true},
		"40001 serialization failure":          {notAttributable: true},
		"23505 unique violation":               {},
	}
	errs := realErrors(t)
	errs["context.DeadlineExceeded"] = fmt.Errorf("x: %w", context.DeadlineExceeded)
	errs["context.Canceled"] = fmt.Errorf("x: %w", context.Canceled)
	errs["08006 connection failure"] = &pgconn.PgError{Code: "08006"}
	errs["57P01 admin shutdown"] = &pgconn.PgError{Code: "57P01"}
	errs["40001 serialization failure"] = &pgconn.PgError{Code: "40001"}
	errs["23505 unique violation"] = &pgconn.PgError{Code: "23505"}
	for name, w := range want {
		err := errs[name]
		if err == nil {
			t.Fatalf("%s: no error produced", name)
		}
		if got := stopsRound(err); got != w.stops {
			t.Errorf("%s (%v): stopsRound %v, want %v", name, err, got, w.stops)
		}
		if !w.stops {
			if got := notAttributable(err); got != w.notAttributable {
				t.Errorf("%s (%v): notAttributable %v, want %v", name, err, got, w.notAttributable)
			}
		}
	}
}
