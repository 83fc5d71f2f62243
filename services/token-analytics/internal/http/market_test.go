package http

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// marketWorld is a registry and price history whose figures are read off by hand (the clock is
// 2026-01-10 12:30): delta, with daily points back to 2025-07-01 and hourly ones over the last
// day; young, priced once an hour ago, with no market cap, volume or supply; quiet, in the
// registry without a price; tick, with a live quote newer than its history.
func marketWorld(t *testing.T) *env {
	e := newEnv(t, app.Native{})
	e.tokens(
		app.TokenUpdate{PricingID: "delta", Name: "Delta", Symbol: "DEL", TotalSupply: ptr(2e7), Deployments: []app.Deployment{
			{Chain: "ethereum", Address: beta, Decimals: 18}, {Chain: "ethereum", Address: alpha, Decimals: 18},
			{Chain: "base", Address: gamma, Decimals: 6}}},
		app.TokenUpdate{PricingID: "young", Name: "Young", Symbol: "YNG"},
		app.TokenUpdate{PricingID: "quiet", Name: "Quiet", Symbol: "QUI"},
		app.TokenUpdate{PricingID: "ethereum", Name: "Ether", Symbol: "ETH", Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}},
		app.TokenUpdate{PricingID: "tick", Name: "Tick", Symbol: "TIC"},
	)
	d := func(y int, m time.Month, day, h int) time.Time { return time.Date(y, m, day, h, 0, 0, 0, time.UTC) }
	daily := func(at time.Time, p float64) app.PricePoint {
		return app.PricePoint{PricingID: "delta", Granularity: app.Daily, Time: at, Price: p}
	}
	hourly := func(at time.Time, p float64) app.PricePoint {
		return app.PricePoint{PricingID: "delta", Granularity: app.Hourly, Time: at, Price: p}
	}
	last := hourly(d(2026, 1, 10, 12), 120)
	last.MarketCap, last.Volume = ptr(1.2e9), ptr(5e6)
	e.prices(daily(d(2025, 7, 1, 0), 50), daily(d(2025, 12, 1, 0), 80), daily(d(2026, 1, 3, 0), 90),
		daily(d(2026, 1, 9, 0), 100), hourly(d(2026, 1, 9, 12), 104), hourly(d(2026, 1, 9, 18), 130),
		daily(d(2026, 1, 10, 0), 110), hourly(d(2026, 1, 10, 0), 111), hourly(d(2026, 1, 10, 6), 95), last)
	e.prices(app.PricePoint{PricingID: "young", Granularity: app.Hourly, Time: d(2026, 1, 10, 11), Price: 2})
	e.prices(app.PricePoint{PricingID: "tick", Granularity: app.Daily, Time: d(2026, 1, 9, 0), Price: 7})
	e.prices(app.PricePoint{PricingID: "tick", Granularity: app.Tick, Time: now.Add(-10 * time.Minute), Price: 9})
	return e
}

// GET /token/market/{id}: the quote, the prices in force 24 h, 7, 30 and 180 days ago, the 24 h
// high and low over the price in force 24 h ago, the points since and the quote, the all-time
// extremes of the stored history, supplies, market cap and FDV; what a token lacks is 0 where
// the shape requires a number and null where it allows one.
func TestTokenMarketData(t *testing.T) {
	e := marketWorld(t)
	// 24 h ago (2026-01-09 12:30) the hourly 104 was in force; 7 days ago 2026-01-03's 90, 30
	// days ago 2025-12-01's 80, 180 days ago (2025-07-14) 2025-07-01's 50. Since then: 130 at
	// 18:00 and 95 at 06:00. Circulating supply = market cap / price; FDV = price × total supply.
	e.expect("/token/market/delta", 200, `{"price":120,"totalVolume":5e6,"price24hAgo":104,"maxPrice24h":130,"minPrice24h":95,
		"circulatingSupply":1e7,"totalSupply":2e7,"price7dAgo":90,"price30dAgo":80,"price180dAgo":50,
		"allTimeHigh":130,"allTimeLow":50,"marketCap":1.2e9,"fullyDilutedValue":2.4e9}`)
	e.expect("/token/market/young", 200, `{"price":2,"totalVolume":0,"price24hAgo":0,"maxPrice24h":2,"minPrice24h":2,
		"circulatingSupply":null,"totalSupply":null,"price7dAgo":0,"price30dAgo":0,"price180dAgo":0,
		"allTimeHigh":2,"allTimeLow":2,"marketCap":null,"fullyDilutedValue":null}`)
	// The live quote (9) is the price, and widens the stored history's extremes (7).
	e.expect("/token/market/tick", 200, `{"price":9,"totalVolume":0,"price24hAgo":7,"maxPrice24h":9,"minPrice24h":7,
		"circulatingSupply":null,"totalSupply":null,"price7dAgo":0,"price30dAgo":0,"price180dAgo":0,
		"allTimeHigh":9,"allTimeLow":7,"marketCap":null,"fullyDilutedValue":null}`)
	e.expect("/token/market/quiet", 404, `{"error":"token quiet has no price (not found)"}`)
	e.expect("/token/market/nosuch", 404, `{"error":"token nosuch: not found"}`)
	e.expect("/token/market/a%20b", 400, `{"error":"id: must be a pricing id such as ethereum"}`)
}

