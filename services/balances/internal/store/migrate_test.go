package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migration 00006 over a version 5 database: the log's pending rows (a redelivered applied
// observation, a duplicate pair, a redelivery of a void one) and a batch an old consumer is still
// appending while the migration runs all land past the mark; applied, they give the figures the
// log would have given, the void ones stay void and the token metadata is the newest by block.
func TestMigration6KeepsPendingAndInFlightObservations(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "balances_migrate", migrations.Schema, migrations.FS, 5)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if _, err := p.UpTo(ctx, 5); err != nil {
		t.Fatal(err)
	}
	// Version 5's applied state: a1's block 10 and the void block 11.
	exec(`INSERT INTO balances.observations (chain, address, token, block_number, block_hash, block_time, balance, void) VALUES
		('ethereum', $1, $2, 10, $3, $4, 5, false), ('ethereum', $1, $2, 11, $5, $4, 50, true)`, a1, tok, hashOf(10), day0, hashOf(11))
	exec(`INSERT INTO balances.orphaned_blocks VALUES ('ethereum', $1)`, hashOf(11))
	exec(`INSERT INTO balances.current (chain, address, token, block_number, block_hash, block_time, balance) VALUES ('ethereum', $1, $2, 10, $3, $4, 5)`,
		a1, tok, hashOf(10), day0)
	exec(`INSERT INTO balances.token_supply VALUES ('ethereum', $1, 5)`, tok)
	exec(`INSERT INTO balances.observed_tokens VALUES ('ethereum', $1, 'old', 'Old', 'OLD', 18)`, tok)
	logRow := `INSERT INTO balances.observation_log VALUES ('ethereum', $1, $2, $3, $4, $5, $6, '', '', $7, $8, $9, 18)`
	day1 := day0.Add(24 * time.Hour)
	for _, r := range []struct {
		addr, token string
		block       int64
		at          time.Time
		bal, name   string
	}{{a1, tok, 10, day0, "5", "Old"}, {a1, tok, 20, day1, "7", "New"}, {a1, tok, 20, day1, "7", "New"}, {a1, tok, 11, day0, "50", "Old"},
		{a2, "", 12, day0, "3", ""}} {
		id := ""
		if r.token != "" {
			id = "new"
		}
		exec(logRow, r.addr, r.token, r.block, hashOf(r.block), r.at, r.bal, id, r.name, "")
	}
	// An old consumer's COPY, not committed when the migration starts.
	old, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback(ctx) //nolint:errcheck
	if _, err := old.Exec(ctx, logRow, a1, tok, 25, hashOf(25), day1.Add(time.Hour), "8", "new", "Newest", "NEW"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.UpTo(ctx, 6); done <- err }()
	waitLocks(t, pool, 1, done)
	// An old consumer's next COPY, once the migration waits for the log: it must fail, so that
	// consumer commits no offset for it.
	late := make(chan error, 1)
	go func() { _, err := pool.Exec(ctx, logRow, a2, "", 14, hashOf(14), day1, "99", "", "", ""); late <- err }()
	waitLocks(t, pool, 2, done)
	if err := old.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-late; err == nil {
		t.Fatal("an append to the log after the migration started succeeded")
	}

	s := store.New(pool)
	if got := must(s.Backlog(ctx)); got != 6 {
		t.Fatalf("backlog after the migration = %d, want 6 (5 log rows and the in-flight one)", got)
	}
	if n := drain(t, s, 4); n != 5 { // the redelivered block 11 is void
		t.Fatalf("applied non-void observations = %d, want 5", n)
	}
	for _, c := range []struct{ what, got, want string }{
		{"a1 current (the in-flight append)", current(t, s, a1, tok), "8"},
		{"a1 on day 1", snapshot(t, s, a1, tok, "2026-03-01"), "5"},
		{"a1 on day 2", snapshot(t, s, a1, tok, "2026-03-02"), "8"},
		{"a2 current", current(t, s, a2, ""), "3"},
		{"token supply", state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=$1`, tok), "8"},
		{"native supply", state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=''`), "3"},
		{"void observations", state(t, s, `SELECT count(*)::text FROM balances.observations o JOIN balances.orphaned_blocks b
			ON b.chain = o.chain AND b.hash = o.block_hash`), "2"},
		{"token name (the in-flight append's)", state(t, s, `SELECT name FROM balances.observed_tokens WHERE token=$1`, tok), "Newest"},
		{"log table", state(t, s, `SELECT coalesce(to_regclass('balances.observation_log')::text, 'dropped')`), "dropped"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
}

// waitLocks waits until n sessions of the database wait for a lock; done reporting first (the
// migration ended without waiting) fails the test.
func waitLocks(t *testing.T, pool *pgxpool.Pool, n int, done <-chan error) {
	t.Helper()
	for waiting := 0; waiting < n; {
		select {
		case err := <-done:
			t.Fatalf("migration ran past an uncommitted append to the log: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
}

// Migration 00009 over a version 8 database: an entity whose rows of entity_change have no row of
// entity_current (a writer skipped it at 0) gets one at the sum of its changes, so its past is
// counted back again; existing rows stay as they are.
func TestMigration9AddsEntityCurrentRows(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "balances_migrate9", migrations.Schema, migrations.FS, 5)
	if _, err := p.UpTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	// x held tok on day 0 and sold it on day 1 (no entity_current row); its native row exists.
	if _, err := pool.Exec(ctx, `INSERT INTO balances.entity_change VALUES ('x', 'ethereum', $1, '2026-03-01', 9), ('x', 'ethereum', $1, '2026-03-02', -9),
		('x', 'ethereum', '', '2026-03-01', 4)`, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO balances.entity_current VALUES ('x', 'ethereum', '', 4)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	s := store.New(pool)
	if got := holdingsText(must(s.EntityBalancesBack(ctx, "x", []string{"ethereum"}, day0))); got != "[ethereum/"+tok+"=9 ethereum/=4]" {
		t.Fatalf("x on day 0 counted back: %s", got)
	}
	var rows string
	if err := pool.QueryRow(ctx, `SELECT string_agg(token || '=' || balance, ' ' ORDER BY token) FROM balances.entity_current`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != "=4 "+tok+"=0" {
		t.Fatalf("entity_current = %s", rows)
	}
}
