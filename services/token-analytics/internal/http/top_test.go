package http

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

const (
	cex   = "0x00000000000000000000000000000000000000c1"
	pool  = "0x00000000000000000000000000000000000000d1"
	user1 = "0x00000000000000000000000000000000000000e1"
	user2 = "0x00000000000000000000000000000000000000e2"
	alpha = "0x00000000000000000000000000000000000000aa"
	beta  = "0x00000000000000000000000000000000000000bb"
	gamma = "0x00000000000000000000000000000000000000cc"
)

// knownWorld has three tokens whose current-window flows are, in USD:
//
//	         user→cex  cex→user  user→pool  pool→user  user→user
//	alpha      100       30         50         10          5
//	beta        10       80          5         40        200
//	gamma       60       60          1          2          0
//
// and prices 2, 10 and 0.5.
func knownWorld(t *testing.T) *env {
	e := newEnv(t, app.Native{})
	e.tokens(
		app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", MarketCap: ptr(5e9), Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}},
		app.TokenUpdate{PricingID: "beta", Name: "Beta", Symbol: "BET", MarketCap: ptr(1e9), Deployments: []app.Deployment{{Chain: "ethereum", Address: beta, Decimals: 18}}},
		app.TokenUpdate{PricingID: "gamma", Name: "Gamma", Symbol: "GAM", MarketCap: ptr(2e8), Deployments: []app.Deployment{{Chain: "ethereum", Address: gamma, Decimals: 18}}},
	)
	at := now.Add(-time.Hour)
	for id, p := range map[string]float64{"alpha": 2, "beta": 10, "gamma": 0.5} {
		e.prices(app.PricePoint{PricingID: id, Granularity: app.Tick, Time: now, Price: p})
	}
	e.attribute(1, cex, "cex")
	e.pool(pool)
	rows := map[string][5]float64{alpha: {100, 30, 50, 10, 5}, beta: {10, 80, 5, 40, 200}, gamma: {60, 60, 1, 2, 0}}
	for tok, r := range rows {
		pairs := [][2]string{{user1, cex}, {cex, user1}, {user1, pool}, {pool, user1}, {user1, user2}}
		for i, pr := range pairs {
			if r[i] == 0 {
				continue
			}
			e.send(transfer{id: fmt.Sprintf("0x%s%d_1", tok[len(tok)-2:], i), from: pr[0], to: pr[1], token: tok, usd: r[i], units: r[i], at: at})
		}
	}
	return e
}

// order returns the token ids of a /token/top answer in order.
func order(t *testing.T, e *env, query string) []string {
	t.Helper()
	code, body := e.get("/token/top?" + query)
	if code != 200 {
		t.Fatalf("/token/top?%s: %d %s", query, code, body)
	}
	var ids []string
	for _, part := range strings.Split(body, `"token":{"id":"`)[1:] {
		ids = append(ids, part[:strings.IndexByte(part, '"')])
	}
	return ids
}

