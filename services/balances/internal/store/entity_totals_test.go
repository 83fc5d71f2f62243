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

// An operator entity's balances of a past day counted back from its totals (EntityBalancesBack,
// /balances/entity's totalBalance24hAgo) include a token it held then and holds none of now:
// whether its member's readings of both days came in one round (the token's total is 0 from the
// start) or the member joined the entity holding 0 (the model-based test's minimal cases).
func TestEntityBackCountsTokensHeldNoMore(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	e1, e2 := &store.Entity{ID: "e1", Name: "One", Type: "cex"}, &store.Entity{ID: "e2", Name: "Two", Type: "cex"}
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: e1, Version: 1}}))
	const held = "4216643539867649861395045"
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 17, day0.AddDate(0, 0, 1), "0"), obs(a1, tok, 15, day0, held)}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a2, tok, 17, day0.AddDate(0, 0, 1), "0"), obs(a2, tok, 15, day0, held)}))
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: e2, Version: 1}}))
	chains := []string{"ethereum"}
	for _, e := range []string{"e1", "e2"} {
		for _, c := range []struct {
			day  time.Time
			want string
		}{{day0.AddDate(0, 0, -1), "[]"}, {day0, "[ethereum/" + tok + "=" + held + "]"}, {day0.AddDate(0, 0, 1), "[]"}} {
			at := holdingsText(must(s.EntityBalancesAt(ctx, e, chains, c.day)))
			back := holdingsText(must(s.EntityBalancesBack(ctx, e, chains, c.day)))
			if at != c.want || back != c.want {
				t.Errorf("%s on %s: summed up %s, counted back %s, want %s", e, c.day.Format("2006-01-02"), at, back, c.want)
			}
		}
	}
}
