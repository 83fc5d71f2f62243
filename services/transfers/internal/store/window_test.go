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

var (
	feb = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	mar = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// monthEdgeWindows are windows around February's edges, each of a kind windowSegments splits
	// (or leaves whole).
	monthEdgeWindows = []struct{ from, to time.Time }{
		{feb.Add(-10 * 24 * time.Hour), feb},                      // ends at midnight on the 1st
		{feb.Add(-10 * 24 * time.Hour), feb.Add(5 * time.Hour)},   // ends hours into a month
		{feb.Add(-3 * time.Hour), feb.Add(10 * 24 * time.Hour)},   // starts hours before a month ends
		{feb.Add(-3 * time.Hour), mar.Add(2 * time.Hour)},         // both ends graze
		{feb.Add(-2 * time.Hour), feb.Add(3 * time.Hour)},         // short, across a boundary
		{feb.Add(-20 * 24 * time.Hour), mar.Add(-20 * time.Hour)}, // no grazing end
		{time.Time{}, feb.Add(30 * time.Minute)},                  // open start
		{mar.Add(-90 * time.Minute), time.Time{}},                 // open end
	}
)

// nearMonthEdges is the time of the i-th test row: around February's two month boundaries,
// densest within a day of them, one in ten anywhere in February.
func nearMonthEdges(rng *rand.Rand, i int) time.Time {
	switch {
	case i%10 == 0:
		return feb.Add(time.Duration(rng.IntN(28*24)) * time.Hour)
	case i%3 == 0:
		return mar.Add(time.Duration(rng.IntN(48*60)-24*60) * time.Minute)
	}
	return feb.Add(time.Duration(rng.IntN(48*60)-24*60) * time.Minute)
}

// Pages sorted by USD or value over windows that graze a month (its first or last hours), that
// are short, or that span months are read in segments (the grazed ends sorted, the rest walked
// by index); put together they must be exactly the brute-force page: same rows, same order,
// unknown USD last (descending) or first (ascending), ties by chain and id. Bases of one and of
// two addresses read their keys first by USD (keyFirstSQL): USD is drawn from 40 values, so a
// page's last key ties others, and its last may be unknown.
func TestSortedPagesOverMonthEdges(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool)
	rng := rand.New(rand.NewPCG(3, 4))
	addrs := []string{"0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000a2", "0x00000000000000000000000000000000000000a3"}
	var all []store.TransferRow
	for i := 0; i < 600; i++ {
		at := nearMonthEdges(rng, i)
		h := fmt.Sprintf("0x%064x", i+1)
		r := store.TransferRow{Chain: []string{"ethereum", "base"}[i%2], ID: h + "_0", TxHash: h, BlockHash: fmt.Sprintf("0x%063x%d", i, 1),
			BlockNumber: int64(i), BlockTime: at.Truncate(time.Second), From: addrs[i%3], To: addrs[(i+1)%3], TokenID: "ethereum",
			TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(int64(rng.IntN(50) + 1)), UnitValue: float64(rng.IntN(50) + 1)}
		if i%7 != 0 {
			u := float64(rng.IntN(40)) // ties on purpose
			r.USD = &u
		}
		all = append(all, r)
	}
	if _, err := st.WriteTransfers(ctx, all); err != nil {
		t.Fatal(err)
	}
	windows := monthEdgeWindows
	key := func(r store.TransferRow, k string) (float64, bool) {
		if k == "value" {
			return r.UnitValue, true
		}
		if r.USD == nil {
			return 0, false
		}
		return *r.USD, true
	}
	for wi, w := range windows {
		for _, k := range []string{"usd", "value"} {
			for _, dir := range []string{"desc", "asc"} {
				for _, base := range [][]string{nil, addrs[:1], addrs[:2]} {
					var want []store.TransferRow
					for _, r := range all {
						if (!w.from.IsZero() && r.BlockTime.Before(w.from)) || (!w.to.IsZero() && r.BlockTime.After(w.to)) {
							continue
						}
						if base != nil && !slices.Contains(base, r.From) && !slices.Contains(base, r.To) {
							continue
						}
						want = append(want, r)
					}
					slices.SortFunc(want, func(a, b store.TransferRow) int {
						va, oka := key(a, k)
						vb, okb := key(b, k)
						c := 0
						switch {
						case oka != okb && !oka:
							c = -1 // unknown sorts lowest
						case oka != okb:
							c = 1
						default:
							c = cmp.Compare(va, vb)
						}
						if c == 0 {
							c = cmp.Or(cmp.Compare(a.Chain, b.Chain), cmp.Compare(a.ID, b.ID))
						}
						if dir == "desc" {
							c = -c
						}
						return c
					})
					f := store.TransferFilter{TimeFrom: w.from, TimeTo: w.to}
					if base != nil {
						f.Base, f.HasBase, f.Flow = store.Addrs(base), true, "all"
					}
					for _, off := range []int{0, 7, 40} {
						got, _, err := listTransfers(ctx, st, f, store.Page{SortKey: k, SortDir: dir, Limit: 20, Offset: off})
						if err != nil {
							t.Fatal(err)
						}
						exp := want[min(off, len(want)):min(off+20, len(want))]
						if len(got) != len(exp) {
							t.Fatalf("window %d %s %s base %v offset %d: %d rows, want %d", wi, k, dir, base, off, len(got), len(exp))
						}
						for i := range got {
							if got[i].ID != exp[i].ID || got[i].Chain != exp[i].Chain {
								t.Fatalf("window %d %s %s base %v offset %d: row %d is %s, want %s", wi, k, dir, base, off, i, got[i].ID, exp[i].ID)
							}
						}
					}
				}
			}
		}
	}
}

