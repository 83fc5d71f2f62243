package indexer_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestCodeAppearsAfterFunding: a counterfactual wallet is paid before it has code (block 1),
// again before its code (block 10), then a factory deploys it inside a call (block 20, no receipt
// names it) and it is paid again (block 31). The answer "no code" read at block 3 holds for 16
// blocks, so block 10 costs no read; block 31's round reads again, flags the transfer
// toIsContract and publishes the contract record at the round's last block, without a creation.
func TestCodeAppearsAfterFunding(t *testing.T) {
	wallet := common.HexToAddress("0x00000000000000000000000000000000cafe0001")
	payer := accounts[0]
	const deployed, head = 20, 40
	bs := walletChain(payer, wallet, head, 1, 10, 31)
	sc := &scriptedChain{}
	sc.set(bs, head)
	var mu sync.Mutex
	var reads []uint64 // blocks at which the wallet's code was read
	base := sc.handler()
	h := func(method string, params []json.RawMessage) (any, *rpctest.Error) {
		switch method {
		case "eth_getCode":
			if common.HexToAddress(rpctest.String(params[0])) == wallet {
				n, _ := hexutil.DecodeUint64(rpctest.String(params[1]))
				mu.Lock()
				reads = append(reads, n)
				mu.Unlock()
				if n >= deployed {
					return "0x6080", nil
				}
			}
		case "eth_getStorageAt":
			return word(new(big.Int)), nil
		}
		return base(method, params)
	}
	r := newRig(t, "ethereum", h)
	r.chain.Name = "ethereum_codecache" // its own cursor in the package's database
	pub := &capture{}
	drain(t, r.indexer(pub, 1))

	var got []string
	for _, e := range pub.ev {
		switch m := e.Msg.(type) {
		case *eventsv1.Transfer:
			if m.To == evm.Addr(wallet) {
				got = append(got, fmt.Sprintf("transfer %d toIsContract=%v", m.BlockNumber, m.ToIsContract))
			}
		case *eventsv1.Contract:
			got = append(got, fmt.Sprintf("contract %s block %d code %s deployer %q tx %q", m.Address, m.BlockNumber, m.Bytecode, m.Deployer, m.DeployTxHash))
		}
	}
	want := []string{
		"transfer 1 toIsContract=false",
		"transfer 10 toIsContract=false",
		"contract " + evm.Addr(wallet) + " block 33 code 0x6080 deployer \"\" tx \"\"",
		"transfer 31 toIsContract=true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("published:\n%q\nwant\n%q", got, want)
	}
	// Rounds end at blocks 3, 6, ... 33: the flag's first read, its re-read once 16 blocks have
	// passed, and the contract record's read; none after, a contract keeps its answer.
	if !slices.Equal(reads, []uint64{3, 33, 33}) {
		t.Errorf("wallet's code read at blocks %v, want [3 33 33]", reads)
	}
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
