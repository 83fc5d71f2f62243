package edge_test

import (
	"testing"

	edge "github.com/chainintel/chainintel/services/edge"
)

// A query parameter the route does not take is passed on and ignored (docs/contracts.md), and
// the answer names it in X-Chainintel-Ignored-Parameters, so a misspelt filter shows; the
// parameters a route documents (honoured or accepted and ignored) are not named, nor is a name
// that could shape the header.
func TestIgnoredParametersAreNamed(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	addr := "/balances/address/0x28c6c06298d514db089934071355e5743bf21d60"
	for _, c := range []struct{ path, want string }{
		{addr + "?chains=ethereum", ""},
		{addr + "?chain=ethereum&limt=5", "chain,limt"},
		{addr + "?entity=binance&_=1700000000", "_,entity"},
		{"/transfers/histogram/simple?base=binance&from=x", ""}, // documented: accepted and ignored
		{addr + "?bad%0D%0Aname=1&zz%2C=1&ok=1", "?,ok"},
		{"/chains?x=1", "x"},
	} {
		r := e.get(c.path, k)
		if got := r.Header.Get("X-Chainintel-Ignored-Parameters"); got != c.want {
			t.Errorf("%s: %d, header %q, want %q", c.path, r.Status, got, c.want)
		}
	}
}
