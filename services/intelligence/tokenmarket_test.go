package intelligence

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
)

// unpricedAddr is the contract of the unpriced token in the token tests.
const unpricedAddr = "0x00000000000000000000000000000000000000d1"

// TestTokenPriceFromTokenAnalytics answers /intelligence/token from token-analytics' internal
// API (bodies as its TestInternalMarket and TestUnpricedToken pin them): a priced token shows
// its prices, an unpriced one leaves price and price24hAgo out, never 0.
func TestTokenPriceFromTokenAnalytics(t *testing.T) {
	resetDB(t)
	bodies := map[string]string{
		"/internal/tokens/alpha": `{"identifier":{"pricingID":"alpha"},"name":"Alpha","symbol":"ALP","price":2,"price24hAgo":1.5,
			"deployments":[{"chain":"ethereum","address":"0x00000000000000000000000000000000000000a1","decimals":18}]}`,
		"/internal/tokens/delta": `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL",
			"deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
		"/internal/tokens/ethereum/" + unpricedAddr: `{"identifier":{"pricingID":"delta","chain":"ethereum","address":"` + unpricedAddr + `"},
			"name":"Delta","symbol":"DEL","deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
	}
	ta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(b))
	}))
	defer ta.Close()
	c, err := taclient.New(ta.URL, httpx.NewSigner(testSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	api.app.Market = marketData{c}
	checkTokens(t, api, map[string]string{
		"/intelligence/token/alpha": `{"identifier":{"pricingID":"alpha"},"name":"Alpha","symbol":"ALP","price":2,"price24hAgo":1.5,
			"deployments":[{"chain":"ethereum","address":"0x00000000000000000000000000000000000000a1","decimals":18}]}`,
		"/intelligence/token/delta": `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL",
			"deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
		"/intelligence/token/ethereum/" + unpricedAddr: `{"identifier":{"pricingID":"delta","chain":"ethereum","address":"` + unpricedAddr + `"},
			"name":"Delta","symbol":"DEL","deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
	})
}

// TestTokenPriceFromLocalRegistry is the same from the local copy of the registry (what answers
// while token-analytics is down or not configured).
func TestTokenPriceFromLocalRegistry(t *testing.T) {
	resetDB(t)
	if _, err := pgtest.Pool(t).Exec(context.Background(), `
		INSERT INTO intel.market_tokens VALUES ('alpha', 'Alpha', 'ALP'), ('delta', 'Delta', 'DEL');
		INSERT INTO intel.token_deployments VALUES ('delta', 'ethereum', '`+unpricedAddr+`', 6);
		INSERT INTO intel.prices VALUES ('alpha', 1000, 1.5), ('alpha', 86401000, 2)`); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	checkTokens(t, api, map[string]string{
		"/intelligence/token/alpha": `{"identifier":{"pricingID":"alpha"},"name":"Alpha","symbol":"ALP","price":2,"price24hAgo":1.5,"deployments":[]}`,
		"/intelligence/token/delta": `{"identifier":{"pricingID":"delta"},"name":"Delta","symbol":"DEL",
			"deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
		"/intelligence/token/ethereum/" + unpricedAddr: `{"identifier":{"pricingID":"delta","chain":"ethereum","address":"` + unpricedAddr + `"},
			"name":"Delta","symbol":"DEL","deployments":[{"chain":"ethereum","address":"` + unpricedAddr + `","decimals":6}]}`,
	})
}

func checkTokens(t *testing.T, api *testAPI, want map[string]string) {
	t.Helper()
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	for path, body := range want {
		code, got := api.do(t, "GET", path, "", caller)
		if code != 200 {
			t.Errorf("%s: %d %s", path, code, got)
			continue
		}
		assertJSON(t, path, got, body)
	}
}
