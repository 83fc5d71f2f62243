package e2e

import (
	"net/http"
	"testing"
)

// Encoded separators and dot segments never reach a route other than the one the edge
// authorised, through the real services: a free key does not reach the API-tier histogram, a
// caller without a key does not reach a keyed route, a standard route does not lead to a heavy
// one, and internal routes are not reachable.
func TestEdgePathsReachOnlyTheAuthorisedRoute(t *testing.T) {
	p := Get(t)
	free := p.NewKey(t, "free", "individual")
	cases := []struct{ path, key string }{
		{"/flow/address/..%2f..%2ftransfers%2fhistogram?base=binance", free},
		{"/flow/address/%2e%2e/%2e%2e/transfers/histogram?base=binance", free},
		{"/flow/address/..%5c..%5ctransfers%5chistogram?base=binance", free},
		{"/intelligence/entity/binance/summary%2f..", ""},
		{"/intelligence/entity/binance/summary/%2e%2e", ""},
		{"/intelligence/entity/x%2f..%2f..%2fentity%2fbinance/summary", ""},
		{"/flow/entity/..%2f..%2ftransfers%3fbase=binance", free},
		{"/tag/..%2f..%2f..%2finternal%2flookup/summary", free},
		{"/intelligence/address/0x00%2f..%2f..%2f..%2finternal%2fentities%2fx", free},
	}
	for _, c := range cases {
		r := p.Do(t, http.MethodGet, c.path, c.key, nil)
		if r.Status < 400 || r.Status >= 500 || r.Error() == "" {
			t.Errorf("%s (key %v): %d %s, want a 4xx error", c.path, c.key != "", r.Status, r.Body)
		}
	}
}
