package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	intelligence "github.com/chainintel/chainintel/services/intelligence"
)

// Through the edge: unknown names in the transfers filters and an address that fits none of the
// requested chains are 404s naming the parameter on every route (API.md), a known pricing id
// and an unknown contract address are not errors.
func TestTransfersUnknownNamesThroughEdge(t *testing.T) {
	p := Get(t)
	const evm = "0x169f0448d6a407f82fe67d05d6b5ef3c239754d6"
	offChain := func(param string) string {
		return param + `: address "` + evm + `" is not valid on the requested chains (bitcoin)`
	}
	for _, c := range []struct {
		path   string
		status int
		err    string
	}{
		{"/transfers?tokens=e2e-no-such-token", 404, `tokens: unknown token "e2e-no-such-token"`},
		{"/swaps?tokens=e2e-no-such-token", 404, `tokens: unknown token "e2e-no-such-token"`},
		{"/transfers?from=deposit:e2e-no-such-entity", 404, `from: unknown entity "e2e-no-such-entity" in deposit:e2e-no-such-entity`},
		{"/transfers?base=e2e-no-such-entity", 404, `base: unknown entity "e2e-no-such-entity"`},
		{"/transfers?tokens=ethereum&limit=1", 200, ""},
		{"/transfers?tokens=0x9999999999999999999999999999999999999999", 200, ""},
		{"/transfers?chains=bitcoin&base=" + evm, 404, offChain("base")},
		{"/swaps?chains=bitcoin&base=" + evm, 404, offChain("base")},
		{"/transfers/histogram/simple?chains=bitcoin&base=" + evm, 404, offChain("base")},
		{"/counterparties/address/" + evm + "?chains=bitcoin", 404, offChain("address")},
		{"/flow/address/" + evm + "?chains=bitcoin", 404, offChain("address")},
		{"/volume/address/" + evm + "?chains=bitcoin", 404, offChain("address")},
		{"/history/address/" + evm + "?chains=bitcoin", 404, offChain("address")},
		{"/balances/address/" + evm + "?chains=bitcoin", 404, offChain("address")},
	} {
		r := p.DoPaced(t, http.MethodGet, c.path, p.KeyFor(t), nil) // the key's per-route-class rate limit
		if r.Status != c.status || c.err != "" && r.Error() != c.err {
			t.Errorf("%s: %d %s, want %d %q", c.path, r.Status, r.Body, c.status, c.err)
		}
	}
}

// Through the edge: an entity intelligence holds without attributed addresses (transfers' read
// model does not know it) and a type only such entities have match nothing (200), in a filter,
// behind deposit: and in the path; the edge's answers are whole bodies.
func TestTransfersUnknownNamesThroughEdgeKnownToIntelligence(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	suffix := randHex(4)
	ent, typ := "e2e-quiet-"+suffix, "e2equiet"+suffix
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"Quiet %s","type":%q}]}`, ent, suffix, typ)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	const empty = `{"transfers":[],"count":0}`
	for _, c := range []struct{ path, body string }{
		{"/transfers?from=" + ent, empty},
		{"/transfers?from=deposit:" + ent, empty},
		{"/transfers?to=type:" + typ, empty},
		{"/counterparties/entity/" + ent, `{}`},
	} {
		r := p.DoPaced(t, http.MethodGet, c.path, p.KeyFor(t), nil) // the key's per-route-class rate limit
		if r.Status != 200 || string(r.Body) != c.body {
			t.Errorf("%s: %d %s, want 200 %s", c.path, r.Status, r.Body, c.body)
		}
	}
}
