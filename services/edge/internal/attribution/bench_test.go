package attribution

import (
	"encoding/json"
	"strings"
	"testing"
)

func benchDoc() []byte {
	item := `{"id":"t","fromAddress":{"address":"0xab","chain":"ethereum","serviceEntity":{"id":"binance","name":"Binance"},"serviceLabel":{"name":"Hot Wallet"}},"toAddress":{"address":"0xcd","serviceEntity":null},"unitValue":1.5,"historicalUSD":3000.25,"note":"serviceLabel"}`
	return []byte(`{"transfers":[` + strings.TrimSuffix(strings.Repeat(item+",", 1000), ",") + `],"count":1000}`)
}

// BenchmarkJSONValidBaseline is the baseline for BenchmarkKeyRewriter: encoding/json's
// scanner over the same answer, the least any JSON-aware pass costs.
func BenchmarkJSONValidBaseline(b *testing.B) {
	doc := benchDoc()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !json.Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkKeyRewriter measures the rewrite of a 1000-transfer-like answer in 32 KiB writes, as
// the proxy copies it (go test -bench KeyRewriter -benchmem ./services/edge/internal/attribution/).
func BenchmarkKeyRewriter(b *testing.B) {
	doc := benchDoc()
	n := names(b, "acme")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		rw := NewKeyRewriter(n)
		for off := 0; off < len(doc); off += 32 << 10 {
			rw.Rewrite(doc[off:min(off+32<<10, len(doc))])
		}
	}
}
