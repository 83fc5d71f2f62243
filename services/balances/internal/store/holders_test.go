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
	check := func(when string) {
		t.Helper()
		for _, page := range [][2]int{{100, 0}, {100, 900}, {1, 999}} {
			got := must(s.Holders(ctx, "ethereum", tok, page[0], page[1]))
			var gs []string
			for _, r := range got {
				gs = append(gs, r.ID+"="+r.Balance.String())
			}
			want := state(t, s, `SELECT string_agg(address || '=' || balance::text, ',' ORDER BY balance DESC, address) FROM (
				SELECT address, balance FROM balances.current WHERE chain = 'ethereum' AND token = $1 AND balance > 0
				ORDER BY balance DESC, address LIMIT $2 OFFSET $3) x`, tok, page[0], page[1])
			if strings.Join(gs, ",") != want {
				t.Fatalf("%s: holders %v differ from current's ranking\n got: %s\nwant: %s", when, page, strings.Join(gs, ","), want)
			}
		}
	}
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
	must(s.ApplyReorg(ctx, "ethereum", []string{hashOf(200)}, nil))
	check("after the reorg")
}
