package indexer_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
)

// capture is a Publisher that keeps what it is given.
type capture struct {
	mu sync.Mutex
	ev []eventbus.Event
}

func (c *capture) Publish(_ context.Context, ev ...eventbus.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ev = append(c.ev, ev...)
	return nil
}

// TestMainnetContracts indexes mainnet block 18,000,000 (../shared/fixtures) with a node that
// answers code for its addresses: the contract its one creating transaction deployed (an
// EIP-1967 proxy by its slot), every token the block used (first sight: no deployer), and one
// token without code one block earlier, so created in the block inside the call of its first
// transfer's transaction. Each is published once on chain.contracts.v1 with its facts.
func TestMainnetContracts(t *testing.T) {
	m := rpctest.LoadMainnet(t)
	const created, impl = "0x0a82fc64ecfd6669899857ae3bb4c85398721fdd", "0x00000000000000000000000000000000000000aa"
	code := "0x8063a9059cbb1461000b5760006000fd5b00"
	base := m.Handler(t, true)
	var fresh string // the token whose code appears in the block
	h := func(method string, params []json.RawMessage) (any, *rpctest.Error) {
		switch method {
		case "eth_getCode":
			if strings.EqualFold(rpctest.String(params[0]), fresh) && rpctest.String(params[1]) != "0x112a880" {
				return "0x", nil
			}
			return code, nil
		case "eth_getStorageAt":
			if strings.EqualFold(rpctest.String(params[0]), created) {
				return "0x000000000000000000000000" + impl[2:], nil
			}
			return "0x" + strings.Repeat("0", 64), nil
		}
		return base(method, params)
	}
	// Indexed as avalanche: the package's tests share one database, and the other tests' ethereum
	// cursor must not start at this block.
	r := newRig(t, "avalanche", h)
	raws, err := r.client.Blocks(context.Background(), m.Number, m.Number)
	if err != nil {
		t.Fatal(err)
	}
	d, err := evm.Decode("avalanche", raws[0])
	if err != nil {
		t.Fatal(err)
	}
	var creator *eventsv1.Transaction
	txs := map[string]*eventsv1.Transaction{}
	for _, tx := range d.Transactions {
		txs[tx.Hash] = tx
		if tx.ContractCreated == created {
			creator = tx
		}
	}
	var first *eventsv1.Transfer
	for _, tr := range d.Transfers {
		if tr.TokenAddress != "" {
			first = tr
			break
		}
	}
	if creator == nil || first == nil || len(d.Tokens) < 2 {
		t.Fatalf("fixture: creation %v, first token transfer %v, %d tokens", creator, first, len(d.Tokens))
	}
	fresh = first.TokenAddress

	pub := &capture{}
	x := r.indexer(pub, m.Number)
	if _, err := x.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]*eventsv1.Contract{}
	for _, e := range pub.ev {
		if e.Topic != eventsv1.TopicContracts {
			continue
		}
		c := e.Msg.(*eventsv1.Contract)
		if got[c.Address] != nil || e.Key != "avalanche:"+c.Address || c.Chain != "avalanche" {
			t.Fatalf("contract %s published twice or under key %s", c.Address, e.Key)
		}
		got[c.Address] = c
		if c.Bytecode != code || !slices.Equal(c.FunctionSighashes, []string{"0xa9059cbb"}) || c.BlockNumber != m.Number ||
			c.BlockHash != d.Hash || c.BlockTimeMs != d.TimeMs {
			t.Errorf("contract %s: code facts %v", c.Address, c)
		}
	}
	want := func(addr, proxy, dep, hash, internal string) {
		t.Helper()
		c := got[addr]
		if c == nil || c.ProxyImplementation != proxy || c.Deployer != dep || c.DeployTxHash != hash || c.InternalDeployer != internal {
			t.Errorf("contract %s: %v; want proxy %q, deployer %q, tx %q, internal deployer %q", addr, c, proxy, dep, hash, internal)
		}
	}
	want(created, impl, creator.From, creator.Hash, "")
	want(fresh, "", txs[first.TransactionHash].From, first.TransactionHash, txs[first.TransactionHash].To)
	n := 1
	for _, tok := range d.Tokens {
		if tok != fresh && tok != created { // the created contract is a token of the block too
			want(tok, "", "", "", "")
		}
		if tok != created {
			n++
		}
	}
	if len(got) != n {
		t.Errorf("%d contracts published; want the creation and the block's other %d tokens", len(got), n-1)
	}
	for _, e := range pub.ev {
		if tx, ok := e.Msg.(*eventsv1.Transaction); ok && tx.Hash == creator.Hash && tx.BytecodeSize != uint32(len(code)-2)/2 {
			t.Errorf("creation's bytecode size %d", tx.BytecodeSize)
		}
	}
}
