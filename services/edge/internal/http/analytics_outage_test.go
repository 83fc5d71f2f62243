package http

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
	"github.com/jackc/pgx/v5/pgxpool"
)

// With PostgreSQL unreachable, the edge's own database-backed routes answer 503 naming it with
// Retry-After, as every service does.
func TestAnalyticsPostgresDownIsA503(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+addr+"/x?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	a := Analytics{Usage: usage.NewStore(pool), Tiers: tiers.Default(), Routes: routes.Table}
	id := httpx.Identity{KeyID: "k", UserID: "u", Role: httpx.RoleIndividual, Tier: "api"}
	for path, h := range map[string]http.Handler{
		"/analytics/credit-periods": a.CreditPeriods(),
		"/analytics/endpoint-calls": a.EndpointCalls(),
	} {
		req := httptest.NewRequest("GET", path, nil)
		req = req.WithContext(httpx.WithIdentity(req.Context(), id))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		want := `{"error":"PostgreSQL is unavailable; retry later"}`
		if w.Code != http.StatusServiceUnavailable || strings.TrimSpace(w.Body.String()) != want || w.Header().Get("Retry-After") != "1" {
			t.Errorf("%s: got %d Retry-After=%q %s, want 503 Retry-After=1 %s", path, w.Code, w.Header().Get("Retry-After"), w.Body, want)
		}
	}
}
