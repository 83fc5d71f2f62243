package evm

import (
	"encoding/json"
	"fmt"

	"github.com/chainintel/chainintel/libs/httpx"
)

// ParseBlock decodes an eth_getBlockByNumber result (full transactions). It uses a single-pass
// JSON decoder (httpx.UnmarshalFast, panic-safe; crashers kept in testdata/fuzz): blocks are
// large and parsing dominates ingest's CPU time.
func ParseBlock(raw json.RawMessage) (*Block, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b Block
	if err := httpx.UnmarshalFast(raw, &b); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return &b, nil
}

// ParseReceipts decodes an eth_getBlockReceipts result; nil for a JSON null.
func ParseReceipts(raw json.RawMessage) ([]Receipt, error) {
	if isNull(raw) {
		return nil, nil
	}
	var rs []Receipt
	if err := httpx.UnmarshalFast(raw, &rs); err != nil {
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