// Swaps pages sorted by USD over the same kinds of windows are read in the same segments and
// must be exactly the brute-force page too.
func TestSortedSwapPagesOverMonthEdges(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool)
	rng := rand.New(rand.NewPCG(5, 6))
	addrs := []string{"0x00000000000000000000000000000000000000b1", "0x00000000000000000000000000000000000000b2", "0x00000000000000000000000000000000000000b3"}
	var all []store.SwapRow
	for i := 0; i < 400; i++ {
		at := nearMonthEdges(rng, i)
		h := fmt.Sprintf("0x%064x", i+1)
		r := store.SwapRow{Chain: []string{"ethereum", "base"}[i%2], ID: h + "_1", TxHash: h, BlockHash: fmt.Sprintf("0x%063x%d", i, 2),
			BlockNumber: int64(i), BlockTime: at.Truncate(time.Second), LogIndex: 1, Contract: addrs[2], Sender: addrs[i%2], Receiver: addrs[(i+1)%2],
			Token0ID: "ethereum", Token0Symbol: "ETH", Token0Decimals: 18, Amount0: big.NewInt(int64(i + 1)),
			Token1ID: "usd-coin", Token1Symbol: "USDC", Token1Decimals: 6, Amount1: big.NewInt(int64(-i - 1)), Valid: true, Protocol: "uniswap_v2"}
		if i%7 != 0 {
			u := float64(rng.IntN(40)) // ties on purpose
			r.USD = &u
		}
		all = append(all, r)
	}
	if _, err := st.WriteSwaps(ctx, all); err != nil {
		t.Fatal(err)
	}
	for wi, w := range monthEdgeWindows {
		for _, dir := range []string{"desc", "asc"} {
			for _, base := range []string{"", addrs[0]} {
				var want []store.SwapRow
				for _, r := range all {
					if (!w.from.IsZero() && r.BlockTime.Before(w.from)) || (!w.to.IsZero() && r.BlockTime.After(w.to)) {
						continue
					}
					if base != "" && r.Sender != base && r.Receiver != base {
						continue
					}
					want = append(want, r)
				}
				slices.SortFunc(want, func(a, b store.SwapRow) int {
					c := 0
					switch {
					case (a.USD == nil) != (b.USD == nil) && a.USD == nil:
						c = -1 // unknown sorts lowest
					case (a.USD == nil) != (b.USD == nil):
						c = 1
					case a.USD != nil:
						c = cmp.Compare(*a.USD, *b.USD)
					}
					if c == 0 {
						c = cmp.Or(cmp.Compare(a.Chain, b.Chain), cmp.Compare(a.ID, b.ID))
					}
					if dir == "desc" {
						c = -c
					}
					return c
				})
				keys := make([][2]string, len(want))
				for i, x := range want {
					keys[i] = [2]string{x.Chain, x.ID}
				}
				checkSwapPages(t, st, fmt.Sprintf("window %d %s base %q", wi, dir, base), swapFilter(w.from, w.to, base), "usd", dir, keys)
			}
		}
	}
}

// swapFilter is every swap in [from, to] (zero: unbounded), of base when it is not empty.
func swapFilter(from, to time.Time, base string) store.SwapFilter {
	f := store.SwapFilter{TimeFrom: from, TimeTo: to, Flow: "all"}
	if base != "" {
		f.Base, f.HasBase = store.Addrs([]string{base}), true
	}
	return f
}

// checkSwapPages reads pages of 20 at offsets 0, 7 and 40 sorted by sortKey and compares the
// count and each page's (chain, id) with want, the whole expected order.
func checkSwapPages(t *testing.T, st *store.Store, what string, f store.SwapFilter, sortKey, dir string, want [][2]string) {
	t.Helper()
	for _, off := range []int{0, 7, 40} {
		got, n, err := st.ListSwaps(context.Background(), f, store.Page{SortKey: sortKey, SortDir: dir, Limit: 20, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(want) {
			t.Fatalf("%s: count %d, want %d", what, n, len(want))
		}
		exp := want[min(off, len(want)):min(off+20, len(want))]
		if len(got) != len(exp) {
			t.Fatalf("%s offset %d: %d rows, want %d", what, off, len(got), len(exp))
		}
		for i := range got {
			if got[i].Chain != exp[i][0] || got[i].ID != exp[i][1] {
				t.Fatalf("%s offset %d: row %d is %s %s, want %s %s", what, off, i, got[i].Chain, got[i].ID, exp[i][0], exp[i][1])
			}
		}
	}
}
