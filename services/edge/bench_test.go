package edge_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
)

// In-process figures per request (no client sockets): the full edge handler against a bare
// ReverseProxy to the same backend. cmd/edgebench measures over real connections.
func BenchmarkProxyBare(b *testing.B) {
	be := newBackend(b)
	target, _ := url.Parse(be.URL)
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.SetXForwarded() }, Transport: httpx.NewTransport()}
	runParallel(b, rp, "")
}

func BenchmarkProxyFullEdge(b *testing.B) {
	e := newEdge(b, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.TiersFile = benchTiers(b) }})
	k, _ := e.key(b, edge.KeySpec{Tier: "bench"})
	runParallel(b, e.Handler, k)
}

func benchTiers(b *testing.B) string {
	p := b.TempDir() + "/tiers.yaml"
	if err := writeFile(p, "- {name: bench, rate: 10000000, burst: 10000000, heavyRate: 1, api: true, includedCredits: 1000000000000, overage: true}\n"); err != nil {
		b.Fatal(err)
	}
	return p
}

func runParallel(b *testing.B, h http.Handler, key string) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("GET", "/intelligence/address/0xabc", nil)
			r.RemoteAddr = "192.0.2.1:1"
			if key != "" {
				r.Header.Set("API-Key", key)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
}
