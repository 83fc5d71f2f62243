package store_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// Pair rows of a live entity keep the live type group of both their addresses (migration 15), and
// a type on a pair row's other side is decided by them: from or to a type, or outside it, with
// and without a USD range (the pair rollup's plan and the entity's pair rows). All the transfers
// share one hour, so the hours the pair rollup names do not decide the answer on their own. A
// relabel that gives an untyped address a type moves its transfers across.
func TestTypeSidesOnPairRows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool, withGroupMin(0))
	addr := func(n int) string { return fmt.Sprintf("0x%040x", 0xa0+n) }
	x1, x2, i1, i2, u := addr(1), addr(2), addr(3), addr(4), addr(5)
	ex := &store.Entity{ID: "xx", Name: "XX", Type: "cex"}
	person := func(id string) *store.Entity { return &store.Entity{ID: id, Name: id, Type: "individual"} }
	now := time.Now()
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: x1, Entity: ex, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: x2, Entity: ex, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: i1, Entity: person("p1"), Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: i2, Entity: person("p2"), Version: 1, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 3, 10, 0, 0, 0, time.UTC)
	var rows []store.TransferRow
	for i, p := range [][2]string{{i1, x1}, {u, x1}, {x2, x1}, {x1, i2}, {x1, u}} {
		h := fmt.Sprintf("0x%064x", i+1)
		usd := float64(100 * (i + 1))
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: at.Add(time.Duration(i) * time.Minute), From: p[0], To: p[1], TokenID: "ethereum", TokenSymbol: "ETH",
			TokenDecimals: 18, Amount: big.NewInt(int64(i + 1)), UnitValue: float64(i + 1), USD: &usd})
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	name := map[string]string{}
	for i, r := range rows {
		name[r.ID] = fmt.Sprint("t", i+1)
	}
	set := func(s string) store.AddrFilter {
		not := strings.HasPrefix(s, "!")
		s = strings.TrimPrefix(s, "!")
		var a store.AddrSet
		if t, ok := strings.CutPrefix(s, "type:"); ok {
			a = store.AddrSet{Types: []string{t}, Size: 3}
		} else {
			a = store.AddrSet{Entities: []string{s}, Size: 2}
		}
		if not {
			return store.AddrFilter{NotIn: a}
		}
		return store.AddrFilter{In: a, Only: true}
	}
	check := func(when string, cases [][3]string) {
		t.Helper()
		for _, c := range cases {
			for _, usd := range []bool{false, true} {
				f := store.TransferFilter{Flow: "all", From: set(c[0]), To: set(c[1])}
				if usd {
					one := 1.0
					f.USDGte = &one
				}
				list, count, err := listTransfers(ctx, st, f, store.Page{SortKey: "time", SortDir: "asc", Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range list {
					got = append(got, name[r.ID])
				}
				if strings.Join(got, ",") != c[2] || count != len(got) {
					t.Errorf("%s: from=%s&to=%s (usdGte: %v): got %v (count %d), want %s", when, c[0], c[1], usd, got, count, c[2])
				}
			}
		}
	}
	check("as loaded", [][3]string{
		{"type:individual", "xx", "t1"},
		{"!type:individual", "xx", "t2,t3"},
		{"xx", "type:individual", "t4"},
		{"xx", "!type:individual", "t3,t5"},
		{"!type:cex", "xx", "t1,t2"},
	})
	// u becomes an individual: its transfers with the exchange cross over.
	if err := st.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: u, Entity: person("p3"), Version: 1, UpdatedAt: now}}, nil); err != nil {
		t.Fatal(err)
	}
	check("after a relabel", [][3]string{
		{"type:individual", "xx", "t1,t2"},
		{"!type:individual", "xx", "t3"},
		{"xx", "type:individual", "t4,t5"},
		{"xx", "!type:individual", "t3"},
	})
	var types []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(DISTINCT from_t || '>' || to_t ORDER BY from_t || '>' || to_t) FROM transfers.entity_pair_rows WHERE grp = 'e:xx'`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if want := []string{"t:cex>t:cex", "t:cex>t:individual", "t:individual>t:cex"}; !slices.Equal(types, want) {
		t.Fatalf("types on the exchange's pair rows: %v, want %v", types, want)
	}
}