func TestTopEveryOrderByAggBothWays(t *testing.T) {
	e := knownWorld(t)
	// Descending orders, hand-computed from the table of knownWorld.
	want := map[string]string{
		"volume":                "beta,alpha,gamma", // 335, 195, 123
		"inflow":                "alpha,gamma,beta", // 150, 61, 15
		"outflow":               "beta,gamma,alpha", // 120, 62, 40
		"volumeDex":             "alpha,beta,gamma", // 60, 45, 3
		"volumeCex":             "alpha,gamma,beta", // 130, 120, 90
		"inflowDex":             "alpha,beta,gamma", // 50, 5, 1
		"inflowCex":             "alpha,gamma,beta", // 100, 60, 10
		"outflowDex":            "beta,alpha,gamma", // 40, 10, 2
		"outflowCex":            "beta,gamma,alpha", // 80, 60, 30
		"netflowDex":            "alpha,gamma,beta", // 40, -1, -35
		"netflowCex":            "alpha,gamma,beta", // 70, 0, -70
		"netflow":               "alpha,gamma,beta", // 110, -1, -105
		"netflowVolumeRatio":    "alpha,gamma,beta", // 0.56, -0.008, -0.31
		"netflowVolumeRatioDex": "alpha,gamma,beta", // 0.67, -0.33, -0.78
		"netflowVolumeRatioCex": "alpha,gamma,beta", // 0.54, 0, -0.78
		"price":                 "beta,alpha,gamma", // 10, 2, 0.5
	}
	if len(want) != len(app.OrderByAggs) {
		t.Fatalf("the test covers %d orderByAgg values, the API has %d", len(want), len(app.OrderByAggs))
	}
	for _, agg := range app.OrderByAggs {
		desc := strings.Split(want[agg], ",")
		if got := order(t, e, "timeframe=24h&orderByAgg="+agg+"&orderByDesc=true"); !slices.Equal(got, desc) {
			t.Errorf("%s desc: %v, want %v", agg, got, desc)
		}
		asc := slices.Clone(desc)
		slices.Reverse(asc)
		if got := order(t, e, "timeframe=24h&orderByAgg="+agg+"&orderByDesc=false"); !slices.Equal(got, asc) {
			t.Errorf("%s asc: %v, want %v", agg, got, asc)
		}
	}
}

func TestTopWholeBody(t *testing.T) {
	e := knownWorld(t)
	e.expect("/token/top?timeframe=24h&orderByAgg=volume&size=2&numReferencePeriods=1", 200, `{"tokens":[
		{"token":{"id":"beta","symbol":"BET","marketCap":1e9},
		 "current":{"price":10,"volume":335,"inflowCexVolume":10,"outflowCexVolume":80,"inflowDexVolume":5,"outflowDexVolume":40,"netflow":-105},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}},
		{"token":{"id":"alpha","symbol":"ALP","marketCap":5e9},
		 "current":{"price":2,"volume":195,"inflowCexVolume":100,"outflowCexVolume":30,"inflowDexVolume":50,"outflowDexVolume":10,"netflow":110},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],
		"total":3}`)
	// Bounds, token and chain filters, paging.
	if got := order(t, e, "timeframe=24h&minVolume=150&maxVolume=300"); !slices.Equal(got, []string{"alpha"}) {
		t.Errorf("volume bounds: %v", got)
	}
	if got := order(t, e, "timeframe=24h&minMarketCap=3e8&orderByAgg=price&orderByDesc=false"); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("market cap bounds: %v", got)
	}
	if got := order(t, e, "timeframe=24h&tokenIds=gamma,alpha"); !slices.Equal(got, []string{"alpha", "gamma"}) {
		t.Errorf("tokenIds: %v", got)
	}
	if got := order(t, e, "timeframe=24h&chains=base"); len(got) != 0 {
		t.Errorf("chains=base: %v", got)
	}
	if got := order(t, e, "timeframe=24h&from=1&size=1"); !slices.Equal(got, []string{"alpha"}) {
		t.Errorf("from/size: %v", got)
	}
	// The flows are an hour and a half old: outside the 1h window.
	if got := order(t, e, "timeframe=1h&orderByAgg=volume"); !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Errorf("1h (all zero, by id): %v", got)
	}
}

// A relabel re-classifies the past flows of the address, whether their hours are still open
// (read from market.flows) or closed (in flow_address_hours).
func TestTopRelabelReclassifies(t *testing.T) {
	t.Run("open hours", func(t *testing.T) { topRelabel(t, false) })
	t.Run("closed hours", func(t *testing.T) { topRelabel(t, true) })
}

