package db_test

import (
	"context"
	"os"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, nil)) }

// QueryGeneric runs its statement under a generic plan in a transaction of its own, and leaves
// its connection as it found it, whether the statement succeeds or fails: plan_cache_mode is
// back to the server's setting and no transaction is left open (a pool of one connection, so
// every statement runs on the same one).
func TestQueryGenericLeavesTheConnectionClean(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := db.New(pool)
	mode := func(step string) {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		defer c.Release()
		if st := c.Conn().PgConn().TxStatus(); st != 'I' {
			t.Fatalf("%s: transaction status %q, want idle", step, st)
		}
		var m string
		if err := c.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&m); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if m != "auto" {
			t.Fatalf("%s: plan_cache_mode %q", step, m)
		}
	}
	for i := range 7 { // past the five custom plans PostgreSQL would otherwise try
		rows, err := s.QueryGeneric(ctx, `SELECT current_setting('plan_cache_mode'), x FROM generate_series(1, $1::int) x`, 3)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var m string
			var x int
			if err := rows.Scan(&m, &x); err != nil {
				t.Fatal(err)
			}
			if m != "force_generic_plan" {
				t.Fatalf("run %d: the statement ran with plan_cache_mode %q", i, m)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 3 {
			t.Fatalf("run %d: %d rows, %v", i, n, err)
		}
		mode("after a statement")
	}
	// Rows closed before they are all read.
	rows, err := s.QueryGeneric(ctx, `SELECT x FROM generate_series(1, $1::int) x`, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	rows.Close()
	mode("after rows closed early")
	// A statement failing as it runs.
	rows, err = s.QueryGeneric(ctx, `SELECT 1 / (x - $1::int) FROM generate_series(1, 3) x`, 2)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
	}
	if err == nil {
		t.Fatal("division by zero: no error")
	}
	mode("after a failed statement")
}
