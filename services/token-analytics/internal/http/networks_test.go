package http

import (
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// GET /networks/history/{chain}: the daily quotes of the chain's native coin over the last
// year, oldest first; hourly points and older days are not part of it; an unknown chain is a
// 400 naming the parameter.
func TestNetworkHistory(t *testing.T) {
	e := newEnv(t, app.Native{})
	day := now.UTC().Truncate(24 * time.Hour)
	e.prices(
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-400 * 24 * time.Hour), Price: 1},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-2 * 24 * time.Hour), Price: 3000, MarketCap: ptr(3.6e11), Volume: ptr(2e10)},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 3100.5},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: day.Add(time.Hour), Price: 3200},
		app.PricePoint{PricingID: "binancecoin", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 600},
	)
	d := func(n int) string { return day.Add(time.Duration(-n) * 24 * time.Hour).Format(time.RFC3339) }
	e.expect("/networks/history/ethereum", 200, `[
		{"time":"`+d(2)+`","usd":3000,"volume24h":2e10,"marketCap":3.6e11},
		{"time":"`+d(1)+`","usd":3100.5,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/optimism", 200, `[
		{"time":"`+d(2)+`","usd":3000,"volume24h":2e10,"marketCap":3.6e11},
		{"time":"`+d(1)+`","usd":3100.5,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/bsc?unknown=1", 200, `[{"time":"`+d(1)+`","usd":600,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/polygon", 200, `[]`)
	e.expect("/networks/history/nochain", 400, `{"error":"chain: unknown chain \"nochain\""}`)
}
