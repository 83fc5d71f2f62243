package evm

import (
	"encoding/json"
	"fmt"

	gojson "github.com/goccy/go-json"
)

// ParseBlock decodes an eth_getBlockByNumber result (full transactions). It uses a single-pass
// JSON decoder: blocks are large and parsing dominates ingest's CPU time. That decoder can read
// past the end of some malformed documents (found by FuzzParseBlock: testdata/fuzz), so input is
// first checked with the standard library's validator, which is several times cheaper than a decode.
func ParseBlock(raw json.RawMessage) (*Block, error) {
	if isNull(raw) {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("decode block: invalid JSON")
	}
	var b Block
	if err := gojson.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return &b, nil
}

// ParseReceipts decodes an eth_getBlockReceipts result; nil for a JSON null.
func ParseReceipts(raw json.RawMessage) ([]Receipt, error) {
	if isNull(raw) {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("decode receipts: invalid JSON")
	}
	var rs []Receipt
	if err := gojson.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("decode receipts: %w", err)
	}
	if rs == nil {
		rs = []Receipt{}
	}
	return rs, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
