package intelligence

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
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

// warnings records the messages of the warnings logged.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	w.msgs = append(w.msgs, r.Message)
	w.mu.Unlock()
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// TestTokenRefusedByTokenAnalytics: an id token-analytics refuses with a 400 (longer than its
// 200 bytes) is the caller's input, not an outage: the answer is the local registry's for an
// unknown id (404) and no "token-analytics unavailable" warning is logged. A 5xx still logs it
// and the local registry answers.
func TestTokenRefusedByTokenAnalytics(t *testing.T) {
	resetDB(t)
	if _, err := pgtest.Pool(t).Exec(context.Background(), `INSERT INTO intel.market_tokens VALUES ('alpha', 'Alpha', 'ALP')`); err != nil {
		t.Fatal(err)
	}
	ta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if len(r.URL.Path) > len("/internal/tokens/")+200 {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"id: must be a pricing id of at most 200 bytes"}`))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"database unavailable"}`))
	}))
	defer ta.Close()
	c, err := taclient.New(ta.URL, httpx.NewSigner(testSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	warned := &warnings{}
	api.app.Market, api.app.Log = marketData{c}, slog.New(warned)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}

	long := "/intelligence/token/" + strings.Repeat("a", 300)
	code, body := api.do(t, "GET", long, "", caller)
	api.app.Market = nil
	wantCode, wantBody := api.do(t, "GET", long, "", caller)
	if code != http.StatusNotFound || code != wantCode || body != wantBody {
		t.Errorf("refused id: %d %s, want the local registry's %d %s", code, body, wantCode, wantBody)
	}
	if w := warned.take(); len(w) != 0 {
		t.Errorf("warnings for an id token-analytics refuses: %q", w)
	}

	api.app.Market = marketData{c}
	checkTokens(t, api, map[string]string{
		"/intelligence/token/alpha": `{"identifier":{"pricingID":"alpha"},"name":"Alpha","symbol":"ALP","deployments":[]}`,
	})
	if w := warned.take(); !slices.Contains(w, "token-analytics unavailable; answering from the local registry") {
		t.Errorf("warnings for a 503 of token-analytics: %q", w)
	}
}
