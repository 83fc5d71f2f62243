package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// Encoded separators and dot segments never reach a route other than the one the edge
// authorised, through the real services. Each attack is a path the edge authorises as one route
// that a resolver would turn into another (the target); the attack must not get the target's
// answer: a free key does not reach the API-tier histogram, a caller without a key does not reach
// a keyed route, a standard route does not lead to a heavy one, a public route does not lead to
// an internal one. Dot segments in any encoding are refused by the edge.
func TestEdgePathsReachOnlyTheAuthorisedRoute(t *testing.T) {
	p := Get(t)
	free := p.NewKey(t, "free", "individual")
	api := p.NewKey(t, "api", "individual")
	cases := []struct{ attack, key, target, targetKey string }{
		{"/flow/address/..%2f..%2ftransfers%2fhistogram?base=binance", free, "/transfers/histogram?base=binance", api},
		{"/intelligence/entity/..%2f..%2ftag%2fx/summary", "", "/tag/x/summary", api},
		{"/tx/..%2ftransfers?base=binance", free, "/transfers?base=binance", api},
		{"/user/entities/..%2f..%2finternal%2fentities%2fx", free, "/user/entities/x", free},
	}
	for _, c := range cases {
		target := p.Do(t, http.MethodGet, c.target, c.targetKey, nil)
		r := p.Do(t, http.MethodGet, c.attack, c.key, nil)
		if r.Status == target.Status && string(r.Body) == string(target.Body) {
			t.Errorf("%s (key %v) got the answer of %s: %d %s", c.attack, c.key != "", c.target, r.Status, r.Body)
		}
		if r.Status < 400 || r.Status >= 500 || r.Error() == "" {
			t.Errorf("%s (key %v): %d %s, want a 4xx error of the authorised route", c.attack, c.key != "", r.Status, r.Body)
		}
	}
	for _, path := range []string{
		"/flow/address/%2e%2e/%2e%2e/transfers/histogram?base=binance",
		"/intelligence/entity/x/summary/%2e%2e",
		"/flow/address/..%5c..%5ctransfers%5chistogram",
		"/user//labels",
	} {
		r := p.Do(t, http.MethodGet, path, free, nil)
		if r.Status != 400 || !strings.HasPrefix(r.Error(), "path segment ") {
			t.Errorf("%s: %d %s, want the edge's 400", path, r.Status, r.Body)
		}
	}
}
