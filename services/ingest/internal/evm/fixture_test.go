package evm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
)

// The expectation is computed here from the raw fixture JSON with math/big, independently of
// the decoder.

type rawLog struct {
	Address  string   `json:"address"`
	Topics   []string `json:"topics"`
	Data     string   `json:"data"`
	LogIndex string   `json:"logIndex"`
}

type rawReceipt struct {
	TransactionHash string   `json:"transactionHash"`
	Status          string   `json:"status"`
	Logs            []rawLog `json:"logs"`
}

type rawTx struct {
	Hash  string  `json:"hash"`
	From  string  `json:"from"`
	To    *string `json:"to"`
	Value string  `json:"value"`
}

type row struct{ id, from, to, token, amount string }

func hexInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if !ok {
		if strings.TrimPrefix(s, "0x") == "" {
			return new(big.Int)
		}
		panic("bad hex " + s)
	}
	return v
}

func word(data string, i int) *big.Int { return hexInt(data[2+64*i : 2+64*(i+1)]) }

func signed(v *big.Int) *big.Int {
	if v.Bit(255) == 1 {
		return new(big.Int).Sub(v, new(big.Int).Lsh(big.NewInt(1), 256))
	}
	return v
}

func topicAddr(t string) string { return "0x" + strings.ToLower(t[26:]) }

func expected(t *testing.T, m *rpctest.Mainnet) (transfers []row, swaps []row) {
	var block struct {
		Transactions []rawTx `json:"transactions"`
	}
	var receipts []rawReceipt
	if err := json.Unmarshal(m.Block, &block); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m.Receipts, &receipts); err != nil {
		t.Fatal(err)
	}
	const transfer = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	const v2 = "0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822"
	const v3 = "0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67"
	for i, r := range receipts {
		if r.Status != "0x1" {
			continue
		}
		tx := block.Transactions[i]
		if v := hexInt(tx.Value); v.Sign() > 0 && tx.To != nil {
			transfers = append(transfers, row{strings.ToLower(tx.Hash) + "_ext", strings.ToLower(tx.From), strings.ToLower(*tx.To), "", v.String()})
		}
		for _, l := range r.Logs {
			idx := strconv.FormatInt(hexInt(l.LogIndex).Int64(), 10)
			id := strings.ToLower(r.TransactionHash) + "_" + idx
			switch l.Topics[0] {
			case transfer:
				if len(l.Topics) != 3 || len(l.Data) != 66 {
					continue
				}
				transfers = append(transfers, row{id, topicAddr(l.Topics[1]), topicAddr(l.Topics[2]), strings.ToLower(l.Address), hexInt(l.Data).String()})
			case v2:
				a0 := new(big.Int).Sub(word(l.Data, 0), word(l.Data, 2))
				a1 := new(big.Int).Sub(word(l.Data, 1), word(l.Data, 3))
				swaps = append(swaps, row{id, topicAddr(l.Topics[1]), topicAddr(l.Topics[2]), strings.ToLower(l.Address), a0.String() + "," + a1.String()})
			case v3:
				a0, a1 := signed(word(l.Data, 0)), signed(word(l.Data, 1))
				swaps = append(swaps, row{id, topicAddr(l.Topics[1]), topicAddr(l.Topics[2]), strings.ToLower(l.Address), a0.String() + "," + a1.String()})
			}
		}
	}
	return transfers, swaps
}

func sortRows(rs []row) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].id < rs[j].id })
}

func TestMainnetBlock18000000(t *testing.T) {
	m := rpctest.LoadMainnet(t)
	wantT, wantS := expected(t, m)
	// Sanity of the expectation itself against counts read off the fixture by hand.
	if len(wantS) != 29 {
		t.Fatalf("expectation has %d swaps, the fixture has 27 V2 and 2 V3 swap logs", len(wantS))
	}
	tokens := 0
	for _, r := range wantT {
		if r.token != "" {
			tokens++
		}
	}
	if tokens != 141 {
		t.Fatalf("expectation has %d token transfers; the fixture has 141 three-topic Transfer logs (and 2 ERC-721 ones)", tokens)
	}
	for _, blockReceipts := range []bool{true, false} {
		t.Run(fmt.Sprintf("eth_getBlockReceipts=%v", blockReceipts), func(t *testing.T) {
			srv := rpctest.Start(t, m.Handler(t, blockReceipts))
			c, err := evm.Dial(context.Background(), srv.URL, evm.ClientOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			blocks, err := c.Blocks(context.Background(), m.Number, m.Number)
			if err != nil {
				t.Fatal(err)
			}
			d, err := evm.Decode("ethereum", blocks[0])
			if err != nil {
				t.Fatal(err)
			}
			var gotT, gotS []row
			for _, tr := range d.Transfers {
				gotT = append(gotT, row{tr.Id, tr.From, tr.To, tr.TokenAddress, tr.Amount})
			}
			for _, s := range d.Swaps {
				gotS = append(gotS, row{s.Id, s.Sender, s.Receiver, s.ContractAddress, s.Amount0 + "," + s.Amount1})
			}
			sortRows(gotT)
			sortRows(gotS)
			sortRows(wantT)
			sortRows(wantS)
			compare(t, "transfers", gotT, wantT)
			compare(t, "swaps", gotS, wantS)
			if len(d.Transactions) != 94 {
				t.Fatalf("%d transactions, want 94", len(d.Transactions))
			}
			failed := 0
			for _, tx := range d.Transactions {
				if !tx.Success {
					failed++
					for _, tr := range d.Transfers {
						if tr.TransactionHash == tx.Hash {
							t.Fatalf("failed transaction %s produced transfer %s", tx.Hash, tr.Id)
						}
					}
				}
			}
			if failed != 2 {
				t.Fatalf("%d failed transactions, want 2", failed)
			}
			if !blockReceipts && srv.Calls.Load() < 95 {
				t.Fatalf("fallback made %d calls; want one eth_getTransactionReceipt per transaction", srv.Calls.Load())
			}
		})
	}
}

func compare(t *testing.T, what string, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: decoded %d, the fixture's logs have %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s %d: decoded %+v, want %+v", what, i, got[i], want[i])
		}
	}
	t.Logf("%s: %d match the fixture exactly", what, len(got))
}
