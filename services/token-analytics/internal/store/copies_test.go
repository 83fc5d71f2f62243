package store

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// TestConcurrentCopiesCountOnce has one writer store a copy of a natural id and decide it counts
// without committing, while a second writer stores the id's copy of another block: the second
// must wait for the first and then leave its copy uncounted, so the id is counted once, not once
// per writer.
func TestConcurrentCopiesCountOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.flows, market.orphaned_blocks, market.flow_hours,
		market.flow_days, market.flow_address_hours, market.flow_marks`); err != nil {
		t.Fatal(err)
	}
	st := New(pool)
	at := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	copyIn := func(block string) []app.Flow {
		return []app.Flow{{Chain: "ethereum", ID: "0xaa_1", ChainType: "evm", BlockHash: block, Time: at,
			Token: "0xt", From: "0xf", To: "0xe", Value: 1, USD: 10}}
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	chains, ids, cols := flowColumns(copyIn("0xb1"))
	for _, q := range []struct {
		sql  string
		args []any
	}{{sqlLockShared, nil}, {sqlFlowsChainLock, []any{chains}}, {sqlFlowsInsert, cols}, {sqlFlowsSettleBatch, []any{chains, ids}}} {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- st.ApplyFlows(ctx, copyIn("0xb2")) }()
	waitUntilBlocked(t, pool, done, "the second writer")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var counted, transfers int
	var block string
	if err := pool.QueryRow(ctx, `SELECT count(*), min(block) FROM market.flows WHERE counted`).Scan(&counted, &block); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(transfers), 0) FROM market.flow_hours`).Scan(&transfers); err != nil {
		t.Fatal(err)
	}
	if counted != 1 || block != "0xb1" || transfers != 1 {
		t.Fatalf("counted %d copies (first in %s), flow_hours has %d transfers; want 1 in 0xb1 and 1", counted, block, transfers)
	}
}

// waitUntilBlocked returns once another session of the test database waits on a lock, failing
// the test if done delivers first (the writer finished without waiting: what asks who).
func waitUntilBlocked(t *testing.T, pool *pgxpool.Pool, done <-chan error, who string) {
	t.Helper()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("%s finished while the first was open (%v)", who, err)
		default:
		}
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
