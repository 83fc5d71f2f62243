package intelligence

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	svchttp "github.com/chainintel/chainintel/services/intelligence/internal/http"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/jackc/pgx/v5/pgxpool"
)

const outageAddr = "0x5000000000000000000000000000000000000001"

var outageCaller = httpx.Identity{KeyID: "k-out", UserID: "u-out", Role: httpx.RoleIndividual, Tier: "api"}

// deadURL is the address of a server that no longer listens.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

func outageAPI(t *testing.T, st app.Store, cache *attribution.AttributionCache, ul app.UserLabels) http.Handler {
	t.Helper()
	set, _ := chains.NewSet(nil)
	a := &app.Service{Chains: set, Cache: cache, Store: st, UserLabels: ul, Log: slog.New(slog.DiscardHandler)}
	e := httpx.NewEngine(httpx.EngineOptions{Service: Name, Logger: slog.New(slog.DiscardHandler)})
	e.Use(httpx.IdentityMiddleware(httpx.NewSigner(testSecret)))
	svchttp.Register(e, a)
	return e
}

func wantUnavailable(t *testing.T, h http.Handler, method, path, body, dependency string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	httpx.NewSigner(testSecret).Sign(req.Header, outageCaller, timeNow())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	want := `{"error":"` + dependency + ` is unavailable; retry later"}`
	if w.Code != http.StatusServiceUnavailable || strings.TrimSpace(w.Body.String()) != want || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("%s %s: got %d Retry-After=%q %s, want 503 Retry-After=1 %s", method, path, w.Code, w.Header().Get("Retry-After"), w.Body, want)
	}
}

// With user-labels unreachable, every answer that carries the caller's labels or entities is a
// 503 naming user-labels, never a 200 without them.
func TestUserLabelsDownIsA503(t *testing.T) {
	resetDB(t)
	// An operator entity's summary asks for the caller's additions to it.
	if _, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}]}`)); err != nil {
		t.Fatal(err)
	}
	st := store.New(pgtest.Pool(t))
	cache := attribution.NewCache(st)
	if err := cache.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ul, err := ulclient.New(deadURL(t), httpx.NewSigner(testSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := outageAPI(t, st, cache, ul)
	batch, _ := json.Marshal(map[string][]string{"addresses": {outageAddr}})
	userEntity := "8f0e2c55-1111-4222-8333-944455556666"
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/intelligence/address/" + outageAddr, ""},
		{"GET", "/intelligence/address/" + outageAddr + "/all", ""},
		{"GET", "/intelligence/address_enriched/" + outageAddr, ""},
		{"GET", "/intelligence/address_enriched/" + outageAddr + "/all", ""},
		{"GET", "/intelligence/address_with_extra_enrichment/" + outageAddr, ""},
		{"POST", "/intelligence/address/batch", string(batch)},
		{"POST", "/intelligence/address/batch/all", string(batch)},
		{"POST", "/intelligence/address_enriched/batch", string(batch)},
		{"POST", "/intelligence/address_enriched/batch/all", string(batch)},
		{"GET", "/intelligence/search?query=binance", ""},
		{"GET", "/intelligence/entity/" + userEntity, ""},
		{"GET", "/intelligence/entity/" + userEntity + "/summary", ""},
		{"GET", "/intelligence/entity/acme/summary", ""},
		{"GET", "/risk/entity/" + userEntity, ""},
		{"POST", "/risk/entity/batch", `{"entity_ids":["` + userEntity + `"]}`},
	} {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) { wantUnavailable(t, h, rt.method, rt.path, rt.body, "user-labels") })
	}
}

// With PostgreSQL gone under the service (its pool closed), every route that reads the
// database answers 503 naming PostgreSQL with Retry-After, never a 500.
func TestPostgresDownIsA503OnEveryRoute(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cache := attribution.NewCache(store.New(pgtest.Pool(t)))
	if err := cache.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	h := outageAPI(t, store.New(pool), cache, nil)
	for _, path := range []string{
		"/intelligence/address_enriched/" + outageAddr,
		"/intelligence/address_with_extra_enrichment/" + outageAddr + "/all",
		"/intelligence/entity/binance",
		"/intelligence/entity/binance/summary",
		"/intelligence/entity_predictions/binance",
		"/intelligence/contract/ethereum/" + outageAddr,
		"/intelligence/token/usd-coin",
		"/intelligence/token/ethereum/" + outageAddr,
		"/tag/cex/params",
		"/tag/cex/summary",
		"/intelligence/search?query=binance",
		"/intelligence/entity_types",
		"/cluster/cl-0000000000000001/summary",
		"/intelligence/entities/updates",
		"/intelligence/addresses/updates",
		"/intelligence/tags/updates",
		"/intelligence/address_tags/updates",
		"/risk/address/" + outageAddr,
		"/risk/address/" + outageAddr + "/paths",
		"/risk/entity/binance",
	} {
		t.Run(path, func(t *testing.T) { wantUnavailable(t, h, "GET", path, "", "PostgreSQL") })
	}
}
