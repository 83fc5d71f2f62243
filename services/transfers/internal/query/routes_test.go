package query

import (
	"net/url"
	"testing"
)

// FuzzTxTransfersVolume: the parsers of /transfers/tx/{hash} and /volume/... either accept a
// query with a configured chain and a known transfer type, or fail naming a parameter.
func FuzzTxTransfersVolume(f *testing.F) {
	for _, s := range append(seeds, "chain=ethereum&transferType=token", "chain=mars", "transferType=erc20", "chain=base&chain=ethereum", "chains=base,ethereum") {
		f.Add(s)
	}
	p := parser(f)
	f.Fuzz(func(t *testing.T, raw string) {
		fuzzParse(t, raw, func(q url.Values) error {
			tx, err := p.TxTransfers(q)
			if err == nil && (tx.Chain != "" && !p.Chains.Has(tx.Chain) || tx.Type != "" && tx.Type != "external" && tx.Type != "internal" && tx.Type != "token") {
				t.Fatalf("%q: accepted %+v", raw, tx)
			}
			return err
		})
		fuzzParse(t, raw, func(q url.Values) error { _, err := p.Volume(q); return err })
	})
}
