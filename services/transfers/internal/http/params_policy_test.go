package http_test

import (
	"bytes"
	"testing"

	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// The shared parameter policy (libs/params DropUnknown, docs/contracts.md): a parameter a route
// does not take is ignored, so each route answers exactly as it does without it.
func TestUnknownParametersAreIgnored(t *testing.T) {
	e := world(t)
	for _, path := range []string{
		"/transfers?base=" + tw.U1,
		"/transfers/histogram?base=" + tw.U1,
		"/transfers/histogram/simple?base=" + tw.U1,
		"/swaps?base=" + tw.U1,
		"/flow/address/" + tw.U1 + "?chains=ethereum",
		"/counterparties/address/" + tw.U1 + "?flow=either",
		"/tx/" + tw.TxHash(1) + "?",
	} {
		plain := e.get(t, &alice, path)
		extra := e.get(t, &alice, path+"&sortkey=usd&notAParameter=1&notAParameter=2")
		if plain.status != 200 || extra.status != plain.status || !bytes.Equal(extra.body, plain.body) {
			t.Errorf("%s: with unknown parameters %d %s, without %d %s", path, extra.status, extra.body, plain.status, plain.body)
		}
	}
}
