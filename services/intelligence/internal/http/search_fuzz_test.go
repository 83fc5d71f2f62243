package http

import (
	"errors"
	"net/url"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
)

// FuzzParseSearch: any query string either parses into pages within the limits or is a 400.
func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{
		"query=binance", "query=a&tokens=5&tokensOffset=3", `query=a&filterLimits={"tokens":5}`,
		"query=a&filterLimits[tags]=1&filterOffsets[tags]=2", "query=a&filterLimits[=1", `query=a&filterLimits={"x":1e3}`,
		"query=%00", "query=&tags=-1", `query=a&filterOffsets={"tags":99999999999999999999}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		r, err := ParseSearch(q)
		if err != nil {
			var se *httpx.StatusError
			if !errors.As(err, &se) || se.Status != 400 {
				t.Fatalf("%q: error %v is not a 400", raw, err)
			}
			return
		}
		if err := app.ValidSearchQuery(r.Query); err != nil {
			t.Fatalf("%q: accepted an invalid query: %v", raw, err)
		}
		for cat, p := range r.Pages {
			if p.Limit < 0 || p.Limit > app.MaxSearchResults || p.Offset < 0 || p.Offset > app.MaxSearchOffset {
				t.Fatalf("%q: %s page %+v out of range", raw, cat, p)
			}
		}
	})
}

// FuzzParseUpdates: any query string either parses into a window and a page within the limits
// or is a 400.
func FuzzParseUpdates(f *testing.F) {
	for _, s := range []string{"since=1700000000000", "from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z", "status=deleted&limit=5",
		"pageToken=42", "pageToken=-1", "since=1&from=2", "limit=1001", "to=0&since=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		u, err := ParseUpdates(q)
		if err != nil {
			var se *httpx.StatusError
			if !errors.As(err, &se) || se.Status != 400 {
				t.Fatalf("%q: error %v is not a 400", raw, err)
			}
			return
		}
		if u.Limit < 1 || u.Limit > app.MaxUpdates || u.After < 0 || u.To.Before(u.From) {
			t.Fatalf("%q: accepted %+v", raw, u)
		}
	})
}
