package indexer_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/indexer"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestCodeAppearsAfterFunding: a counterfactual wallet is paid before it has code (block 1),
// again before its code (block 10), then a factory deploys it inside a call (block 20, no receipt
// names it) and it is paid again (blocks 31 and 52). Blocks are 12 s apart: the answer "no code"
// read at block 3 holds for 3 minutes of chain time (blocks up to 17), so block 10 costs no read;
// block 31's round reads again, flags the transfer toIsContract and publishes the contract
// record at the round's last block, without a creation; the contract keeps its answer.
func TestCodeAppearsAfterFunding(t *testing.T) {
	pub := &capture{}
	got, reads, _ := walletRun(t, "ethereum_codecache", "0x6080", pub)
	want := []string{
		"transfer 1 toIsContract=false",
		"transfer 10 toIsContract=false",
		"contract " + evm.Addr(counterfactual) + " block 33 code 0x6080 deployer \"\" tx \"\"",
		"transfer 31 toIsContract=true",
		"transfer 52 toIsContract=true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("published:\n%q\nwant\n%q", got, want)
	}
	// Rounds end at blocks 3, 6, ... 33: the flag's first read, its re-read once 3 minutes have
	// passed, and the contract record's read; none after, a contract keeps its answer.
	if !slices.Equal(reads, []uint64{3, 33, 33}) {
		t.Errorf("wallet's code read at blocks %v, want [3 33 33]", reads)
	}
}

// TestContractRecordSurvivesRetry: the round that finds the wallet's code fails to publish (its
// events, the contract record among them, are not acknowledged) and is retried: the retry reads
// the code again, still as appeared after none, and publishes the record with the flagged
// transfer.
func TestContractRecordSurvivesRetry(t *testing.T) {
	pub := &failContractOnce{}
	got, reads, failures := walletRun(t, "ethereum_coderetry", "0x6080", pub)
	want := []string{
		"transfer 1 toIsContract=false",
		"transfer 10 toIsContract=false",
		"contract " + evm.Addr(counterfactual) + " block 33 code 0x6080 deployer \"\" tx \"\"",
		"transfer 31 toIsContract=true",
		"transfer 52 toIsContract=true",
	}
	if failures != 1 || !slices.Equal(got, want) {
		t.Errorf("%d failed rounds, published:\n%q\nwant 1 and\n%q", failures, got, want)
	}
	if !slices.Equal(reads, []uint64{3, 33, 33, 33, 33}) {
		t.Errorf("wallet's code read at blocks %v, want [3 33 33 33 33] (the failed round's two reads again)", reads)
	}
}

// TestDelegatedEOAIsNoContract: the wallet is an EOA that takes an EIP-7702 delegation at block
// 20 (its code is then 0xef0100 and the delegate's address). It stays an EOA: no flag, no
// contract record, and its answer "no code" expires as any other (re-read at 33 and 54).
func TestDelegatedEOAIsNoContract(t *testing.T) {
	pub := &capture{}
	got, reads, _ := walletRun(t, "ethereum_code7702", "0xef0100"+strings.Repeat("be", 20), pub)
	want := []string{
		"transfer 1 toIsContract=false",
		"transfer 10 toIsContract=false",
		"transfer 31 toIsContract=false",
		"transfer 52 toIsContract=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("published:\n%q\nwant\n%q", got, want)
	}
	if !slices.Equal(reads, []uint64{3, 33, 54}) {
		t.Errorf("wallet's code read at blocks %v, want [3 33 54]", reads)
	}
}

var counterfactual = common.HexToAddress("0x00000000000000000000000000000000cafe0001")

// walletRun indexes blocks 1..60, three a round, in which accounts[0] pays the counterfactual
// wallet at blocks 1, 10, 31 and 52, and the wallet has code from block 20 on, publishing to
// pub. It returns the wallet's transfers and contract records as published, the blocks at which
// its code was read and the rounds that failed.
func walletRun(t *testing.T, chain, code string, pub interface {
	indexer.Publisher
	events() []eventbus.Event
}) (got []string, reads []uint64, failures int) {
	t.Helper()
	const deployed, head = 20, 60
	bs := walletChain(accounts[0], counterfactual, head, 1, 10, 31, 52)
	sc := &scriptedChain{}
	sc.set(bs, head)
	var mu sync.Mutex
	base := sc.handler()
	h := func(method string, params []json.RawMessage) (any, *rpctest.Error) {
		switch method {
		case "eth_getCode":
			if common.HexToAddress(rpctest.String(params[0])) == counterfactual {
				n, _ := hexutil.DecodeUint64(rpctest.String(params[1]))
				mu.Lock()
				reads = append(reads, n)
				mu.Unlock()
				if n >= deployed {
					return code, nil
				}
			}
		case "eth_getStorageAt":
			return word(new(big.Int)), nil
		}
		return base(method, params)
	}
	r := newRig(t, "ethereum", h)
	r.chain.Name = chain // its own cursor in the package's database
	failures = drain(t, r.indexer(pub, 1))
	for _, e := range pub.events() {
		switch m := e.Msg.(type) {
		case *eventsv1.Transfer:
			if m.To == evm.Addr(counterfactual) {
				got = append(got, fmt.Sprintf("transfer %d toIsContract=%v", m.BlockNumber, m.ToIsContract))
			}
		case *eventsv1.Contract:
			got = append(got, fmt.Sprintf("contract %s block %d code %s deployer %q tx %q", m.Address, m.BlockNumber, m.Bytecode, m.Deployer, m.DeployTxHash))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return got, slices.Clone(reads), failures
}

func (c *capture) events() []eventbus.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ev)
}

// failContractOnce fails, as a crash would, the first publish that carries a contract record,
// and keeps what the others are given.
type failContractOnce struct {
	capture
	failed bool
}

func (f *failContractOnce) Publish(ctx context.Context, ev ...eventbus.Event) error {
	for _, e := range ev {
		if _, ok := e.Msg.(*eventsv1.Contract); ok && !f.failed {
			f.failed = true
			return errCrash
		}
	}
	return f.capture.Publish(ctx, ev...)
}

// walletChain builds blocks 0..head in which payer sends 1 ether to wallet at each of the blocks
// paid, and nothing else happens.
func walletChain(payer, wallet common.Address, head uint64, paid ...uint64) []*mblock {
	var out []*mblock
	for i := uint64(0); i <= head; i++ {
		b := &mblock{number: i, native: map[common.Address]*big.Int{}, tokens: map[common.Address]*big.Int{}}
		b.hash = crypto.Keccak256Hash([]byte("wallet"), binary.BigEndian.AppendUint64(nil, i))
		if i > 0 {
			b.parent = out[i-1].hash
		}
		if slices.Contains(paid, i) {
			b.txs = []mtx{{hash: crypto.Keccak256Hash([]byte("pay"), binary.BigEndian.AppendUint64(nil, i)), from: payer, to: wallet,
				value: big.NewInt(1e18), amount: new(big.Int)}}
		}
		out = append(out, b)
	}
	return out
}
