package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// A key no entity holds keeps its current day only in its current row. When a write through the
// full path (held keys, reorg rebuilds) moves that row to a later day, the day it leaves keeps
// its snapshot: the history, the entity's rows and a relabel all see it.
func TestClosedDaySurvivesHeldPathAndRelabel(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	x := &store.Entity{ID: "x", Name: "X", Type: "cex"}
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "5")}))
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: x, Version: 1}}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 20, day0.Add(24*time.Hour), "7")}))
	for _, c := range []struct{ what, got, want string }{
		{"a1 on day 1", snapshot(t, s, a1, "", "2026-03-01"), "5"},
		{"a1 on day 2", snapshot(t, s, a1, "", "2026-03-02"), "7"},
		{"x on day 1", entityAt(t, s, "x", "2026-03-01"), "5"},
		{"x on day 2", entityAt(t, s, "x", "2026-03-02"), "7"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	// Block 20 orphaned: the key falls back on day 1's reading.
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(20)}, nil))
	for _, c := range []struct{ what, got, want string }{
		{"after reorg: a1 on day 1", snapshot(t, s, a1, "", "2026-03-01"), "5"},
		{"after reorg: a1 on day 2", snapshot(t, s, a1, "", "2026-03-02"), "5"},
		{"after reorg: x on day 1", entityAt(t, s, "x", "2026-03-01"), "5"},
		{"after reorg: x on day 2", entityAt(t, s, "x", "2026-03-02"), "5"},
		{"after reorg: current", current(t, s, a1, ""), "5"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	must(s.ApplyReorg(ctx, "ethereum", 0, nil, []string{hashOf(20)}))
	// A relabel out of x takes all of a1 with it.
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Tombstone: true, Version: 2}}))
	for _, day := range []string{"2026-03-01", "2026-03-02"} {
		if got := entityAt(t, s, "x", day); got != "0" {
			t.Errorf("x on %s after the tombstone = %s, want 0", day, got)
		}
	}
	if got := snapshot(t, s, a1, "", "2026-03-01"); got != "5" {
		t.Errorf("a1 on day 1 after the tombstone = %s, want 5", got)
	}
}

// A block orphaned before its observation arrives, then canonical again: the restore moves the
// current row to the block's later day and the earlier day keeps its snapshot.
func TestClosedDaySurvivesRestore(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "5")}))
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(20)}, nil))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 20, day0.Add(24*time.Hour), "7")}))
	if got := current(t, s, a1, ""); got != "5" {
		t.Fatalf("void observation applied: current = %s", got)
	}
	must(s.ApplyReorg(ctx, "ethereum", 0, nil, []string{hashOf(20)}))
	for _, c := range []struct{ what, got, want string }{
		{"current", current(t, s, a1, ""), "7"},
		{"a1 on day 1", snapshot(t, s, a1, "", "2026-03-01"), "5"},
		{"a1 on day 2", snapshot(t, s, a1, "", "2026-03-02"), "7"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
}

// A reorg of a block whose observation waits past the applier's mark rebuilds the key from the
// surviving observations, the waiting ones included: the day the current row leaves keeps its
// snapshot, and applying the waiting observations afterwards changes no figure.
func TestClosedDaySurvivesReorgOfWaitingBlock(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "5"), obs(a2, "", 10, day0, "3")}))
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	day1 := day0.Add(24 * time.Hour)
	if err := s.AppendObservations(ctx, []store.Observation{obs(a1, "", 20, day1, "7"), obs(a2, "", 20, day1, "8"),
		obs(a1, "", 30, day1.Add(time.Hour), "9"), obs(a2, "", 30, day1.Add(time.Hour), "4")}); err != nil {
		t.Fatal(err)
	}
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(20)}, nil))
	check := func(when string) {
		t.Helper()
		for _, c := range []struct{ what, got, want string }{
			{"a1 on day 1", snapshot(t, s, a1, "", "2026-03-01"), "5"},
			{"a1 on day 2", snapshot(t, s, a1, "", "2026-03-02"), "9"},
			{"a2 on day 1", snapshot(t, s, a2, "", "2026-03-01"), "3"},
			{"a2 on day 2", snapshot(t, s, a2, "", "2026-03-02"), "4"},
			{"x on day 1", entityAt(t, s, "x", "2026-03-01"), "3"},
			{"x on day 2", entityAt(t, s, "x", "2026-03-02"), "4"},
			{"x current", state(t, s, `SELECT balance::text FROM balances.entity_current WHERE entity_id='x'`), "4"},
			{"a1 current", current(t, s, a1, ""), "9"},
			{"supply", state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=''`), "13"},
		} {
			if c.got != c.want {
				t.Errorf("%s: %s = %s, want %s", when, c.what, c.got, c.want)
			}
		}
	}
	check("after the reorg")
	if n := drain(t, s, 100); n != 2 { // blocks 30; blocks 20 are void
		t.Fatalf("applied non-void observations = %d, want 2", n)
	}
	check("after applying the waiting observations")
}
