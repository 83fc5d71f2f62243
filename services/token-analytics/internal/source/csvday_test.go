package source

import (
	"context"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// A CoinGecko export is daily: a row snapped late (00:05, 23:29) is its day's point, and of two
// rows of one day the earliest counts.
func TestPriceCSVRowsBelongToTheirDay(t *testing.T) {
	in := "snapped_at,price,market_cap,total_volume\n" +
		"2018-02-07 00:00:00 UTC,785,0,0\n" +
		"2018-02-08 00:05:23 UTC,751,7e10,2e9\n" +
		"2018-02-09 14:00:00 UTC,820,0,0\n" +
		"2018-02-09 00:00:00 UTC,807,0,0\n" +
		"2017-06-06 23:29:55 UTC,2903,0,0\n"
	ps, err := ParsePriceCSV(strings.NewReader(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	day := func(m time.Month, d, y int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	mc, vol := 7e10, 2e9
	want := []app.PricePoint{
		{PricingID: "x", Granularity: app.Daily, Time: day(2, 7, 2018), Price: 785},
		{PricingID: "x", Granularity: app.Daily, Time: day(2, 8, 2018), Price: 751, MarketCap: &mc, Volume: &vol},
		{PricingID: "x", Granularity: app.Daily, Time: day(2, 9, 2018), Price: 807},
		{PricingID: "x", Granularity: app.Daily, Time: day(6, 6, 2017), Price: 2903},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("got %+v\nwant %+v", ps, want)
	}
}

// On ETH's real export (it has a row at 2018-02-08 00:05:23, 751.887...), the price in force
// and the 24 h-ago price are the newest daily point at or before the time, not that row.
func TestPriceInForceOnRealETHCSV(t *testing.T) {
	f, err := os.Open(sharedtest.Path(t, "data/prices/Smialku__eth-usd-max.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := ParsePriceCSV(f, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := store.New(pgtest.Pool(t))
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH",
		Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddPrices(ctx, ps); err != nil {
		t.Fatal(err)
	}
	for at, want := range map[string]float64{
		"2018-02-08T12:00:00Z": 751.8878893661607,  // the row of 2018-02-08 00:05:23
		"2018-02-09T23:00:00Z": 807.8227505154956,  // 2018-02-09's, not the 00:05 row
		"2025-01-14T12:00:00Z": 3134.5520394596483, // the file's last day
	} {
		tm, _ := time.Parse(time.RFC3339, at)
		if got, ok, err := st.PriceInForce(ctx, "ethereum", tm); err != nil || !ok || got != want {
			t.Errorf("price in force at %s: %v (%v, %v), want %v", at, got, ok, err, want)
		}
	}
	svc := app.New(st, app.Options{Now: func() time.Time { return time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC) }})
	tt, err := svc.TrendingToken(ctx, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	// The CSV's last rows: 2025-01-13 ...,3264.07...; 2025-01-14 00:00:00 UTC,3134.5520394596483,
	// 377643507549.0125,41743898872.017.
	if val(tt.Price) != 3134.5520394596483 || val(tt.Price24hAgo) != 3134.5520394596483 || val(tt.Volume24h) != 41743898872.017 {
		t.Errorf("price %v, 24h ago %v, volume %v; want 3134.5520394596483 twice and 41743898872.017", val(tt.Price), val(tt.Price24hAgo), val(tt.Volume24h))
	}
	if c := tt.CirculatingSupply; c == nil || *c != 377643507549.0125/3134.5520394596483 {
		t.Errorf("circulating supply %v, want market cap over price", c)
	}
	if val(tt.AllTimeHigh) < 4000 || val(tt.AllTimeLow) > 1 {
		t.Errorf("extremes %v and %v are not ETH's history's", val(tt.AllTimeHigh), val(tt.AllTimeLow))
	}
	svc = app.New(st, app.Options{Now: func() time.Time { return time.Date(2025, 1, 14, 12, 0, 0, 0, time.UTC) }})
	if tt, err = svc.TrendingToken(ctx, "ethereum"); err != nil || val(tt.Price24hAgo) != 3264.070968533687 {
		t.Errorf("24h ago on 2025-01-14 12:00: %v (%v), want 2025-01-13's 3264.070968533687", val(tt.Price24hAgo), err)
	}
}

// val is *p, or NaN (equal to nothing) when p is nil.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