func topRelabel(t *testing.T, closed bool) {
	e := knownWorld(t)
	if closed {
		if c, err := e.store.CloseAllHours(context.Background()); err != nil || c.Transfers == 0 {
			t.Fatalf("closed %+v, %v", c, err)
		}
	}
	// The CEX address becomes a fund: its flows are no longer CEX flows; the pool stays a DEX.
	e.attribute(2, cex, "fund")
	e.expect("/token/top?timeframe=24h&tokenIds=alpha&numReferencePeriods=1", 200, `{"tokens":[
		{"token":{"id":"alpha","symbol":"ALP","marketCap":5e9},
		 "current":{"price":2,"volume":195,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":50,"outflowDexVolume":10,"netflow":40},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	// An older attribution does not undo the newer one.
	e.attribute(1, cex, "cex")
	if got := order(t, e, "timeframe=24h&orderByAgg=inflowCex&tokenIds=alpha"); len(got) != 1 {
		t.Fatal(got)
	}
	_, body := e.get("/token/top?timeframe=24h&tokenIds=alpha")
	if !strings.Contains(body, `"inflowCexVolume":0`) {
		t.Errorf("older attribution applied: %s", body)
	}
	// The user becomes an exchange: its side of every flow is CEX now, in the past hours too.
	e.attribute(3, user1, "cex")
	e.expect("/token/top?timeframe=24h&tokenIds=alpha&numReferencePeriods=1", 200, `{"tokens":[
		{"token":{"id":"alpha","symbol":"ALP","marketCap":5e9},
		 "current":{"price":2,"volume":195,"inflowCexVolume":40,"outflowCexVolume":155,"inflowDexVolume":50,"outflowDexVolume":10,"netflow":-75},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	// Untagged again (a tombstone).
	e.attribute(0, user1, "")
	_, body = e.get("/token/top?timeframe=24h&tokenIds=alpha")
	if !strings.Contains(body, `"inflowCexVolume":0,"outflowCexVolume":0`) {
		t.Errorf("tombstone: %s", body)
	}
}

func TestTopPreviousPeriods(t *testing.T) {
	e := knownWorld(t)
	// alpha and beta moved in the two days before the current window; gamma did not.
	for i, day := range []time.Duration{30 * time.Hour, 54 * time.Hour} {
		e.send(transfer{id: fmt.Sprintf("0xpa%d_1", i), from: user1, to: user2, token: alpha, usd: 390, units: 1, at: now.Add(-day)},
			transfer{id: fmt.Sprintf("0xpb%d_1", i), from: user1, to: user2, token: beta, usd: 67, units: 1, at: now.Add(-day)})
	}
	e.prices(app.PricePoint{PricingID: "alpha", Granularity: app.Hourly, Time: now.Add(-24 * time.Hour).Truncate(time.Hour), Price: 4})
	// One reference period: alpha's 195 against 390 (-50%), beta's 335 against 67 (+400%).
	e.expect("/token/top?timeframe=24h&tokenIds=alpha&numReferencePeriods=1", 200, `{"tokens":[
		{"token":{"id":"alpha","symbol":"ALP","marketCap":5e9},
		 "current":{"price":2,"volume":195,"inflowCexVolume":100,"outflowCexVolume":30,"inflowDexVolume":50,"outflowDexVolume":10,"netflow":110},
		 "previous":{"price":4,"volume":390,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	if got := order(t, e, "timeframe=24h&orderByPercent=true&numReferencePeriods=1"); !slices.Equal(got, []string{"beta", "alpha", "gamma"}) {
		t.Errorf("percent desc: %v (gamma has no previous volume: last)", got)
	}
	if got := order(t, e, "timeframe=24h&orderByPercent=true&orderByDesc=false&numReferencePeriods=1"); !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Errorf("percent asc: %v", got)
	}
	// Two reference periods: the previous figures are the mean of both days.
	_, body := e.get("/token/top?timeframe=24h&tokenIds=beta&numReferencePeriods=2")
	if !strings.Contains(body, `"previous":{"price":0,"volume":67,`) {
		t.Errorf("two periods: %s", body)
	}
	// auto for 24h is a week of days: 134 / 7.
	_, body = e.get("/token/top?timeframe=24h&tokenIds=beta&numReferencePeriods=auto")
	if !strings.Contains(body, fmt.Sprintf(`"volume":%v,`, 134.0/7)) {
		t.Errorf("auto: %s", body)
	}
}

func TestTopSameEventsTwiceAndReorg(t *testing.T) {
	e := knownWorld(t)
	_, before := e.get("/token/top?timeframe=24h")
	// Redelivery of every transfer and attribution changes nothing.
	at := now.Add(-time.Hour)
	e.send(transfer{id: "0xaa0_1", from: user1, to: cex, token: alpha, usd: 100, units: 100, at: at})
	e.attribute(1, cex, "cex")
	e.pool(pool)
	if _, after := e.get("/token/top?timeframe=24h"); after != before {
		t.Fatalf("redelivery changed the answer:\n%s\n%s", before, after)
	}
	// A transfer in block 0xb2, orphaned by a reorg, then canonical again.
	e.send(transfer{id: "0xnew_1", from: user1, to: cex, token: alpha, usd: 1000, units: 1, at: at, block: "0xb2"})
	ctx := context.Background()
	if err := e.store.ApplyReorg(ctx, "ethereum", []string{"0xb2"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, after := e.get("/token/top?timeframe=24h"); after != before {
		t.Fatalf("reorg not undone:\n%s\n%s", before, after)
	}
	// A redelivery of the orphaned block's transfer is not counted.
	e.send(transfer{id: "0xnew_1", from: user1, to: cex, token: alpha, usd: 1000, units: 1, at: at, block: "0xb2"})
	e.send(transfer{id: "0xlate_1", from: user1, to: cex, token: alpha, usd: 7, units: 1, at: at, block: "0xb2"})
	if _, after := e.get("/token/top?timeframe=24h"); after != before {
		t.Fatalf("orphaned block counted:\n%s\n%s", before, after)
	}
	if err := e.store.ApplyReorg(ctx, "ethereum", nil, []string{"0xb2"}); err != nil {
		t.Fatal(err)
	}
	_, body := e.get("/token/top?timeframe=24h&tokenIds=alpha")
	if !strings.Contains(body, `"volume":1202,"inflowCexVolume":1107,`) {
		t.Fatalf("canonical again: %s", body)
	}
}

func TestTopBadParameters(t *testing.T) {
	e := newEnv(t, app.Native{})
	for q, msg := range map[string]string{
		"":                                          "timeframe: is required: one of 1h, 6h, 12h, 24h, 7d",
		"timeframe=2d":                              `timeframe: must be one of 1h, 6h, 12h, 24h, 7d, got "2d"`,
		"timeframe=1h&orderByAgg=foo":               `orderByAgg: must be one of`,
		"timeframe=1h&orderByDesc=maybe":            `orderByDesc: must be true or false, got "maybe"`,
		"timeframe=1h&orderByPercent=2":             `orderByPercent: must be true or false, got "2"`,
		"timeframe=1h&size=0":                       "size: must be between 1 and 1000, got 0",
		"timeframe=1h&from=-1":                      "from: must be between 0 and 10000, got -1",
		"timeframe=1h&numReferencePeriods=0":        `numReferencePeriods: must be auto or an integer from 1 to 30, got "0"`,
		"timeframe=1h&numReferencePeriods=x":        `numReferencePeriods: must be auto or an integer from 1 to 30, got "x"`,
		"timeframe=1h&minVolume=abc":                `minVolume: must be a number, got "abc"`,
		"timeframe=1h&maxMarketCap=-1":              "maxMarketCap: must not be negative, got -1",
		"timeframe=1h&minVolume=5&maxVolume=1":      "minVolume: must not exceed maxVolume",
		"timeframe=1h&chains=mars":                  `chains: unknown chain "mars"`,
		"timeframe=1h&minMarketCap=9&maxMarketCap=": "",
	} {
		code, body := e.get("/token/top?" + q)
		body = errorOf(body)
		if msg == "" {
			if code != 200 {
				t.Errorf("%q: %d %s", q, code, body)
			}
			continue
		}
		if code != 400 || !strings.Contains(body, msg) {
			t.Errorf("%q: %d %s, want 400 with %q", q, code, body, msg)
		}
	}
}
