package http_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
)

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

func outageRouter(t *testing.T, s *store.Store, ulURL string) *gin.Engine {
	t.Helper()
	client, err := ulclient.New(ulURL, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(s, app.NewLabelCache(client, time.Minute, 1000), cs),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	return r
}

// wantUnavailable checks the one answer to a dependency outage: 503, Retry-After, and the
// error naming the dependency.
func wantUnavailable(t *testing.T, w *httptest.ResponseRecorder, dependency string) {
	t.Helper()
	want := `{"error":"` + dependency + ` is unavailable; retry later"}`
	if w.Code != http.StatusServiceUnavailable || strings.TrimSpace(w.Body.String()) != want || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("got %d Retry-After=%q %s, want 503 Retry-After=1 %s", w.Code, w.Header().Get("Retry-After"), w.Body, want)
	}
}

func serve(r *gin.Engine, who *httpx.Identity, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if who != nil {
		httpx.NewSigner(secret).Sign(req.Header, *who, time.Now())
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

// outageRoutes is every route of the service, each with a query that reads the database and
// shows addresses (so the caller's labels are part of its answer).
// labels says whether the answer involves user-labels (the caller's labels on addresses, or
// the caller's entity as base).
type outageRoute struct {
	method, path, body string
	labels             bool
}

func outageRoutes(e *env) []outageRoute {
	act, _ := json.Marshal(map[string]any{"addresses": []map[string]string{{"chainType": "evm", "address": tw.U1}}})
	return []outageRoute{
		{"GET", "/transfers?base=" + tw.U1, "", true},
		{"GET", "/transfers?base=" + e.aliceEntity, "", true},
		{"GET", "/transfers/histogram?base=" + e.aliceEntity, "", true},
		{"GET", "/transfers/histogram/simple?base=" + e.aliceEntity, "", true},
		{"GET", "/swaps?base=" + e.aliceEntity, "", true},
		{"GET", "/tx/" + tw.TxHash(1), "", true},
		{"GET", "/counterparties/address/" + tw.U1, "", true},
		{"GET", "/counterparties/entity/" + e.aliceEntity, "", true},
		{"GET", "/flow/address/" + tw.U1, "", false},
		{"GET", "/flow/entity/" + e.aliceEntity, "", true},
		{"POST", "/internal/activity", string(act), false},
	}
}

// With PostgreSQL gone (a pool at a port nothing listens on, and a pool closed under the
// service), every route answers 503 naming PostgreSQL with Retry-After, never a 500.
func TestPostgresDownIsA503OnEveryRoute(t *testing.T) {
	e := world(t)
	ctx := context.Background()
	dead, err := pgxpool.New(ctx, strings.Replace(deadURL(t), "http://", "postgres://postgres@", 1)+"/x?connect_timeout=2")
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
	for name, pool := range map[string]*pgxpool.Pool{"unreachable": dead, "closed": closed} {
		r := outageRouter(t, store.New(pool, store.DefaultOptions()), e.ulURL)
		for _, rt := range outageRoutes(e) {
			t.Run(name+" "+rt.method+" "+rt.path, func(t *testing.T) {
				wantUnavailable(t, serve(r, &alice, rt.method, rt.path, rt.body), "PostgreSQL")
			})
		}
	}
}

// With user-labels unreachable, a route whose answer carries the caller's labels (or that
// resolves the caller's entity) answers 503 naming user-labels: an answer without them would
// look complete and be wrong.
func TestUserLabelsDownIsA503(t *testing.T) {
	e := world(t)
	r := outageRouter(t, e.store, deadURL(t))
	for _, rt := range outageRoutes(e) {
		if !rt.labels {
			continue
		}
		t.Run(rt.path, func(t *testing.T) {
			wantUnavailable(t, serve(r, &alice, rt.method, rt.path, rt.body), "user-labels")
		})
	}
}
