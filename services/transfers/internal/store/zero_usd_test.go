package store_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// A transfer priced at exactly zero USD (a zero amount of a priced token) is inside every
// usdLte range. An entity's count by its pair rows must count it like its listed rows do,
// though its pair row's USD sum (0) looks like that of an unpriced transfer.
func TestEntityCountWithZeroPricedTransfer(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool, withGroupMin(0), func(o *store.Options) { o.ListSetMax, o.LateralMax = 0, 0 })
	ent := &store.Entity{ID: "zz", Name: "ZZ", Type: "cex"}
	a1, a2 := "0x00000000000000000000000000000000000000e1", "0x00000000000000000000000000000000000000e2"
	now := time.Now()
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: a1, Entity: ent, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: a2, Entity: ent, Version: 1, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	usd := func(v float64) *float64 { return &v }
	var rows []store.TransferRow
	for i, u := range []*float64{usd(0), usd(3), nil, usd(9)} {
		h := "0x" + string(rune('a'+i)) + "000000000000000000000000000000000000000000000000000000000000000"
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: at.Add(time.Duration(i) * time.Hour), From: a1, To: "0x00000000000000000000000000000000000000f" + string(rune('1'+i)),
			TokenID: "ethereum", TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(int64(i)), UnitValue: float64(i), USD: u})
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	for _, lte := range []float64{5, 0} {
		f := store.TransferFilter{Base: store.AddrSet{Entities: []string{"zz"}, Size: 2}, HasBase: true, Flow: "all", USDLte: &lte}
		list, count, err := listTransfers(ctx, st, f, store.Page{SortKey: "time", SortDir: "desc", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		want := 2 // 0 and 3
		if lte == 0 {
			want = 1
		}
		if len(list) != want || count != want {
			t.Fatalf("usdLte=%v: %d listed, count %d, want %d", lte, len(list), count, want)
		}
	}
}
