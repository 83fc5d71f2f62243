package rpctest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/sharedtest"
)

// Mainnet is the recorded mainnet block 18,000,000 (../shared/fixtures/evm-mainnet): the raw
// eth_getBlockByNumber (full transactions) and eth_getBlockReceipts results.
type Mainnet struct {
	Number   uint64
	Block    json.RawMessage
	Receipts json.RawMessage
}

// LoadMainnet reads the fixture, skipping t when ../shared is absent.
func LoadMainnet(t testing.TB) *Mainnet {
	t.Helper()
	m := &Mainnet{Number: 18_000_000}
	m.Block = loadResult(t, sharedtest.Path(t, "fixtures/evm-mainnet/block-18000000.eth_getBlockByNumber.json"))
	m.Receipts = loadResult(t, sharedtest.Path(t, "fixtures/evm-mainnet/block-18000000.eth_getBlockReceipts.json"))
	return m
}

func loadResult(t testing.TB, path string) json.RawMessage {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []struct {
		Response struct {
			Result json.RawMessage `json:"result"`
		} `json:"response"`
	}
	if err := json.Unmarshal(b, &pairs); err != nil || len(pairs) != 1 {
		t.Fatalf("%s: want one request/response pair (%v)", path, err)
	}
	return pairs[0].Response.Result
}

// Handler serves the fixture block (by number or "latest"), its receipts (per block, or per
// transaction when blockReceipts is false, as for nodes without eth_getBlockReceipts) and
// eth_blockNumber; every eth_call reverts, eth_getCode answers "0x", eth_getBalance answers 0.
func (m *Mainnet) Handler(t testing.TB, blockReceipts bool) Handler {
	var receipts []json.RawMessage
	if err := json.Unmarshal(m.Receipts, &receipts); err != nil {
		t.Fatal(err)
	}
	byHash := map[string]json.RawMessage{}
	for _, r := range receipts {
		var h struct {
			TransactionHash string `json:"transactionHash"`
		}
		_ = json.Unmarshal(r, &h)
		byHash[strings.ToLower(h.TransactionHash)] = r
	}
	num := "0x112a880"
	return func(method string, params []json.RawMessage) (any, *Error) {
		switch method {
		case "eth_blockNumber":
			return num, nil
		case "eth_chainId":
			return "0x1", nil
		case "eth_getBlockByNumber":
			if p := strings.ToLower(String(params[0])); p == num || p == "latest" {
				return m.Block, nil
			}
			return nil, nil
		case "eth_getBlockReceipts":
			if !blockReceipts {
				return nil, MethodNotFound(method)
			}
			if strings.ToLower(String(params[0])) == num {
				return m.Receipts, nil
			}
			return nil, nil
		case "eth_getTransactionReceipt":
			if r, ok := byHash[strings.ToLower(String(params[0]))]; ok {
				return r, nil
			}
			return nil, nil
		case "eth_call":
			return nil, Revert
		case "eth_getCode":
			return "0x", nil
		case "eth_getBalance":
			return "0x0", nil
		}
		return nil, MethodNotFound(method)
	}
}
