package store_test

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// Swaps pages sorted by value (|amount0| in token units) over the windows of
// TestSortedSwapPagesOverMonthEdges must be exactly the brute-force page: many swaps share a
// value (and a sale ties a purchase of the same size), so the order rests on chain and id, in
// the sort's direction; token0's decimals differ, so a larger raw amount is not always the
// larger value.
func TestSwapPagesByValue(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool)
	rng := rand.New(rand.NewPCG(7, 8))
	addrs := []string{"0x00000000000000000000000000000000000000c1", "0x00000000000000000000000000000000000000c2", "0x00000000000000000000000000000000000000c3"}
	type row struct {
		r     store.SwapRow
		value *big.Rat
	}
	var all []row
	var rows []store.SwapRow
	for i := 0; i < 300; i++ {
		at := nearMonthEdges(rng, i)
		h := fmt.Sprintf("0x%064x", i+1)
		dec := []int32{6, 18, 8}[i%3]
		units := int64(rng.IntN(12)) // ties on purpose
		amt := new(big.Int).Mul(big.NewInt(units), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil))
		if rng.IntN(2) == 0 {
			amt.Neg(amt)
		}
		r := store.SwapRow{Chain: []string{"ethereum", "base"}[i%2], ID: h + "_1", TxHash: h, BlockHash: fmt.Sprintf("0x%063x%d", i, 3),
			BlockNumber: int64(i), BlockTime: at.Truncate(time.Second), LogIndex: 1, Contract: addrs[2], Sender: addrs[i%2], Receiver: addrs[(i+1)%2],
			Token0ID: "t", Token0Symbol: "T", Token0Decimals: dec, Amount0: amt,
			Token1ID: "usd-coin", Token1Symbol: "USDC", Token1Decimals: 6, Amount1: big.NewInt(int64(i + 1)), Valid: true, Protocol: "uniswap_v2"}
		rows = append(rows, r)
		all = append(all, row{r, big.NewRat(units, 1)})
	}
	if _, err := st.WriteSwaps(ctx, rows); err != nil {
		t.Fatal(err)
	}
	for wi, w := range monthEdgeWindows {
		for _, dir := range []string{"desc", "asc"} {
			for _, base := range []string{"", addrs[0]} {
				var want []row
				for _, x := range all {
					r := x.r
					if (!w.from.IsZero() && r.BlockTime.Before(w.from)) || (!w.to.IsZero() && r.BlockTime.After(w.to)) {
						continue
					}
					if base != "" && r.Sender != base && r.Receiver != base {
						continue
					}
					want = append(want, x)
				}
				slices.SortFunc(want, func(a, b row) int {
					c := cmp.Or(a.value.Cmp(b.value), cmp.Compare(a.r.Chain, b.r.Chain), cmp.Compare(a.r.ID, b.r.ID))
					if dir == "desc" {
						c = -c
					}
					return c
				})
				keys := make([][2]string, len(want))
				for i, x := range want {
					keys[i] = [2]string{x.r.Chain, x.r.ID}
				}
				checkSwapPages(t, st, fmt.Sprintf("window %d %s base %q", wi, dir, base), swapFilter(w.from, w.to, base), "value", dir, keys)
			}
		}
	}
}
