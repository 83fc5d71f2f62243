package evm_test

import (
	"testing"

	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
)

// BenchmarkDecodeMainnet measures JSON-RPC decode throughput on the mainnet fixture: parsing
// the eth_getBlockByNumber and eth_getBlockReceipts results and decoding them into events.
func BenchmarkDecodeMainnet(b *testing.B) {
	m := rpctest.LoadMainnet(b)
	b.SetBytes(int64(len(m.Block) + len(m.Receipts)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		blk, err := evm.ParseBlock(m.Block)
		if err != nil {
			b.Fatal(err)
		}
		rcs, err := evm.ParseReceipts(m.Receipts)
		if err != nil {
			b.Fatal(err)
		}
		d, err := evm.Decode("ethereum", &evm.RawBlock{Block: blk, Receipts: rcs})
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Transfers) != 180 {
			b.Fatal(len(d.Transfers))
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "blocks/s")
}
