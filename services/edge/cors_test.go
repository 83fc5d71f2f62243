package edge_test

import (
	"net/http"
	"testing"

	"github.com/chainintel/chainintel/services/edge"
)

// With EDGE_CORS_ORIGINS a browser page of a listed origin may call the API: its preflight is
// answered before authentication and costs nothing, and the actual call's answer names the
// origin and exposes the rate-limit and credit headers. Another origin gets no CORS headers.
// Without the setting an OPTIONS is a 405 as any unrouted method is.
func TestCORS(t *testing.T) {
	const origin = "https://app.example.com"
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.CORSOrigins = []string{origin} }})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	before := e.backendCalls()
	pre := e.do(http.MethodOptions, "/tx/0xabc", "", "Origin", origin,
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "api-key")
	if pre.Status != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != origin ||
		pre.Header.Get("Access-Control-Allow-Headers") == "" || pre.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight: %d %v %s", pre.Status, pre.Header, pre.Body)
	}
	if e.backendCalls() != before {
		t.Errorf("a preflight reached the service")
	}
	r := e.do(http.MethodGet, "/tx/0xabc", k, "Origin", origin)
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != origin || r.Header.Get("X-Credits-Used") == "" {
		t.Fatalf("call: %d %v", r.Status, r.Header)
	}
	if exp := r.Header.Get("Access-Control-Expose-Headers"); exp == "" {
		t.Errorf("no exposed headers: %v", r.Header)
	}
	other := e.do(http.MethodGet, "/tx/0xabc", k, "Origin", "https://evil.example")
	if other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin was allowed: %v", other.Header)
	}

	off := newEdge(t, edgeOpts{noConsume: true})
	if r := off.do(http.MethodOptions, "/tx/0xabc", "", "Origin", origin, "Access-Control-Request-Method", "GET"); r.Status != http.StatusMethodNotAllowed ||
		r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("without EDGE_CORS_ORIGINS: %d %v", r.Status, r.Header)
	}
}
