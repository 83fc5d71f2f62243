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
