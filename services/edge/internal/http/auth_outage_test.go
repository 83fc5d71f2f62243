package http

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

type downVerifier struct{}

func (downVerifier) Verify(context.Context, string) (httpx.Identity, error) {
	return httpx.Identity{}, errors.New("lookup key: failed to connect to PostgreSQL")
}

// A key that cannot be checked because the database is down is a 503 with Retry-After, as
// every dependency outage is, never a 401 or a 500.
func TestAuthenticationOutageIsA503WithRetryAfter(t *testing.T) {
	rt := routes.Route{Method: "GET", Pattern: "/chains", Class: routes.Standard}
	h := authenticate(rt, downVerifier{}, nil, slog.New(slog.DiscardHandler), http.NotFoundHandler())
	req := httptest.NewRequest("GET", "/chains", nil)
	req.Header.Set("API-Key", "ci_some_key")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	want := `{"error":"authentication is unavailable; retry later"}`
	if w.Code != 503 || strings.TrimSpace(w.Body.String()) != want || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("got %d Retry-After=%q %s, want 503 Retry-After=1 %s", w.Code, w.Header().Get("Retry-After"), w.Body, want)
	}
}
