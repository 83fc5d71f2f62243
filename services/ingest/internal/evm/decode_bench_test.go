package evm_test

import (
	"encoding/json"
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

// BenchmarkDecodeMainnetEncodingJSON is BenchmarkDecodeMainnet with the block and receipts
// parsed by encoding/json into the same types: what the decoder's goccy/go-json is compared
// with (`-bench DecodeMainnet` prints both).
func BenchmarkDecodeMainnetEncodingJSON(b *testing.B) {
	m := rpctest.LoadMainnet(b)
	b.SetBytes(int64(len(m.Block) + len(m.Receipts)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var blk evm.Block
		if err := json.Unmarshal(m.Block, &blk); err != nil {
			b.Fatal(err)
		}
		var rcs []evm.Receipt
		if err := json.Unmarshal(m.Receipts, &rcs); err != nil {
			b.Fatal(err)
		}
		d, err := evm.Decode("ethereum", &evm.RawBlock{Block: &blk, Receipts: rcs})
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

// BenchmarkDecodeMainnetValidFirst is BenchmarkDecodeMainnet with both documents checked by
// encoding/json's json.Valid before goccy/go-json parses them: the guard against go-json's
// panics on malformed input the decoder does without (it recovers them instead).
func BenchmarkDecodeMainnetValidFirst(b *testing.B) {
	m := rpctest.LoadMainnet(b)
	b.SetBytes(int64(len(m.Block) + len(m.Receipts)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if !json.Valid(m.Block) || !json.Valid(m.Receipts) {
			b.Fatal("fixture is not valid JSON")
		}
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
