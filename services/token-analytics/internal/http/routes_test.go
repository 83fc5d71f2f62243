package http

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

func TestTopFlow(t *testing.T) {
	e := knownWorld(t)
	// Older than the window: left out.
	e.send(transfer{id: "0xold_1", from: user2, to: user1, token: alpha, usd: 1e6, units: 1, at: now.Add(-50 * time.Hour)})
	e.expect("/token/top_flow/alpha?timeLast=24h&limit=3", 200, `[
		{"address":{"address":"`+user1+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155},
		{"address":{"address":"`+cex+`","chain":"ethereum","serviceEntity":{"id":"cex-c1","name":"CEX c1","note":"","type":"cex","service":null},
		  "contract":false,"isUserAddress":false},"inUSD":100,"inValue":100,"outUSD":30,"outValue":30},
		{"address":{"address":"`+pool+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":50,"inValue":50,"outUSD":10,"outValue":10}]`)
	// By contract, upper-case address accepted.
	code, body := e.get("/token/top_flow/ethereum/" + strings.ToUpper(alpha[2:]) + "?timeLast=24h&limit=1")
	if code != 404 {
		t.Errorf("address without 0x: %d %s", code, body)
	}
	e.expect("/token/top_flow/ethereum/0x"+strings.ToUpper(alpha[2:])+"?timeLast=24h&limit=1", 200, `[
		{"address":{"address":"`+user1+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155}]`)
	e.expect("/token/top_flow/alpha?timeLast=24h&chains=base", 200, `[]`)
	for _, path := range []string{"/token/top_flow/alpha?timeLast=24h&chains=base,notachain",
		"/token/top_flow/ethereum/" + alpha + "?timeLast=24h&chains=notachain", "/token/top?timeframe=24h&chains=notachain"} {
		e.expect(path, 400, `{"error":"chains: unknown chain \"notachain\""}`)
	}
	for path, want := range map[string]string{
		"/token/top_flow/alpha":                       "timeLast: is required, such as 24h or 7d",
		"/token/top_flow/alpha?timeLast=soon":         `timeLast: duration "soon" must look like 1h, 24h, 7d or 30d`,
		"/token/top_flow/alpha?timeLast=400d":         `timeLast: duration "400d" must be positive and at most 365d`,
		"/token/top_flow/alpha?timeLast=1d&limit=101": "limit: must be between 1 and 100, got 101",
		"/token/top_flow/mars/0xaa?timeLast=1d":       `chain: unknown chain "mars"`,
	} {
		if code, body := e.get(path); code != 400 || errorOf(body) != want {
			t.Errorf("%s: %d %s, want 400 %q", path, code, body, want)
		}
	}
	if code, body := e.get("/token/top_flow/nothing?timeLast=1d"); code != 404 || errorOf(body) != "token nothing: not found" {
		t.Errorf("unknown token: %d %s", code, body)
	}
}

func TestVolumeBuckets(t *testing.T) {
	e := knownWorld(t)
	// alpha moved 195 (in 1h before now) and another 7 two days ago, also 7 units.
	e.send(transfer{id: "0xv1_1", from: user1, to: user2, token: alpha, usd: 7, units: 7, at: time.Date(2026, 1, 8, 3, 10, 0, 0, time.UTC)})
	e.expect("/token/volume/alpha?granularity=1h&timeLast=3h", 200, `[
		{"time":"2026-01-10T09:00:00Z","inUSD":0,"inValue":0,"outUSD":0,"outValue":0},
		{"time":"2026-01-10T10:00:00Z","inUSD":0,"inValue":0,"outUSD":0,"outValue":0},
		{"time":"2026-01-10T11:00:00Z","inUSD":195,"inValue":195,"outUSD":195,"outValue":195},
		{"time":"2026-01-10T12:00:00Z","inUSD":0,"inValue":0,"outUSD":0,"outValue":0}]`)
	e.expect("/token/volume/ethereum/"+alpha+"?granularity=1d&timeLast=3d", 200, `[
		{"time":"2026-01-07T00:00:00Z","inUSD":0,"inValue":0,"outUSD":0,"outValue":0},
		{"time":"2026-01-08T00:00:00Z","inUSD":7,"inValue":7,"outUSD":7,"outValue":7},
		{"time":"2026-01-09T00:00:00Z","inUSD":0,"inValue":0,"outUSD":0,"outValue":0},
		{"time":"2026-01-10T00:00:00Z","inUSD":195,"inValue":195,"outUSD":195,"outValue":195}]`)
	for path, want := range map[string]string{
		"/token/volume/alpha":                              "granularity: is required: one of 1h, 2h, 4h, 6h, 12h, 1d, 7d",
		"/token/volume/alpha?granularity=3h":               `granularity: must be one of 1h, 2h, 4h, 6h, 12h, 1d, 7d, got "3h"`,
		"/token/volume/alpha?granularity=1h&timeLast=31d":  "granularity: 1h is allowed over at most 30 days; use 1d",
		"/token/volume/alpha?granularity=1d&timeLast=12h":  "timeLast: must be at least the granularity 1d",
		"/token/volume/alpha?granularity=1d&timeLast=1d&x": "",
	} {
		code, body := e.get(path)
		if want == "" {
			if code != 200 {
				t.Errorf("%s: %d %s", path, code, body)
			}
			continue
		}
		if code != 400 || errorOf(body) != want {
			t.Errorf("%s: %d %s, want 400 %q", path, code, body, want)
		}
	}
	if code, _ := e.get("/token/volume/ethereum/0x00000000000000000000000000000000000000ff?granularity=1d"); code != 404 {
		t.Errorf("unknown contract: %d", code)
	}
}

// TestVolumeCountsExactlyTimeLast: the buckets run from the one holding now - timeLast to the
// one holding now, on a Thursday 18:30 UTC, and count exactly the transfers of [now - timeLast,
// now]: the first bucket only those from now - timeLast on, in the whole hours and days after it
// (from the rollups) and in its partial hour (from the transfers), a minute before it left out.
// Each transfer's USD is a distinct power of two, so every bucket's sum names the transfers in it.
func TestVolumeCountsExactlyTimeLast(t *testing.T) {
	clock := time.Date(2026, 11, 26, 18, 30, 0, 0, time.UTC)
	e := newEnvAt(t, app.Native{}, clock)
	e.tokens(app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	at := func(month, day, hour, minute int) time.Time {
		return time.Date(2026, time.Month(month), day, hour, minute, 0, 0, time.UTC)
	}
	for i, when := range []time.Time{
		at(10, 25, 23, 59), at(10, 26, 0, 0), // Sunday before, and the Monday of, the week holding now - 30d (before it)
		at(11, 22, 23, 59), at(11, 23, 19, 0), // the day before, and inside, the day holding now - 3d
		at(11, 25, 15, 59), at(11, 25, 18, 45), // before, and inside, the 4h bucket holding now - 1d
		at(11, 26, 14, 59), at(11, 26, 15, 0), at(11, 26, 18, 29), // around the hour holding now - 3h; the last minute
		at(11, 26, 15, 29), at(11, 26, 15, 30), // a minute before, and at, now - 3h
		at(11, 23, 18, 29), at(11, 23, 18, 31), // a minute before, and after, now - 3d
	} {
		usd := float64(int(1) << i)
		e.send(transfer{id: fmt.Sprintf("0xw%d_1", i), from: user1, to: user2, token: alpha, usd: usd, units: usd, at: when})
	}
	point := func(t string, v int) string {
		return fmt.Sprintf(`{"time":%q,"inUSD":%d,"inValue":%d,"outUSD":%d,"outValue":%d}`, t, v, v, v, v)
	}
	for _, c := range []struct {
		query  string
		points []string
	}{
		{"granularity=1h&timeLast=3h", []string{point("2026-11-26T15:00:00Z", 1024), point("2026-11-26T16:00:00Z", 0),
			point("2026-11-26T17:00:00Z", 0), point("2026-11-26T18:00:00Z", 256)}},
		{"granularity=4h&timeLast=1d", []string{point("2026-11-25T16:00:00Z", 32), point("2026-11-25T20:00:00Z", 0),
			point("2026-11-26T00:00:00Z", 0), point("2026-11-26T04:00:00Z", 0), point("2026-11-26T08:00:00Z", 0),
			point("2026-11-26T12:00:00Z", 1728), point("2026-11-26T16:00:00Z", 256)}},
		{"granularity=1d&timeLast=3d", []string{point("2026-11-23T00:00:00Z", 4104), point("2026-11-24T00:00:00Z", 0),
			point("2026-11-25T00:00:00Z", 48), point("2026-11-26T00:00:00Z", 1984)}},
		{"granularity=7d&timeLast=30d", []string{point("2026-10-26T00:00:00Z", 0), point("2026-11-02T00:00:00Z", 0),
			point("2026-11-09T00:00:00Z", 0), point("2026-11-16T00:00:00Z", 4), point("2026-11-23T00:00:00Z", 8184)}},
		// now - 7d is a Thursday: its week starts on the Monday before it.
		{"granularity=7d&timeLast=7d", []string{point("2026-11-16T00:00:00Z", 4), point("2026-11-23T00:00:00Z", 8184)}},
	} {
		e.expect("/token/volume/alpha?"+c.query, 200, "["+strings.Join(c.points, ",")+"]")
	}
}

func TestTrending(t *testing.T) {
	e := knownWorld(t)
	e.tokens(app.TokenUpdate{PricingID: "beta", AllTimeHigh: ptr(30), AllTimeLow: ptr(0.1), CirculatingSupply: ptr(1e8), TotalSupply: ptr(2e8)},
		// Registry extremes older than the latest quote (12): the high shown is the price.
		app.TokenUpdate{PricingID: "gamma", AllTimeHigh: ptr(0.4), AllTimeLow: ptr(0.45)})
	e.prices(app.PricePoint{PricingID: "beta", Granularity: app.Hourly, Time: now.Add(-25 * time.Hour).Truncate(time.Hour), Price: 8},
		app.PricePoint{PricingID: "beta", Granularity: app.Tick, Time: now, Price: 10, Volume: ptr(5e6)},
		app.PricePoint{PricingID: "alpha", Granularity: app.Tick, Time: now, Price: 2, Volume: ptr(1e6)})
	e.expect("/token/trending/beta", 200, `{"name":"Beta","symbol":"BET","pricingID":"beta","price":10,"price24hAgo":8,"volume24h":5e6,
		"allTimeHigh":30,"allTimeLow":0.1,"circulatingSupply":1e8,"totalSupply":2e8}`)
	// No price 24 h ago, no volume, no stored history: unknown figures are 0 on the single
	// token's route (its shape requires numbers) and null in the list; the extremes are at least
	// the price now.
	e.expect("/token/trending/gamma", 200, `{"name":"Gamma","symbol":"GAM","pricingID":"gamma","price":0.5,"price24hAgo":0,"volume24h":0,
		"allTimeHigh":0.5,"allTimeLow":0.45,"circulatingSupply":4e8}`)
	e.expect("/token/trending", 200, `[
		{"name":"Beta","symbol":"BET","pricingID":"beta","price":10,"price24hAgo":8,"volume24h":5e6,"allTimeHigh":30,"allTimeLow":0.1,"circulatingSupply":1e8,"totalSupply":2e8},
		{"name":"Alpha","symbol":"ALP","pricingID":"alpha","price":2,"price24hAgo":null,"volume24h":1e6,"allTimeHigh":2,"allTimeLow":2,"circulatingSupply":2.5e9},
		{"name":"Gamma","symbol":"GAM","pricingID":"gamma","price":0.5,"price24hAgo":null,"volume24h":null,"allTimeHigh":0.5,"allTimeLow":0.45,"circulatingSupply":4e8}]`)
	if code, body := e.get("/token/trending/nope"); code != 404 || errorOf(body) != "token nope: not found" {
		t.Errorf("%d %s", code, body)
	}
}

// TestUnpricedToken: a registry token without any price (its market data not fetched yet) is
// never shown at $0: not trending (404, as the list leaves it out), no /token/top row, and no
// price in the market data /intelligence/token shows.
func TestUnpricedToken(t *testing.T) {
	e := knownWorld(t)
	delta := "0x00000000000000000000000000000000000000d1"
	e.tokens(app.TokenUpdate{PricingID: "delta", Name: "Delta", Symbol: "DEL", AllTimeHigh: ptr(7), AllTimeLow: ptr(1),
		Deployments: []app.Deployment{{Chain: "ethereum", Address: delta, Decimals: 6}}})
	e.send(transfer{id: "0xde_1", from: user1, to: user2, token: delta, units: 5, at: now.Add(-time.Hour)})
	e.expect("/token/trending/delta", 404, `{"error":"token delta has no price, so it is not trending (not found)"}`)
	e.expect("/token/top?timeframe=24h&tokenIds=delta&numReferencePeriods=1", 200, `{"tokens":[],"total":0}`)
	e.expect("/token/top?timeframe=24h&tokenIds=delta,gamma&numReferencePeriods=1", 200, `{"tokens":[
		{"token":{"id":"gamma","symbol":"GAM","marketCap":2e8},
		 "current":{"price":0.5,"volume":123,"inflowCexVolume":60,"outflowCexVolume":60,"inflowDexVolume":1,"outflowDexVolume":2,"netflow":-1},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	e.expect("/internal/tokens/delta", 200, `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL",
		"deployments":[{"chain":"ethereum","address":"`+delta+`","decimals":6}]}`)
	e.expect("/internal/tokens/ethereum/"+delta, 200, `{"identifier":{"pricingID":"delta","chain":"ethereum","address":"`+delta+`"},
		"name":"Delta","symbol":"DEL","deployments":[{"chain":"ethereum","address":"`+delta+`","decimals":6}]}`)
}

// TestAltcoinIndex uses a hand-computed table: Bitcoin went from 40,000 to 50,000 (+25%).
// Wrapped copies (flagged from the price API's wrapped-tokens category) are not altcoins: WETH
// would beat Bitcoin with ETH's +50% but counts once, as ethereum.
func TestAltcoinIndex(t *testing.T) {
	e := newEnv(t, app.Native{})
	then := now.Add(-app.AltcoinPeriod - time.Hour).Truncate(24 * time.Hour)
	// id, market cap, price 90 days ago, price now, stablecoin, wrapped: beats Bitcoin?
	table := []struct {
		id              string
		mc, ago, p      float64
		stable, wrapped bool
	}{
		{"bitcoin", 1e12, 40000, 50000, false, false},          // the reference
		{"ethereum", 4e11, 2000, 3000, false, false},           // +50%: beats
		{"weth", 3e11, 2000, 3000, false, true},                // ETH's copy, +50%: not counted again
		{"tether", 1e11, 1, 1.3, true, false},                  // stablecoin: not counted even with +30%
		{"wrapped-bitcoin", 9.5e10, 40000, 50100, false, true}, // +25.25%: a copy of Bitcoin, not counted
		{"solana", 9e10, 100, 120, false, false},               // +20%: does not beat
		{"wrapped-solana", 8.5e10, 100, 130, false, true},      // +30%: a copy, not counted
		{"ripple", 8e10, 0.5, 0.63, false, false},              // +26%: beats
		{"newcoin", 7e10, 0, 10, false, false},                 // no price 90 days ago: does not beat
		{"doge", 6e10, 0.2, 0.1, false, false},                 // -50%
	}
	for _, r := range table {
		stable, wrapped := r.stable, r.wrapped
		e.tokens(app.TokenUpdate{PricingID: r.id, Symbol: strings.ToUpper(r.id[:3]), MarketCap: ptr(r.mc), Stablecoin: &stable, Wrapped: &wrapped,
			Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x" + r.id, Decimals: 18}}})
		if r.ago > 0 {
			e.prices(app.PricePoint{PricingID: r.id, Granularity: app.Daily, Time: then, Price: r.ago})
		}
		e.prices(app.PricePoint{PricingID: r.id, Granularity: app.Tick, Time: now, Price: r.p, MarketCap: ptr(r.mc)})
	}
	e.expect("/marketdata/altcoin_index", 200, `{"altcoinIndex":2}`)
}

func TestAltcoinIndexWithoutBitcoin(t *testing.T) {
	e := newEnv(t, app.Native{})
	if code, body := e.get("/marketdata/altcoin_index"); code != 503 || errorOf(body) != "bitcoin price: market data not available yet" {
		t.Errorf("%d %s", code, body)
	}
}

func TestNativeCirculating(t *testing.T) {
	tok := "0x00000000000000000000000000000000000000f0"
	r1, r2 := "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000a2"
	e := newEnv(t, app.Native{Chain: "ethereum", Token: tok, Decimals: 18, TotalSupply: "1000000000000000000000000", Reserves: []string{r1, r2}})
	// Nothing observed yet: all of it circulates.
	e.expect("/native/circulating", 200, `{"amount":1000000}`)
	obs := func(addr, token, bal, block string, n uint64) eventbus.Message[*eventsv1.BalanceObservation] {
		return eventbus.Message[*eventsv1.BalanceObservation]{Msg: &eventsv1.BalanceObservation{Chain: "ethereum", Address: addr,
			TokenAddress: token, Balance: bal, BlockNumber: n, BlockHash: block}}
	}
	batch := []eventbus.Message[*eventsv1.BalanceObservation]{
		obs(strings.ToUpper(r1[:2])+r1[2:], tok, "100000000000000000000000", "0xh1", 1), // 100,000
		obs(r2, tok, "250000500000000000000000", "0xh1", 1),                             // 250,000.5
		obs(r2, tok, "50000500000000000000000", "0xh2", 2),                              // 50,000.5, newer
		obs(r1, "0x00000000000000000000000000000000000000f1", "999", "0xh2", 2),         // another token
		obs("0x00000000000000000000000000000000000000a3", tok, "999", "0xh2", 2),        // not a reserve
	}
	for range 2 { // twice: the same observations change nothing
		if err := e.ev.Balances(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	e.expect("/native/circulating", 200, `{"amount":849999.5}`)
	// Block 0xh2 orphaned: r2 falls back to its older balance.
	if err := e.store.ApplyReorg(context.Background(), "ethereum", []string{"0xh2"}, nil); err != nil {
		t.Fatal(err)
	}
	e.expect("/native/circulating", 200, `{"amount":649999.5}`)
}

func TestNativeCirculatingNotConfigured(t *testing.T) {
	e := newEnv(t, app.Native{})
	if code, body := e.get("/native/circulating"); code != 404 || errorOf(body) != "this deployment has no native token configured" {
		t.Errorf("%d %s", code, body)
	}
}

func TestInternalMarket(t *testing.T) {
	e := knownWorld(t)
	e.prices(app.PricePoint{PricingID: "alpha", Granularity: app.Hourly, Time: now.Add(-24 * time.Hour).Truncate(time.Hour), Price: 1.5})
	e.expect("/internal/tokens/alpha", 200, `{"identifier":{"pricingID":"alpha"},"name":"Alpha","symbol":"ALP","price":2,"price24hAgo":1.5,
		"deployments":[{"chain":"ethereum","address":"`+alpha+`","decimals":18}]}`)
	e.expect("/internal/tokens/ethereum/"+alpha, 200, `{"identifier":{"pricingID":"alpha","chain":"ethereum","address":"`+alpha+`"},"name":"Alpha","symbol":"ALP","price":2,"price24hAgo":1.5,
		"deployments":[{"chain":"ethereum","address":"`+alpha+`","decimals":18}]}`)
}
