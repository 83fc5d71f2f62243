package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// drain applies the appended observations until none waits and returns how many non-void ones
// it applied.
func drain(t *testing.T, s *store.Store, limit int) int {
	t.Helper()
	fresh := 0
	for {
		taken, n, err := s.ApplyPending(context.Background(), limit)
		if err != nil {
			t.Fatal(err)
		}
		fresh += n
		if taken == 0 {
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
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(31)}, nil))
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
	must(s.ApplyReorg(ctx, "ethereum", 0, nil, []string{hashOf(31)}))
	if got := current(t, s, a2, ""); got != "9" {
		t.Fatalf("a2 after restore = %s, want 9", got)
	}
	if got := entityAt(t, s, "x", "2026-03-02"); got != "9" {
		t.Fatalf("entity x day 2 after restore = %s, want 9", got)
	}
}
