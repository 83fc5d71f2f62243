package evm_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
)

// benchDecode measures, on the mainnet fixture, parse (the block and receipts documents into the
// decoder's types) followed by decoding them into events, and reports blocks/s.
func benchDecode(b *testing.B, parse func(block, receipts []byte) (*evm.Block, []evm.Receipt, error)) {
	m := rpctest.LoadMainnet(b)
	b.SetBytes(int64(len(m.Block) + len(m.Receipts)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		blk, rcs, err := parse(m.Block, m.Receipts)
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

// parseGoJSON is the decoder's own parsing (goccy/go-json).
func parseGoJSON(block, receipts []byte) (*evm.Block, []evm.Receipt, error) {
	blk, err := evm.ParseBlock(block)
	if err != nil {
		return nil, nil, err
	}
	rcs, err := evm.ParseReceipts(receipts)
	return blk, rcs, err
}

// BenchmarkDecodeMainnet measures JSON-RPC decode throughput on the mainnet fixture: parsing
// the eth_getBlockByNumber and eth_getBlockReceipts results and decoding them into events.
func BenchmarkDecodeMainnet(b *testing.B) {
	benchDecode(b, parseGoJSON)
}

// BenchmarkDecodeMainnetEncodingJSON is BenchmarkDecodeMainnet with the block and receipts
// parsed by encoding/json into the same types: what the decoder's goccy/go-json is compared
// with (`-bench DecodeMainnet` prints both).
func BenchmarkDecodeMainnetEncodingJSON(b *testing.B) {
	benchDecode(b, func(block, receipts []byte) (*evm.Block, []evm.Receipt, error) {
		var blk evm.Block
		if err := json.Unmarshal(block, &blk); err != nil {
			return nil, nil, err
		}
		var rcs []evm.Receipt
		err := json.Unmarshal(receipts, &rcs)
		return &blk, rcs, err
	})
}

// BenchmarkDecodeMainnetValidFirst is BenchmarkDecodeMainnet with both documents checked by
// encoding/json's json.Valid before goccy/go-json parses them: the guard against go-json's
// panics on malformed input the decoder does without (it recovers them instead).
func BenchmarkDecodeMainnetValidFirst(b *testing.B) {
	benchDecode(b, func(block, receipts []byte) (*evm.Block, []evm.Receipt, error) {
		if !json.Valid(block) || !json.Valid(receipts) {
			return nil, nil, errors.New("fixture is not valid JSON")
		}
		return parseGoJSON(block, receipts)
	})
}
