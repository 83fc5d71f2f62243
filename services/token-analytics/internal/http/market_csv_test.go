package http

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/source"
)

// csvDay is one day of a CoinGecko export, read here independently of the importer.
type csvDay struct {
	Time      time.Time `json:"time"`
	USD       float64   `json:"usd"`
	Volume24h float64   `json:"volume24h"`
	MarketCap float64   `json:"marketCap"`
}

// readCSVDays reads an export's rows as daily points (a row snapped late, 00:05, is its day's),
// oldest first.
func readCSVDays(t *testing.T, path string) []csvDay {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []csvDay
	for _, r := range rows[1:] {
		at, err := time.Parse("2006-01-02 15:04:05 MST", r[0])
		if err != nil {
			t.Fatal(err)
		}
		var d csvDay
		d.Time = at.UTC().Truncate(24 * time.Hour)
		for i, dst := range []*float64{&d.USD, &d.MarketCap, &d.Volume24h} {
			if r[i+1] == "" {
				continue // unknown, answered as 0 (ETH's 2017-04-02 has no market cap)
			}
			if *dst, err = strconv.ParseFloat(r[i+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(out); n > 0 && !out[n-1].Time.Before(d.Time) {
			t.Fatalf("%s: rows not one a day, oldest first, at %s", path, r[0])
		}
		out = append(out, d)
	}
	return out
}

// at is the router over e's store with the clock at clock.
func (e *env) at(clock time.Time) *env {
	set, _ := chains.NewSet(nil)
	g := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	Register(g, app.New(e.store, app.Options{Now: func() time.Time { return clock }}), set)
	return &env{t: e.t, h: g, store: e.store, ev: e.ev}
}

// The price routes over ETH's real CoinGecko export as the importer stores it: the daily
// history is the file's rows (2023-08-26's is 1653.4293196573105 at a market cap of
// 198709215180.56833 and a 24 h volume of 7030468153.067507), the recent window the last 30
// days' rows, and the market data and price change the file's figures.
func TestPriceRoutesOnRealETHCSV(t *testing.T) {
	path := sharedtest.Path(t, "data/prices/Smialku__eth-usd-max.csv")
	days := readCSVDays(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := source.ParsePriceCSV(f, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH", Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}})
	e.prices(ps...)
	body := func(ds []csvDay) string {
		b, err := json.Marshal(ds)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var aug26 csvDay
	for _, d := range days {
		if d.Time.Equal(time.Date(2023, 8, 26, 0, 0, 0, 0, time.UTC)) {
			aug26 = d
		}
	}
	if aug26.USD != 1653.4293196573105 || aug26.MarketCap != 198709215180.56833 || aug26.Volume24h != 7030468153.067507 {
		t.Fatalf("the file's 2023-08-26 row is %+v", aug26)
	}
	after := e.at(time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC))
	after.expect("/token/price/history/ethereum?daily=true", 200, body(days))
	// The file ends on 2025-01-14: the last 30 days hold its last 29 rows, daily ones (no
	// hourly history was imported).
	after.expect("/token/price/history/ethereum", 200, body(days[len(days)-29:]))
	in := e.at(time.Date(2023, 8, 27, 12, 0, 0, 0, time.UTC))
	var month []csvDay
	for _, d := range days {
		if d.Time.After(time.Date(2023, 7, 28, 12, 0, 0, 0, time.UTC)) && !d.Time.After(time.Date(2023, 8, 27, 12, 0, 0, 0, time.UTC)) {
			month = append(month, d)
		}
	}
	if len(month) != 30 || month[len(month)-2] != aug26 {
		t.Fatalf("30 days up to 2023-08-27 12:00: %d rows", len(month))
	}
	in.expect("/token/price/history/ethereum", 200, body(month))
	after.expect("/token/price_change/ethereum?pastTime=2023-08-26T12:00:00Z", 200,
		fmt.Sprintf(`{"pricingID":"ethereum","currentPrice":%v,"historicalPrice":1653.4293196573105}`, days[len(days)-1].USD))
	after.expect("/token/price_change/ethereum?pastTime=2015-08-06T23:59:59Z", 400,
		`{"error":"pastTime: 2015-08-06T23:59:59Z is before the first stored price of ethereum, at 2015-08-07T00:00:00Z (no price in force then)"}`)
	after.expect("/token/addresses/ethereum", 200, `{"ethereum":null}`)
	// Market data on 2025-01-15 12:00: the quote is the last row (2025-01-14); 24 h ago it was
	// in force too, so the 24 h high and low are it; 7, 30 and 180 days ago the rows of
	// 2025-01-08, 2024-12-16 and 2024-07-19; the all-time extremes the file's.
	last := days[len(days)-1]
	row := func(y int, m time.Month, d int) float64 {
		for _, x := range days {
			if x.Time.Equal(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)) {
				return x.USD
			}
		}
		t.Fatalf("no row of %d-%d-%d", y, m, d)
		return 0
	}
	high, low := last.USD, last.USD
	for _, d := range days {
		high, low = max(high, d.USD), min(low, d.USD)
	}
	after.expect("/token/market/ethereum", 200, fmt.Sprintf(`{"price":%[1]v,"totalVolume":%[2]v,"price24hAgo":%[1]v,
		"maxPrice24h":%[1]v,"minPrice24h":%[1]v,"circulatingSupply":%[3]v,"totalSupply":null,"price7dAgo":%[4]v,"price30dAgo":%[5]v,
		"price180dAgo":%[6]v,"allTimeHigh":%[7]v,"allTimeLow":%[8]v,"marketCap":%[9]v,"fullyDilutedValue":null}`,
		last.USD, last.Volume24h, last.MarketCap/last.USD, row(2025, 1, 8), row(2024, 12, 16), row(2024, 7, 19), high, low, last.MarketCap))
}
