package store_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// A value or USD bound equal to a transfer's own figure keeps it through an entity's pair rows,
// whose sums hold each figure rounded to 15 significant digits: 1266.899163343833 is stored
// 1266.89916334383, which the bound itself is not below. Rows of one transfer at a rounded
// bound are decided by the transfer, in the list and in the count.
func TestPairRowRangesAtExactFigures(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool, withGroupMin(0))
	addr := func(n int) string { return fmt.Sprintf("0x%040x", 0xb0+n) }
	x1, x2, u := addr(1), addr(2), addr(3)
	ex := &store.Entity{ID: "xx", Name: "XX", Type: "cex"}
	now := time.Now()
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: x1, Entity: ex, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: x2, Entity: ex, Version: 1, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 3, 10, 0, 0, 0, time.UTC)
	// t1 and t2 differ past the 15th digit (both round to 1266.89916334383); t3 is below them.
	usds := []float64{1266.899163343833, 1266.8991633438326, 1266.8991633438}
	values := []float64{0.1961437392915474, 0.19614373929154736, 0.19614373929}
	var rows []store.TransferRow
	for i := range usds {
		h := fmt.Sprintf("0x%064x", 0x100+i)
		usd := usds[i]
		from := u
		if i == 1 {
			from = x2 // another pair row: each holds one transfer
		}
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: at.Add(time.Duration(i) * time.Hour), From: from, To: x1, TokenID: "ethereum", TokenSymbol: "ETH",
			TokenDecimals: 18, Amount: big.NewInt(int64(i + 1)), UnitValue: values[i], USD: &usd})
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	name := map[string]string{}
	for i, r := range rows {
		name[r.ID] = fmt.Sprint("t", i+1)
	}
	p := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		what string
		f    store.TransferFilter
		want string
	}{
		{"usd = t1", store.TransferFilter{USDGte: p(usds[0]), USDLte: p(usds[0])}, "t1"},
		{"usd >= t1", store.TransferFilter{USDGte: p(usds[0])}, "t1"},
		{"usd >= t2", store.TransferFilter{USDGte: p(usds[1])}, "t1,t2"},
		{"usd <= t2", store.TransferFilter{USDLte: p(usds[1])}, "t2,t3"},
		{"usd = t2", store.TransferFilter{USDGte: p(usds[1]), USDLte: p(usds[1])}, "t2"},
		{"value = t1", store.TransferFilter{ValueGte: p(values[0]), ValueLte: p(values[0])}, "t1"},
		{"value <= t2", store.TransferFilter{ValueLte: p(values[1])}, "t2,t3"},
		{"value >= t3", store.TransferFilter{ValueGte: p(values[2])}, "t1,t2,t3"},
	} {
		f := c.f
		f.Flow = "all"
		f.To = store.AddrFilter{In: store.AddrSet{Entities: []string{"xx"}, Size: 2}, Only: true}
		list, count, err := listTransfers(ctx, st, f, store.Page{SortKey: "time", SortDir: "asc", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range list {
			got = append(got, name[r.ID])
		}
		if strings.Join(got, ",") != c.want || count != len(got) {
			t.Errorf("%s: got %v (count %d), want %s", c.what, got, count, c.want)
		}
	}
}
