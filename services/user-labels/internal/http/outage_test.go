package http

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/chainintel/chainintel/services/user-labels/internal/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

// outageEnv is the real router over a store whose pool is pool.
func outageEnv(pool *pgxpool.Pool) *env {
	ev := &env{signer: httpx.NewSigner(testSecret)}
	ev.store = store.New(pool)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "user-labels", MaxBodyBytes: MaxInternalBodyBytes})
	e.Use(httpx.IdentityMiddleware(ev.signer))
	Register(e, app.New(ev.store, app.NewChainTypes(nil)))
	ev.h = e
	return ev
}

// With PostgreSQL gone (a pool at a port nothing listens on, and a pool closed under the
// service), every route answers 503 naming PostgreSQL with Retry-After, never a 500.
func TestPostgresDownIsA503OnEveryRoute(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	dead, err := pgxpool.New(ctx, "postgres://postgres@"+addr+"/x?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dead.Close)
	closed, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	closed.Close()

	a := evmAddr(7)
	id := "8f0e2c55-1111-4222-8333-944455556666"
	label := `[{"name":"n","note":"","address":"` + a + `","chainType":"evm"}]`
	entity := `{"name":"e","note":"","addresses":{"evm":["` + a + `"]}}`
	routes := []struct{ method, path, body string }{
		{"GET", "/user/labels", ""},
		{"POST", "/user/labels", label},
		{"DELETE", "/user/labels?labels=" + a + ":evm", ""},
		{"PUT", "/user/labels/" + a + ":evm", `{"name":"m","note":""}`},
		{"DELETE", "/user/labels/" + a + ":evm", ""},
		{"GET", "/user/entities", ""},
		{"POST", "/user/entities", entity},
		{"GET", "/user/entities/" + id, ""},
		{"PUT", "/user/entities/" + id, entity},
		{"DELETE", "/user/entities/" + id, ""},
		{"PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["` + a + `"]}}`},
		{"POST", "/internal/lookup", `{"addresses":[{"chainType":"evm","address":"` + a + `"}]}`},
		{"GET", "/internal/entities/" + id, ""},
		{"GET", "/internal/shared/entities/" + id, ""},
		{"GET", "/internal/additions/binance", ""},
		{"GET", "/user/alerts", ""},
		{"POST", "/user/alerts", `{"name":"n","enabled":true,"base":["binance"],"alertMethodId":1}`},
		{"GET", "/user/alerts/1", ""},
		{"PUT", "/user/alerts/1", `{"name":"n","enabled":true,"base":["binance"],"alertMethodId":1}`},
		{"DELETE", "/user/alerts/1", ""},
		{"GET", "/user/alert_methods", ""},
		{"POST", "/user/alert_methods", `{"url":"https://a.example.com"}`},
		{"DELETE", "/user/alert_methods/1", ""},
		{"GET", "/internal/alerts", ""},
		{"GET", "/internal/alerts/1", ""},
	}
	for name, pool := range map[string]*pgxpool.Pool{"unreachable": dead, "closed": closed} {
		ev := outageEnv(pool)
		for _, rt := range routes {
			t.Run(name+" "+rt.method+" "+rt.path, func(t *testing.T) {
				var body any
				if rt.body != "" {
					body = rt.body
				}
				r := ev.do(t, newUser(), rt.method, rt.path, body)
				if strings.HasPrefix(rt.path, "/internal/alerts") {
					r = ev.doService(t, rt.method, rt.path)
				}
				want := `{"error":"PostgreSQL is unavailable; retry later"}`
				if r.Status != http.StatusServiceUnavailable || strings.TrimSpace(r.Body) != want || r.Header.Get("Retry-After") != "1" {
					t.Fatalf("got %d Retry-After=%q %s, want 503 Retry-After=1 %s", r.Status, r.Header.Get("Retry-After"), r.Body, want)
				}
			})
		}
	}
}
