package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// The holders read equals the ranking of every current balance (ties by address), deep pages
// included, after the top holders sell and after a reorg takes the sales back.
func TestTopHoldersMatchCurrent(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	holder := func(i int) string { return fmt.Sprintf("0x%040x", 0x5000+i) }
	var batch []store.Observation
	for i := 0; i < 3000; i++ {
		batch = append(batch, obs(holder(i), tok, int64(100+i%7), day0, fmt.Sprint((i*7919)%1000+1)))
	}
	must(s.WriteObservations(ctx, batch))
	check := func(when string) { checkHolders(t, s, when) }
	check("3,000 holders")
	// The 1,500 largest sell down to 1 at block 200.
	var sells []store.Observation
	for i := 0; i < 3000; i++ {
		if (i*7919)%1000+1 > 500 {
			sells = append(sells, obs(holder(i), tok, 200, day0.Add(time.Hour), "1"))
		}
	}
	must(s.WriteObservations(ctx, sells))
	check("after the top sold")
	// Block 200 is orphaned: the sales are taken back.
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(200)}, nil))
	check("after the reorg")
}

// checkHolders compares pages of the holders read with the ranking of every current balance.
func checkHolders(t *testing.T, s *store.Store, when string) {
	t.Helper()
	ctx := context.Background()
	for _, page := range [][2]int{{100, 0}, {100, 900}, {1, 999}} {
		text := func(rs []store.Ranked) string {
			var gs []string
			for _, r := range rs {
				gs = append(gs, r.ID+"="+r.Balance.String())
			}
			return strings.Join(gs, ",")
		}
		hp := must(s.HolderPages(ctx, store.HolderQuery{Keys: [][2]string{{"ethereum", tok}}, Limit: page[0], Offset: page[1]}))
		want := state(t, s, `SELECT coalesce(string_agg(address || '=' || balance::text, ',' ORDER BY balance DESC, address), '') FROM (
			SELECT address, balance FROM balances.current WHERE chain = 'ethereum' AND token = $1 AND balance > 0
			ORDER BY balance DESC, address LIMIT $2 OFFSET $3) x`, tok, page[0], page[1])
		if paged := text(hp.Pages[[2]string{"ethereum", tok}].Addresses); paged != want {
			t.Fatalf("%s: holder page %v differs from current's ranking\n got: %s\nwant: %s", when, page, paged, want)
		}
	}
}

// With more holders than the top keeps, the top is trimmed above a floor; when the largest sell
// below it the top is refilled from current, and a reorg taking the sales back lifts them in
// again: every page 1,000 deep equals current's ranking throughout, through the applier too.
func TestTopHoldersTrimAndRefill(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	holder := func(i int) string { return fmt.Sprintf("0x%040x", 0x9000+i) }
	bal := func(i int) string { return fmt.Sprint((i*7919)%5000 + 1) }
	var batch []store.Observation
	for i := 0; i < 7000; i++ {
		batch = append(batch, obs(holder(i), tok, int64(100+i%7), day0, bal(i)))
	}
	if err := s.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}
	drain(t, s, 2500)
	checkHolders(t, s, "7,000 holders")
	if got := state(t, s, `SELECT (count(*) < 7000)::text FROM balances.top_holders`); got != "true" {
		t.Fatalf("top_holders not trimmed: holds all 7,000")
	}
	// All but 500 sell down to 1 at block 200: the top falls under 1,000 and is refilled.
	var sells []store.Observation
	for i := 0; i < 6500; i++ {
		sells = append(sells, obs(holder(i), tok, 200, day0.Add(time.Hour), "1"))
	}
	must(s.WriteObservations(ctx, sells))
	checkHolders(t, s, "after the sales")
	// One holder leaves entirely (a reorg orphans its only observation's block).
	must(s.WriteObservations(ctx, []store.Observation{obs(holder(7000), tok, 300, day0.Add(2*time.Hour), "999999")}))
	checkHolders(t, s, "after a new largest holder")
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(300)}, nil))
	checkHolders(t, s, "after its block is orphaned")
	// Block 200 is orphaned: the sales are taken back.
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(200)}, nil))
	checkHolders(t, s, "after the sales are taken back")
}
