package e2e

import (
	"io"
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
	checkMethodsAndKeyThroughEdge(t, p)

	r = p.Get(t, "/internal/lookup")
	if r.Status != 404 {
		t.Fatalf("internal route reachable through the edge: %d %s", r.Status, r.Body)
	}

	r = p.Do(t, http.MethodGet, "/openapi.json", "", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"openapi": "3.1`) {
		t.Fatalf("/openapi.json: %d", r.Status)
	}
}

// checkMethodsAndKeyThroughEdge: a POST-only path is a 405 under GET, although the GET address
// route would take "batch" for an address; the single /all lookup reads chains as /batch/all
// does; two API-Key headers are refused, whichever key would have answered.
func checkMethodsAndKeyThroughEdge(t *testing.T, p *Platform) {
	t.Helper()
	for _, path := range []string{"/intelligence/address/batch", "/intelligence/address/batch/all",
		"/intelligence/address_enriched/batch", "/intelligence/address_enriched/batch/all"} {
		r := p.Get(t, path)
		if r.Status != 405 || r.Header.Get("Allow") != "POST" || r.Error() != "method GET not allowed on "+path+" (allowed: POST)" {
			t.Fatalf("GET %s: %d %v %s", path, r.Status, r.Header, r.Body)
		}
	}
	r := p.Get(t, "/intelligence/address/0x169f0448d6a407f82fe67d05d6b5ef3c239754d6/all?chains=foo")
	if r.Status != 400 || r.Error() != `chains: unknown chain "foo"` {
		t.Fatalf("/all with an unknown chain: %d %s", r.Status, r.Body)
	}
	req, err := http.NewRequest(http.MethodGet, p.URL+"/chains", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add("API-Key", p.KeyFor(t))
	req.Header.Add("API-Key", "not-a-key")
	resp, err := p.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 400 || string(body) != `{"error":"API-Key: give one key, not 2"}`+"\n" {
		t.Fatalf("two API-Key headers: %d %s", resp.StatusCode, body)
	}
}
