package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// The foundation's promises, through the edge.
func TestPlatformBasics(t *testing.T) {
	p := Get(t)

	r := p.Do(t, http.MethodGet, "/health", "", nil)
	if r.Status != 200 || string(r.Body) != "ok" {
		t.Fatalf("/health: %d %q", r.Status, r.Body)
	}

	r = p.Get(t, "/chains")
	var chains []string
	r.JSON(t, &chains)
	if r.Status != 200 || len(chains) == 0 || chains[0] != "ethereum" {
		t.Fatalf("/chains: %d %s", r.Status, r.Body)
	}

	r = p.Do(t, http.MethodGet, "/chains", "", nil)
	if r.Status != 401 || r.Error() != "error validating API key" {
		t.Fatalf("/chains without key: %d %s", r.Status, r.Body)
	}
	r = p.Do(t, http.MethodGet, "/chains", "not-a-key", nil)
	if r.Status != 401 || r.Error() != "error validating API key" {
		t.Fatalf("/chains with a bad key: %d %s", r.Status, r.Body)
	}

	r = p.Get(t, "/no/such/route")
	if r.Status != 404 || r.Error() == "" {
		t.Fatalf("unknown route: %d %s", r.Status, r.Body)
	}
	r = p.Do(t, http.MethodPost, "/chains", p.APIKey, nil)
	if r.Status != 405 || r.Error() == "" {
		t.Fatalf("wrong method: %d %s", r.Status, r.Body)
	}

	r = p.Get(t, "/internal/lookup")
	if r.Status != 404 {
		t.Fatalf("internal route reachable through the edge: %d %s", r.Status, r.Body)
	}

	r = p.Do(t, http.MethodGet, "/openapi.json", "", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"openapi": "3.1`) {
		t.Fatalf("/openapi.json: %d", r.Status)
	}
}
