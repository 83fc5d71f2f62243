package store_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// holdingsText renders holdings sorted, for comparing two reads.
func holdingsText(hs []store.Holding) string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s/%s=%s", h.Chain, h.Token, h.Balance))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// TestEntityTotalsEqualSummedAddresses checks the maintained entity totals that
// /balances/entity serves against the sum of the members' current balances, through new days,
// late and duplicated observations, a relabel and a reorg, with held and unheld keys in the same
// batches.
func TestEntityTotalsEqualSummedAddresses(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	const a3, unheld = "0x3333333333333333333333333333333333333333", "0x4444444444444444444444444444444444444444"
	e1, e2 := &store.Entity{ID: "e1", Name: "One", Type: "cex"}, &store.Entity{ID: "e2", Name: "Two", Type: "fund"}
	if _, err := s.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: a1, Entity: e1, Version: 1}, {ChainType: "evm", Address: a2, Entity: e1, Version: 1},
		{ChainType: "evm", Address: a3, Entity: e2, Version: 1},
	}); err != nil {
		t.Fatal(err)
	}
	chains := []string{"ethereum"}
	check := func(step string) {
		t.Helper()
		for _, e := range []string{"e1", "e2"} {
			kept, summed := must(s.EntityBalances(ctx, e, chains)), must(s.SummedEntityBalances(ctx, e, chains))
			if holdingsText(kept) != holdingsText(summed) {
				t.Fatalf("%s: %s totals %s, summed addresses %s", step, e, holdingsText(kept), holdingsText(summed))
			}
		}
	}
	day := func(d int) time.Time { return day0.AddDate(0, 0, d) }
	batches := [][]store.Observation{
		{obs(a1, "", 10, day(0), "100"), obs(a2, "", 10, day(0), "7"), obs(a3, tok, 10, day(0), "5"), obs(unheld, "", 10, day(0), "9")},
		{obs(a1, "", 20, day(1), "150"), obs(a1, "", 21, day(1), "140"), obs(a2, tok, 20, day(1), "300000000000000000000000"),
			obs(unheld, "", 20, day(1), "1")},
		// Late (a past day, an older block than the current) and a duplicate.
		{obs(a1, "", 15, day(0), "120"), obs(a2, "", 10, day(0), "7"), obs(a3, tok, 30, day(2), "0")},
	}
	for i, b := range batches {
		if _, err := s.WriteObservations(ctx, b); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("batch %d", i))
	}
	if _, err := s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: e2, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	check("relabel")
	if _, err := s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(21), hashOf(30)}, nil); err != nil {
		t.Fatal(err)
	}
	check("reorg")
	if got := holdingsText(must(s.EntityBalances(ctx, "e1", chains))); got != "[ethereum/=150]" {
		t.Fatalf("e1 after the reorg: %s, want [ethereum/=150]", got)
	}
}
