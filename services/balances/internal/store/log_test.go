package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// drain applies the appended observations until none waits and returns how many non-void ones
// it applied.
func drain(t *testing.T, s *store.Store, limit int) int {
	t.Helper()
	fresh := 0
	for {
		_, n, more, err := s.ApplyPending(context.Background(), limit)
		if err != nil {
			t.Fatal(err)
		}
		fresh += n
		if !more {
			return fresh
		}
	}
}

// Appended observations change nothing until applied; applied, they give what a direct write
// gives: a redelivered batch (appended twice) and a late older observation change no figure, the
// newest by block wins, an entity's rows move, and an observation of a block a reorg orphaned
// while it waited is void (the balance stays on the surviving one).
func TestAppendedObservationsApplyOnce(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	huge := "123456789012345678901234567890123456789"
	batch := []store.Observation{obs(a1, tok, 10, day0, "5"), obs(a1, tok, 20, day0.Add(time.Hour), huge),
		obs(a2, "", 30, day0, "7"), obs(a2, "", 31, day0.Add(25*time.Hour), "9")}
	for range 2 {
		if err := s.AppendObservations(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendObservations(ctx, []store.Observation{obs(a1, tok, 15, day0.Add(30*time.Minute), "6")}); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Backlog(ctx)); got != 9 {
		t.Fatalf("backlog = %d, want 9", got)
	}
	if got := state(t, s, `SELECT count(*)::text FROM balances.current`); got != "0" {
		t.Fatalf("current rows before the applier = %s, want 0", got)
	}
	// Block 31 is orphaned while its observation waits.
	must(s.ApplyReorg(ctx, "ethereum", []string{hashOf(31)}, nil))
	if n := drain(t, s, 2); n != 7 { // nine appended, two of them (block 31, twice) void
		t.Fatalf("applied non-void observations = %d, want 7", n)
	}
	if got := must(s.Backlog(ctx)); got != 0 {
		t.Fatalf("backlog after applying = %d", got)
	}
	for _, c := range []struct{ what, got, want string }{
		{"a1 current", current(t, s, a1, tok), huge},
		{"a1 snapshot", snapshot(t, s, a1, tok, "2026-03-01"), huge},
		{"supply", state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=$1`, tok), huge},
		{"a2 current (block 31 orphaned)", current(t, s, a2, ""), "7"},
		{"void observations", state(t, s, `SELECT count(*)::text FROM balances.observations o JOIN balances.orphaned_blocks b
			ON b.chain = o.chain AND b.hash = o.block_hash`), "2"},
		{"entity x day 2", entityAt(t, s, "x", "2026-03-02"), "7"},
		{"entity x current", state(t, s, `SELECT balance::text FROM balances.entity_current WHERE entity_id='x'`), "7"},
	} {
		if c.got != c.want {
			t.Fatalf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	// The block becoming canonical again brings the appended observation back.
	must(s.ApplyReorg(ctx, "ethereum", nil, []string{hashOf(31)}))
	if got := current(t, s, a2, ""); got != "9" {
		t.Fatalf("a2 after restore = %s, want 9", got)
	}
	if got := entityAt(t, s, "x", "2026-03-02"); got != "9" {
		t.Fatalf("entity x day 2 after restore = %s, want 9", got)
	}
}

// heldAppend appends n observations of addr as an appender does (the appenders' lock, the rows,
// the newest appended id) in a transaction it leaves open for the caller to commit or roll back.
func heldAppend(t *testing.T, s *store.Store, addr string, n int) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx := must(s.Pool().Begin(ctx))
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{`SELECT pg_advisory_xact_lock(hashtext('chainintel.balances.append'))`, nil},
		{`INSERT INTO balances.observations (chain, address, token, block_number, block_hash, block_time, balance)
		  SELECT 'ethereum', $1, '', 100 + i, '0x' || to_hex(100 + i), '2026-03-01 13:00Z', 1000 + i FROM generate_series(1, $2::int) i`, []any{addr, n}},
		{`UPDATE balances.append_head SET id = greatest(id, currval(pg_get_serial_sequence('balances.observations', 'id')))`, nil},
	} {
		if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// The applier reads id ranges: a rolled-back append leaves a gap in the ids, here wider than a
// round, which rounds pass (empty ones included) without skipping a later observation; an
// append still open holds the applier at the ids committed before it, and applies once it
// commits.
func TestApplyAcrossGapsAndOpenAppends(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	if err := s.AppendObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "5")}); err != nil {
		t.Fatal(err)
	}
	if err := heldAppend(t, s, a2, 7).Rollback(ctx); err != nil { // ids 2 to 8, gone
		t.Fatal(err)
	}
	if err := s.AppendObservations(ctx, []store.Observation{obs(a1, "", 11, day0, "6"), obs(a2, "", 11, day0, "7")}); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Backlog(ctx)); got != 10 { // three observations and the seven ids of the gap
		t.Fatalf("backlog = %d, want 10", got)
	}
	if n := drain(t, s, 3); n != 3 { // rounds of 3 ids: 1-3, 4-6 (empty), 7-9, 10
		t.Fatalf("applied = %d, want 3", n)
	}
	if a, b := current(t, s, a1, ""), current(t, s, a2, ""); a != "6" || b != "7" {
		t.Fatalf("current after the gap = %s, %s, want 6, 7", a, b)
	}
	open := heldAppend(t, s, a2, 2) // ids 11 and 12, not committed
	defer open.Rollback(ctx)        //nolint:errcheck
	if n := drain(t, s, 3); n != 0 {
		t.Fatalf("applied while the append is open = %d, want 0", n)
	}
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := drain(t, s, 3); n != 2 {
		t.Fatalf("applied after the commit = %d, want 2", n)
	}
	if got := current(t, s, a2, ""); got != "1002" {
		t.Fatalf("a2 current = %s, want 1002", got)
	}
	if got := must(s.Backlog(ctx)); got != 0 {
		t.Fatalf("backlog after applying = %d", got)
	}
}