// GET /token/price_change/{id}?pastTime: the quote and the price in force at pastTime (the quote
// itself from its time on); pastTime is required, Unix milliseconds or RFC 3339, not in the
// future, and not before the token's first price.
func TestTokenPriceChange(t *testing.T) {
	e := marketWorld(t)
	ms := func(s string) string {
		tm, _ := time.Parse(time.RFC3339, s)
		return strconv.FormatInt(tm.UnixMilli(), 10)
	}
	for past, want := range map[string]float64{
		"2026-01-09T12:30:00Z":         104, // the hourly point of 12:00
		ms("2026-01-03T12:30:00Z"):     90,  // Unix milliseconds
		"2026-01-10T00:00:00Z":         111, // the hourly point wins over the daily one at the same time
		"2026-01-10T12:00:00Z":         120, // the quote's time
		"2026-01-10T14:30:00%2B02:00":  120, // now, with an offset
		"2025-07-01T00:00:00.000Z":     50,  // the first point
		"2025-11-30T23:59:59.999999Z":  50,
		"2025-12-01T00:00:00.0000001Z": 80,
	} {
		e.expect("/token/price_change/delta?pastTime="+past, 200, fmt.Sprintf(`{"pricingID":"delta","currentPrice":120,"historicalPrice":%v}`, want))
	}
	// A live quote is in force from its time on; before it, the newest stored point.
	e.expect("/token/price_change/tick?pastTime="+url.QueryEscape(now.Add(-5*time.Minute).Format(time.RFC3339)), 200,
		`{"pricingID":"tick","currentPrice":9,"historicalPrice":9}`)
	e.expect("/token/price_change/tick?pastTime="+url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339)), 200,
		`{"pricingID":"tick","currentPrice":9,"historicalPrice":7}`)
	for query, want := range map[string]string{
		"":                               "pastTime: is required: Unix milliseconds or RFC 3339, such as 2024-01-01T00:00:00Z",
		"?pastTime=":                     "pastTime: is required: Unix milliseconds or RFC 3339, such as 2024-01-01T00:00:00Z",
		"?pastTime=yesterday":            `pastTime: time "yesterday" must be Unix milliseconds or RFC 3339`,
		"?pastTime=2026-01-10":           `pastTime: time "2026-01-10" must be Unix milliseconds or RFC 3339`,
		"?pastTime=-1":                   "pastTime: time -1 is out of range (0 to 253402300799999 Unix milliseconds)",
		"?pastTime=2026-01-10T12:30:01Z": "pastTime: 2026-01-10T12:30:01Z is in the future",
		"?pastTime=1&pastTime=2":         "pastTime: given 2 times; give it once",
		"?pastTime=2025-06-30T23:59:59Z": "pastTime: 2025-06-30T23:59:59Z is before the first stored price of delta, at 2025-07-01T00:00:00Z (no price in force then)",
		"?pastTime=" + ms("1970-01-01T00:00:00Z"): "pastTime: 1970-01-01T00:00:00Z is before the first stored price of delta, at 2025-07-01T00:00:00Z (no price in force then)",
	} {
		e.expect("/token/price_change/delta"+query, 400, fmt.Sprintf(`{"error":%q}`, want))
	}
	e.expect("/token/price_change/young?pastTime=2026-01-10T10:00:00Z", 400,
		`{"error":"pastTime: 2026-01-10T10:00:00Z is before the first stored price of young, at 2026-01-10T11:00:00Z (no price in force then)"}`)
	e.expect("/token/price_change/tick?pastTime=2026-01-01T00:00:00Z", 400,
		`{"error":"pastTime: 2026-01-01T00:00:00Z is before the first stored price of tick, at 2026-01-09T00:00:00Z (no price in force then)"}`)
	e.expect("/token/price_change/quiet?pastTime=2026-01-01T00:00:00Z", 404, `{"error":"token quiet has no price (not found)"}`)
	e.expect("/token/price_change/nosuch?pastTime=2026-01-01T00:00:00Z", 404, `{"error":"token nosuch: not found"}`)
}

