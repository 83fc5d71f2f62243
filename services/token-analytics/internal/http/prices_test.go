package http

import (
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// TestPriceInForceIsNewestOfAnyGranularity: the price in force at a time is the newest point at
// or before it whatever its granularity; an old hourly point (what a CSV row snapped at 00:05
// used to be stored as) does not win over yesterday's daily point. Trending, /token/top's
// previous price and the token's market data all read it.
func TestPriceInForceIsNewestOfAnyGranularity(t *testing.T) {
	e := newEnv(t, app.Native{})
	const delta = "0x00000000000000000000000000000000000000dd"
	e.tokens(app.TokenUpdate{PricingID: "delta", Name: "Delta", Symbol: "DEL",
		Deployments: []app.Deployment{{Chain: "ethereum", Address: delta, Decimals: 18}}})
	day := now.Truncate(24 * time.Hour) // 2026-01-10 00:00; now is 12:30
	e.prices(
		app.PricePoint{PricingID: "delta", Granularity: app.Hourly, Time: time.Date(2018, 2, 8, 0, 0, 0, 0, time.UTC), Price: 751.887},
		app.PricePoint{PricingID: "delta", Granularity: app.Daily, Time: day.Add(-48 * time.Hour), Price: 100, MarketCap: ptr(1e9), Volume: ptr(3e6)},
		app.PricePoint{PricingID: "delta", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 110, MarketCap: ptr(1.1e9), Volume: ptr(4e6)},
		app.PricePoint{PricingID: "delta", Granularity: app.Daily, Time: day, Price: 120, MarketCap: ptr(1.2e9), Volume: ptr(5e6)},
	)
	// In force 24 hours ago (2026-01-09 12:30): the daily point of 2026-01-09, 110. Without a
	// price API the 24 h volume is the newest point's, the extremes are the stored history's
	// and the circulating supply is the market cap over the price.
	e.expect("/token/trending/delta", 200, `{"name":"Delta","symbol":"DEL","pricingID":"delta","price":120,"price24hAgo":110,
		"volume24h":5e6,"allTimeHigh":751.887,"allTimeLow":100,"circulatingSupply":1e7}`)
	e.expect("/token/top?timeframe=24h&tokenIds=delta", 200, `{"tokens":[{"token":{"id":"delta","symbol":"DEL","marketCap":1.2e9},
		"current":{"price":120,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0},
		"previous":{"price":110,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	// A tokenIds entry the registry does not hold is a 404 naming it, not a silently shorter page.
	e.expect("/token/top?timeframe=24h&tokenIds=delta,nosuchtoken", 404, `{"error":"tokenIds: unknown token \"nosuchtoken\" (not found)"}`)
	e.expect("/token/top?timeframe=24h", 200, `{"tokens":[{"token":{"id":"delta","symbol":"DEL","marketCap":1.2e9},
		"current":{"price":120,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0},
		"previous":{"price":110,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	e.expect("/internal/tokens/delta", 200, `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL","price":120,"price24hAgo":110,
		"deployments":[{"chain":"ethereum","address":"`+delta+`","decimals":18}]}`)
}

// Without a price API (daily CSV points only), /networks/status' volume is the newest point's
// total_volume, as /networks/history shows it.
func TestNetworkStatusVolumeFromDailyPoints(t *testing.T) {
	e := newEnv(t, app.Native{})
	tip := now.Add(-10 * time.Minute)
	e.txs("ethereum", "0xa1", 100, tip, "10", 0)
	e.tokens(app.TokenUpdate{PricingID: "ethereum", Name: "Ether", Symbol: "ETH"})
	last := time.Date(2025, 1, 14, 0, 0, 0, 0, time.UTC)
	e.prices(app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: last.Add(-24 * time.Hour), Price: 3200, MarketCap: ptr(3.93e11), Volume: ptr(9.7e9)},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: last, Price: 3000, MarketCap: ptr(3.77e11), Volume: ptr(4.17e10)})
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	e.expect("/networks/status", 200, `{
		"ethereum":{"chain":"ethereum","active":true,"price":3000,"priceChange24h":-200,"priceChange24hPercent":-6.25,
			"volume":4.17e10,"marketCap":3.77e11,"tip":100,"tps":0,"transfers":0,"gasFee":10,"satFee":null,
			"asOf":{"fee":"`+ts(tip)+`","price":"`+ts(last)+`","tip":"`+ts(tip)+`","transfers":"`+ts(tip)+`"}}}`)
}
