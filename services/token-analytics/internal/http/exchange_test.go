package http

import (
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// GET /token/service_exchange_tokens: the operator's configured spot and perp lists, in their
// order, each entry with its deployments, its price now and 24 h ago (null when none), its
// ticker; an id the registry does not know is left out, one in both lists shows in both.
func TestExchangeTokens(t *testing.T) {
	e := newEnvWith(t, app.Options{Now: func() time.Time { return now },
		Exchange: app.Exchange{Spot: []string{"delta", "nosuch", "quiet"}, Perp: []string{"ethereum", "delta"}}})
	e.tokens(
		app.TokenUpdate{PricingID: "delta", Name: "Delta", Symbol: "DEL", TVTicker: "BINANCE:DELUSDT",
			Deployments: []app.Deployment{{Chain: "base", Address: gamma, Decimals: 6}}},
		app.TokenUpdate{PricingID: "quiet", Name: "Quiet", Symbol: "QUI"},
		app.TokenUpdate{PricingID: "ethereum", Name: "Ether", Symbol: "ETH", Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}},
	)
	e.prices(
		app.PricePoint{PricingID: "delta", Granularity: app.Hourly, Time: now.Add(-25 * time.Hour), Price: 100},
		app.PricePoint{PricingID: "delta", Granularity: app.Hourly, Time: now.Add(-time.Hour), Price: 120},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: now.Add(-time.Hour), Price: 3000},
	)
	delta := `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL","tvTicker":"BINANCE:DELUSDT",
		"price":120,"price24hAgo":100,"deployments":[{"chain":"base","address":"` + gamma + `","decimals":6}]}`
	e.expect("/token/service_exchange_tokens", 200, `{"spotTokens":[`+delta+`,
		{"identifier":{"pricingID":"quiet"},"name":"Quiet","symbol":"QUI","tvTicker":null,"price":null,"price24hAgo":null,"deployments":[]}],
		"perpTokens":[{"identifier":{"pricingID":"ethereum"},"name":"Ether","symbol":"ETH","tvTicker":null,"price":3000,"price24hAgo":null,
		"deployments":[{"chain":"ethereum","address":"","decimals":18}]},`+delta+`]}`)
}

// Without configured lists both are empty arrays (the shape requires both).
func TestExchangeTokensNone(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.expect("/token/service_exchange_tokens", 200, `{"spotTokens":[],"perpTokens":[]}`)
}