// GET /token/price/history/{id} and /{chain}/{address}: with daily=true the daily points of the
// whole history; otherwise the last 30 days at the finest granularity stored at each time (the
// hourly point of 2026-01-10 00:00, 111, hides the daily one, 110).
func TestTokenPriceHistory(t *testing.T) {
	e := marketWorld(t)
	q := func(at string, usd float64) string {
		return fmt.Sprintf(`{"time":%q,"usd":%v,"volume24h":0,"marketCap":0}`, at, usd)
	}
	recent := `[` + q("2026-01-03T00:00:00Z", 90) + `,` + q("2026-01-09T00:00:00Z", 100) + `,` + q("2026-01-09T12:00:00Z", 104) + `,` +
		q("2026-01-09T18:00:00Z", 130) + `,` + q("2026-01-10T00:00:00Z", 111) + `,` + q("2026-01-10T06:00:00Z", 95) + `,` +
		`{"time":"2026-01-10T12:00:00Z","usd":120,"volume24h":5e6,"marketCap":1.2e9}]`
	daily := `[` + q("2025-07-01T00:00:00Z", 50) + `,` + q("2025-12-01T00:00:00Z", 80) + `,` + q("2026-01-03T00:00:00Z", 90) + `,` +
		q("2026-01-09T00:00:00Z", 100) + `,` + q("2026-01-10T00:00:00Z", 110) + `]`
	for path, want := range map[string]string{
		"/token/price/history/delta":                                               recent,
		"/token/price/history/delta?daily=false":                                   recent,
		"/token/price/history/delta?daily=0&x=1":                                   recent,
		"/token/price/history/delta?daily=true":                                    daily,
		"/token/price/history/delta?daily=TRUE":                                    daily,
		"/token/price/history/ethereum/" + alpha + "?daily=1":                      daily,
		"/token/price/history/base/" + gamma:                                       recent,
		"/token/price/history/young?daily=true":                                    `[]`,
		"/token/price/history/young":                                               `[` + q("2026-01-10T11:00:00Z", 2) + `]`,
		"/token/price/history/quiet":                                               `[]`,
		"/token/price/history/tick":                                                `[` + q("2026-01-09T00:00:00Z", 7) + `]`,
		"/token/price/history/delta?daily=maybe":                                   `{"error":"daily: must be true or false, got \"maybe\""}`,
		"/token/price/history/mars/" + alpha:                                       `{"error":"chain: unknown chain \"mars\""}`,
		"/token/price/history/nosuch":                                              `{"error":"token nosuch: not found"}`,
		"/token/price/history/ethereum/0x00000000000000000000000000000000000000ff": `{"error":"token ethereum/0x00000000000000000000000000000000000000ff: not found"}`,
		"/token/price/history/ethereum/0xnothex":                                   `{"error":"token ethereum/0xnothex: address is not valid on ethereum: not found"}`,
	} {
		status := 200
		switch {
		case want[0] == '{' && (path == "/token/price/history/delta?daily=maybe" || path == "/token/price/history/mars/"+alpha):
			status = 400
		case want[0] == '{':
			status = 404
		}
		e.expect(path, status, want)
	}
}

// GET /token/addresses/{id}: chain → contract of each deployment, null for a native coin; of two
// contracts on one chain the first by address.
func TestTokenAddresses(t *testing.T) {
	e := marketWorld(t)
	e.expect("/token/addresses/delta", 200, `{"ethereum":"`+alpha+`","base":"`+gamma+`"}`)
	e.expect("/token/addresses/ethereum", 200, `{"ethereum":null}`)
	e.expect("/token/addresses/quiet", 200, `{}`)
	e.expect("/token/addresses/nosuch", 404, `{"error":"token nosuch: not found"}`)
	e.expect("/token/addresses/a%09b", 400, `{"error":"id: must be a pricing id such as ethereum"}`)
}
