package evm

import (
	"encoding/json"
	"fmt"

	gojson "github.com/goccy/go-json"
)

// ParseBlock decodes an eth_getBlockByNumber result (full transactions). It uses a single-pass
// JSON decoder: blocks are large and parsing dominates ingest's CPU time.
func ParseBlock(raw json.RawMessage) (*Block, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b Block
	if err := unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return &b, nil
}

// unmarshal decodes with goccy/go-json. That decoder indexes past the end of some malformed
// documents (found by FuzzParseBlock, kept in testdata/fuzz); the out-of-range panic is turned
// into an error. Validating first with encoding/json instead halved decode throughput.
func unmarshal(raw []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed JSON (%v)", r)
		}
	}()
	return gojson.Unmarshal(raw, v)
}

// ParseReceipts decodes an eth_getBlockReceipts result; nil for a JSON null.
func ParseReceipts(raw json.RawMessage) ([]Receipt, error) {
	if isNull(raw) {
		return nil, nil
	}
	var rs []Receipt
	if err := unmarshal(raw, &rs); err != nil {
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
