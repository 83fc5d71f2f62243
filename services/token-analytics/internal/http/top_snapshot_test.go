package http

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

const (
	alphaBase = "0x00000000000000000000000000000000000000ab"
	betaBase  = "0x00000000000000000000000000000000000000bc"
	delta     = "0x00000000000000000000000000000000000000dd"
)

// twoChainWorld is knownWorld with alpha and beta deployed on base too, delta only on base, and
// flows on both chains in the current and earlier windows of every timeframe. Every USD figure is
// a whole number, so sums are exact whatever their order.
func twoChainWorld(t *testing.T) *env {
	e := knownWorld(t)
	e.tokens(
		app.TokenUpdate{PricingID: "alpha", Deployments: []app.Deployment{{Chain: "base", Address: alphaBase, Decimals: 18}}},
		app.TokenUpdate{PricingID: "beta", Deployments: []app.Deployment{{Chain: "base", Address: betaBase, Decimals: 18}}},
		app.TokenUpdate{PricingID: "delta", Symbol: "DEL", MarketCap: ptr(7e8), Deployments: []app.Deployment{{Chain: "base", Address: delta, Decimals: 18}}},
	)
	e.prices(app.PricePoint{PricingID: "delta", Granularity: app.Hourly, Time: now.Add(-30 * time.Hour).Truncate(time.Hour), Price: 3})
	var fs []app.Flow
	ago := []time.Duration{time.Hour, 5 * time.Hour, 20 * time.Hour, 30 * time.Hour, 3 * 24 * time.Hour, 10 * 24 * time.Hour}
	for i, tok := range []string{alphaBase, betaBase, delta} {
		for j, d := range ago {
			from, to := []string{user1, cex, pool}[(i+j)%3], []string{cex, user2, user1}[(i+2*j)%3]
			fs = append(fs, app.Flow{Chain: "base", ID: fmt.Sprintf("0xbase%d%d_1", i, j), ChainType: "evm", BlockHash: "0xbase1",
				Time: now.Add(-d), Token: tok, From: from, To: to, Value: float64(j + 1), USD: float64(100*i + 10*j + 7)})
		}
	}
	for j, d := range ago[2:] { // ethereum's flows before the current hour's
		fs = append(fs, app.Flow{Chain: "ethereum", ID: fmt.Sprintf("0xeth%d_1", j), ChainType: "evm", BlockHash: "0xb1",
			Time: now.Add(-d), Token: []string{alpha, beta, gamma}[j%3], From: cex, To: user1, Value: 1, USD: float64(50 + j)})
	}
	if err := e.store.ApplyFlows(context.Background(), fs); err != nil {
		t.Fatal(err)
	}
	return e
}

// topRouters are two routers over e's store: one answering /token/top from the statement over
// the rollups on every request, one from the in-memory snapshot (refreshed once, here).
func topRouters(t *testing.T, e *env) (slow, fast http.Handler, snap *app.Service) {
	set, _ := chains.NewSet(nil)
	clock := func() time.Time { return now }
	slowE := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	Register(slowE, app.New(e.store, app.Options{Now: clock}), set)
	fastE := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	snap = app.New(e.store, app.Options{Now: clock, TopRefresh: time.Hour})
	if err := snap.RefreshTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	Register(fastE, snap, set)
	return slowE, fastE, snap
}

func bodyOf(h http.Handler, path string) (int, string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code, w.Body.String()
}

// Requests narrowed by chains and tokenIds, answered from the snapshot's per-chain parts, are
// byte for byte what the statement over the rollups answers, for every timeframe, both reference
// period choices the snapshot keeps, and rankings in both directions and by change.
func TestTopNarrowedFromSnapshotEqualsStatement(t *testing.T) {
	e := twoChainWorld(t)
	slow, fast, snap := topRouters(t, e)
	filters := []string{"", "&chains=ethereum", "&chains=base", "&chains=base,ethereum", "&chains=polygon",
		"&tokenIds=alpha", "&tokenIds=delta,beta", "&tokenIds=alpha,delta&chains=ethereum", "&tokenIds=gamma&chains=base",
		"&chains=base&minVolume=1&maxMarketCap=2e9"}
	orders := []string{"orderByAgg=volume", "orderByAgg=netflowCex&orderByDesc=false", "orderByAgg=outflowDex&orderByPercent=true",
		"orderByAgg=price&orderByPercent=true&orderByDesc=false", "orderByAgg=netflowVolumeRatio&size=2&from=1"}
	n := 0
	for _, tf := range []string{"1h", "6h", "12h", "24h", "7d"} {
		for _, periods := range []string{"1", "auto"} {
			for _, f := range filters {
				for _, o := range orders {
					path := fmt.Sprintf("/token/top?timeframe=%s&numReferencePeriods=%s&%s%s", tf, periods, o, f)
					sc, sb := bodyOf(slow, path)
					fc, fb := bodyOf(fast, path)
					if sc != 200 || fc != 200 || sb != fb {
						t.Fatalf("%s:\n statement %d %s\n snapshot  %d %s", path, sc, sb, fc, fb)
					}
					n++
				}
			}
		}
	}
	// The world has flows in the windows compared, so the comparison is not of zeros: delta's
	// 207 (pool → user, 1h ago), 217 (user → user, 5h), 227 (cex → cex, 20h), and 237 (pool →
	// user, 30h ago: the previous day).
	e.expect("/token/top?timeframe=24h&numReferencePeriods=1&chains=base&tokenIds=delta", 200, `{"tokens":[
		{"token":{"id":"delta","symbol":"DEL","marketCap":7e8},
		 "current":{"price":3,"volume":651,"inflowCexVolume":227,"outflowCexVolume":227,"inflowDexVolume":0,"outflowDexVolume":207,"netflow":-207},
		 "previous":{"price":3,"volume":237,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":237,"netflow":-237}}],"total":1}`)
	// The snapshot answered them: a new transfer moves the statement's answer, not the
	// snapshot's, until the next refresh.
	path := "/token/top?timeframe=24h&numReferencePeriods=1&chains=base&tokenIds=delta"
	_, before := bodyOf(fast, path)
	if err := e.store.ApplyFlows(context.Background(), []app.Flow{{Chain: "base", ID: "0xlate_1", ChainType: "evm", BlockHash: "0xbase1",
		Time: now.Add(-time.Hour), Token: delta, From: user1, To: user2, Value: 1, USD: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, after := bodyOf(fast, path); after != before {
		t.Fatalf("narrowed request not answered from the snapshot:\n%s\n%s", before, after)
	}
	if err := snap.RefreshTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, sb := bodyOf(slow, path)
	if _, fb := bodyOf(fast, path); fb != sb || fb == before {
		t.Fatalf("after a refresh:\n statement %s\n snapshot  %s", sb, fb)
	}
	t.Logf("%d requests compared", n)
}
