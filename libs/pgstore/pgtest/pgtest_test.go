package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, nil)) }

// The package's database stops a statement left running after pgtest.StatementTimeout, on every
// connection of its pool, including those opened before the setting.
func TestStatementsTimeOut(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for range 4 {
		var v string
		if err := pool.QueryRow(ctx, `SELECT current_setting('statement_timeout')`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != pgtest.StatementTimeout {
			t.Fatalf("statement_timeout %q, want %q", v, pgtest.StatementTimeout)
		}
	}
}
