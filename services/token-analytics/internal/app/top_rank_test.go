package app

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// referenceTop ranks rows the plain way: filter, sort every kept row, cut the page.
func referenceTop(rows []TokenWindows, q TopQuery, n int) TopResult {
	type ranked struct {
		row TopToken
		key float64
	}
	var rs []ranked
	for _, w := range rows {
		if w.Price == nil { // unpriced: never a row
			continue
		}
		if len(q.TokenIDs) > 0 && !slices.Contains(q.TokenIDs, w.PricingID) {
			continue
		}
		if !within(w.Current.Volume, q.MinVolume, q.MaxVolume) || !withinPtr(w.MarketCap, q.MinMarketCap, q.MaxMarketCap) {
			continue
		}
		key := Metric(q.OrderBy, w.Current, deref(w.Price))
		if q.Percent {
			key = change(key, Metric(q.OrderBy, scale(w.Previous, 1/float64(n)), deref(w.PrevPrice)))
		}
		rs = append(rs, ranked{TopToken{Token: TopTokenRef{ID: w.PricingID, Symbol: w.Symbol, MarketCap: w.MarketCap},
			Current: interval(w.Current, w.Price), Previous: interval(scale(w.Previous, 1/float64(n)), w.PrevPrice)}, key})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		an, bn := math.IsNaN(a.key), math.IsNaN(b.key)
		switch {
		case an && bn:
		case an:
			return 1
		case bn:
			return -1
		default:
			c := cmp.Compare(a.key, b.key)
			if q.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.row.Token.ID, b.row.Token.ID)
	})
	res := TopResult{Tokens: []TopToken{}, Total: len(rs)}
	for i := q.From; i < len(rs) && i < q.From+q.Size; i++ {
		res.Tokens = append(res.Tokens, rs[i].row)
	}
	return res
}

// TestTopRankingsEqualSorting answers random requests (every orderByAgg, both directions,
// percent, chains, pricing ids, bounds, pages) from a snapshot's kept rankings and compares each
// answer with filtering and sorting the same figures per request. The figures take few distinct
// values, so ties and undefined changes (previous 0) are frequent.
func TestTopRankingsEqualSorting(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(7, 7))
	flows := func() HourFlows {
		return HourFlows{Volume: float64(r.IntN(4)), CexIn: float64(r.IntN(3)), CexOut: float64(r.IntN(3)),
			DexIn: float64(r.IntN(3)), DexOut: float64(r.IntN(2)), Transfers: 1}
	}
	st := &windowsStore{}
	chainNames := []string{"base", "ethereum", "polygon"}
	for i := range 300 {
		var cs []ChainFlows
		for _, c := range chainNames {
			if r.IntN(2) == 0 {
				cs = append(cs, ChainFlows{Chain: c, Current: flows(), Previous: flows()})
			}
		}
		p := parts(fmt.Sprintf("token-%03d", i), cs...)
		if r.IntN(3) > 0 {
			price, prev, mc := float64(r.IntN(5)), float64(r.IntN(5)), float64(r.IntN(10))
			p.Price, p.PrevPrice, p.MarketCap = &price, &prev, &mc
		}
		st.parts = append(st.parts, p)
	}
	s := New(st, Options{Now: func() time.Time { return now }, TopRefresh: time.Hour})
	if err := s.RefreshTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	bound := func() *float64 {
		if r.IntN(3) > 0 {
			return nil
		}
		v := float64(r.IntN(6))
		return &v
	}
	for k := range 2000 {
		tf := []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}[r.IntN(3)]
		q := TopQuery{Timeframe: tf, OrderBy: OrderByAggs[r.IntN(len(OrderByAggs))], Desc: r.IntN(2) == 0,
			Percent: r.IntN(2) == 0, From: r.IntN(40), Size: 1 + r.IntN(60), ReferencePeriods: []int{0, 1}[r.IntN(2)],
			MinVolume: bound(), MaxVolume: bound(), MinMarketCap: bound(), MaxMarketCap: bound()}
		for _, c := range chainNames {
			if r.IntN(4) == 0 {
				q.Chains = append(q.Chains, c)
			}
		}
		if r.IntN(3) == 0 {
			for range 1 + r.IntN(50) {
				q.TokenIDs = append(q.TokenIDs, fmt.Sprintf("token-%03d", r.IntN(320)))
			}
		}
		n := q.ReferencePeriods
		if n == 0 {
			n = AutoReferencePeriods(tf)
		}
		snap := s.top[topKey{int64(tf), int64(n), now.Truncate(time.Hour).Add(time.Hour)}]
		rows := snap.all.rows
		if len(q.Chains) > 0 {
			rows = snap.narrow(q.Chains)
		}
		got, err := s.Top(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceTop(rows, q, n); !reflect.DeepEqual(got, want) {
			t.Fatalf("request %d %+v:\n got %+v\nwant %+v", k, q, got, want)
		}
	}
	if st.windowCalls != 0 {
		t.Fatalf("%d requests went to the store", st.windowCalls)
	}
}
