package http

import (
	"bytes"
	"io"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// Whatever a caller sends, the most units the edge holds credits for is between 1 and the
// route's Max, and a batch body reaches the service byte for byte as it was sent.
func FuzzBoundUnits(f *testing.F) {
	for _, s := range []struct{ limit, body string }{
		{"50", `{"addresses":["0xa","0xb","0xa"]}`}, {"", `{"addresses":[]}`}, {"-1", `[]`},
		{"99999999999999999999", `{"addresses":"0xa"}`}, {" 7 ", ``}, {"1e3", `{"addresses":[1,2]}`},
	} {
		f.Add(s.limit, s.body)
	}
	byLimit := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{Param: "limit", Default: 50, Max: 1000}}
	byBody := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{Addresses: true, Max: 1000}}
	f.Fuzz(func(t *testing.T, limit, body string) {
		r := httptest.NewRequest("GET", "/transfers?limit="+url.QueryEscape(limit), nil)
		if n, err := boundUnits(byLimit, r); err != nil || n < 1 || n > 1000 {
			t.Fatalf("limit=%q: %d units (%v)", limit, n, err)
		}
		r = httptest.NewRequest("POST", "/intelligence/address/batch", bytes.NewReader([]byte(body)))
		n, err := boundUnits(byBody, r)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("body %q: %d units (%v)", body, n, err)
		}
		if got, _ := io.ReadAll(r.Body); string(got) != body {
			t.Fatalf("body %q reached the service as %q", body, got)
		}
	})
}
