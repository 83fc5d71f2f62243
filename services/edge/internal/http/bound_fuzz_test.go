package http

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// Whatever a caller sends, the most units the edge holds credits for is between 1 and the
// route's Max, and a batch body reaches the service byte for byte as it was sent.
func FuzzBoundUnits(f *testing.F) {
	for _, s := range []struct{ limit, body string }{
		{"50", `{"addresses":["0xa","0xb","0xa"]}`}, {"", `{"addresses":[]}`}, {"-1", `[]`},
		{"99999999999999999999", `{"addresses":"0xa"}`}, {" 7 ", ``}, {"1e3", `{"addresses":[1,2]}`},
		{"", `{"entity_ids":["a","b","a"]}`}, {"", `{"entity_ids":"a"}`},
	} {
		f.Add(s.limit, s.body)
	}
	byLimit := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{Param: "limit", Default: 50, Max: 1000}}
	byBody := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{List: "addresses", Max: 1000}}
	byEntities := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{List: "entity_ids", Max: 10}}
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
		r = httptest.NewRequest("POST", "/risk/entity/batch", bytes.NewReader([]byte(body)))
		if n, err := boundUnits(byEntities, r); err != nil || n < 1 || n > 10 {
			t.Fatalf("entity body %q: %d units (%v)", body, n, err)
		}
		if got, _ := io.ReadAll(r.Body); string(got) != body {
			t.Fatalf("entity body %q reached the service as %q", body, got)
		}
	})
}

// A chunked batch body is read into memory once: the metering's count of its addresses
// buffers it with its length, and wholeBody then hands that same buffer on, which the
// service receives with a Content-Length.
func TestChunkedBatchBodyBufferedOnce(t *testing.T) {
	const body = `{"addresses":["0xa","0xb","0xa"]}`
	r := httptest.NewRequest("POST", "/intelligence/address/batch", io.MultiReader(strings.NewReader(body)))
	r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} // as a server sees one
	byBody := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{List: "addresses", Max: 1000}}
	if n, err := boundUnits(byBody, r); err != nil || n != 2 {
		t.Fatalf("%d units (%v), want 2", n, err)
	}
	buffered := r.Body
	var served bool
	wholeBody(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		served = true
		if r.Body != buffered {
			t.Errorf("wholeBody read the body the metering had buffered again")
		}
		got, _ := io.ReadAll(r.Body)
		if string(got) != body || r.ContentLength != int64(len(body)) || r.TransferEncoding != nil {
			t.Errorf("the service gets %q, Content-Length %d, Transfer-Encoding %q", got, r.ContentLength, r.TransferEncoding)
		}
	})).ServeHTTP(httptest.NewRecorder(), r)
	if !served {
		t.Fatal("wholeBody did not serve the call")
	}
}

// A risk entity batch is bounded by the distinct strings of its entity_ids, not of addresses.
func TestEntityBatchBoundCountsEntityIDs(t *testing.T) {
	rt := routes.Route{Unit: routes.PerRow, Bound: routes.Bound{List: "entity_ids", Max: 10}}
	for body, want := range map[string]int64{
		`{"entity_ids":["a","b","a"]}`:                                   2,
		`{"addresses":["a","b","c"]}`:                                    1,
		`{"entity_ids":["1","2","3","4","5","6","7","8","9","10","11"]}`: 10,
	} {
		r := httptest.NewRequest("POST", "/risk/entity/batch", strings.NewReader(body))
		if n, err := boundUnits(rt, r); err != nil || n != want {
			t.Errorf("%s: %d units (%v), want %d", body, n, err, want)
		}
	}
}
