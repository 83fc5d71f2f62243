package ingest_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	ingest "github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/services/ingest/internal/chaintest"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// A factory whose runtime CREATE2s its calldata as init code with salt 0 (CALLDATACOPY it to
// memory, CREATE2 with value 0), and the init code of a wallet whose runtime is one STOP.
var (
	create2Factory = common.FromHex("0x600f600c600039600f6000f3" + // CODECOPY the 15-byte runtime, RETURN it
		"36600060003760003660006000f500") // CALLDATACOPY(0, 0, size); CREATE2(0, 0, size, 0); STOP
	walletInit = common.FromHex("0x6001600c60003960016000f3" + "00") // CODECOPY the 1-byte runtime, RETURN it
)

// TestGethCounterfactualWallet pays 1 ether to the address a CREATE2 factory will deploy a
// wallet at, has the factory deploy it (inside a call: no receipt names the contract), waits
// until the re-check time (16 s here) passed since ingest read the address without code, and
// pays it again: that
// transfer is flagged toIsContract and the wallet's contract record is published with its code,
// without a creation; the first transfer stays unflagged. The node serves no call traces here
// (INGEST_EVM_TRACES=off), as many hosted endpoints do not; with them, see
// TestGethInternalCreation.
func TestGethCounterfactualWallet(t *testing.T) {
	url := startGeth(t)
	ctx := context.Background()
	c := dialDevChain(t, url)
	rc, accts := c.rc, []common.Address{c.dev}
	sink := startCodeCacheIngest(t, url, "off")

	k, _ := crypto.ToECDSA(crypto.Keccak256([]byte("chainintel geth counterfactual")))
	w := wallet{k, crypto.PubkeyToAddress(k.PublicKey)}
	var h common.Hash
	if err := rc.Call(&h, "eth_sendTransaction", map[string]any{"from": accts[0], "to": w.addr, "value": (*hexBig)(new(big.Int).Mul(big.NewInt(10), big.NewInt(1e18)))}); err != nil {
		t.Fatal(err)
	}
	c.waitReceipt(h)
	fr := c.waitReceipt(c.send(w, 0, nil, new(big.Int), create2Factory, 200_000))
	if fr.Status != 1 {
		t.Fatal("factory deployment failed")
	}
	factory := fr.ContractAddress
	x := crypto.CreateAddress2(factory, [32]byte{}, crypto.Keccak256(walletInit))

	first := c.waitReceipt(c.send(w, 1, &x, big.NewInt(1e18), nil, 21_000))
	waitTransfer(t, sink, first.TxHash) // ingest has read x's code: none
	if r := c.waitReceipt(c.send(w, 2, &factory, new(big.Int), walletInit, 200_000)); r.Status != 1 {
		t.Fatal("deployment through the factory failed")
	}
	if code, err := c.ec.CodeAt(ctx, x, nil); err != nil || len(code) == 0 {
		t.Fatalf("no code at %s after the factory's call: %v", x.Hex(), err)
	}
	// The read was at the end of the first payment's round (at most 3 blocks later, batches of
	// 4): pay again once 16 more blocks are sealed, at least a second apart (--dev.period 1), so
	// 16 s of chain time after it.
	waitHead(t, c, first.BlockNumber.Uint64()+3+16)
	second := c.waitReceipt(c.send(w, 3, &x, big.NewInt(5e17), nil, 50_000))
	waitTransfer(t, sink, second.TxHash)

	sink.Mu.Lock()
	defer sink.Mu.Unlock()
	flags := map[common.Hash]bool{}
	for _, tr := range sink.Transfers {
		if tr.To == strings.ToLower(x.Hex()) {
			flags[common.HexToHash(tr.TransactionHash)] = tr.ToIsContract
		}
	}
	if len(flags) != 2 || flags[first.TxHash] || !flags[second.TxHash] {
		t.Errorf("toIsContract by transaction %v; want false for %s, true for %s", flags, first.TxHash.Hex(), second.TxHash.Hex())
	}
	got := sink.Contracts["ethereum:"+strings.ToLower(x.Hex())]
	if got == nil || got.Bytecode != "0x00" || got.Deployer != "" || got.DeployTxHash != "" || got.BlockNumber < second.BlockNumber.Uint64() {
		t.Errorf("contract record of %s: %v; want code 0x00, no creation, at or after block %d", x.Hex(), got, second.BlockNumber.Uint64())
	}
}

// TestGethInternalCreation has a CREATE2 factory deploy a wallet inside a call, with call traces
// read: the wallet's contract record is published at its creation, with the transaction's
// sender as deployer and the factory as internal deployer.
func TestGethInternalCreation(t *testing.T) {
	url := startGeth(t)
	c := dialDevChain(t, url)
	sink := startCodeCacheIngest(t, url, "on")
	k, _ := crypto.ToECDSA(crypto.Keccak256([]byte("chainintel geth internal creation")))
	w := wallet{k, crypto.PubkeyToAddress(k.PublicKey)}
	var h common.Hash
	if err := c.rc.Call(&h, "eth_sendTransaction", map[string]any{"from": c.dev, "to": w.addr, "value": (*hexBig)(big.NewInt(1e18))}); err != nil {
		t.Fatal(err)
	}
	c.waitReceipt(h)
	factory := c.waitReceipt(c.send(w, 0, nil, new(big.Int), create2Factory, 200_000)).ContractAddress
	x := crypto.CreateAddress2(factory, [32]byte{}, crypto.Keccak256(walletInit))
	r := c.waitReceipt(c.send(w, 1, &factory, new(big.Int), walletInit, 200_000))
	if r.Status != 1 {
		t.Fatal("deployment through the factory failed")
	}
	key := "ethereum:" + strings.ToLower(x.Hex())
	deadline := time.Now().Add(60 * time.Second)
	for {
		sink.Mu.Lock()
		got := sink.Contracts[key]
		sink.Mu.Unlock()
		if got != nil {
			if got.Bytecode != "0x00" || got.Deployer != strings.ToLower(w.addr.Hex()) || got.DeployTxHash != strings.ToLower(r.TxHash.Hex()) ||
				got.InternalDeployer != strings.ToLower(factory.Hex()) || got.BlockNumber != r.BlockNumber.Uint64() {
				t.Errorf("contract record of %s: %v; want code 0x00 created in %s (block %d) by %s through %s", x.Hex(), got, r.TxHash.Hex(),
					r.BlockNumber.Uint64(), w.addr.Hex(), factory.Hex())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no contract record of %s within 60s", x.Hex())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startCodeCacheIngest runs ingest on the node at url with a database of its own (the package's
// has the other geth tests' ethereum cursor), reading call traces or not (INGEST_EVM_TRACES),
// and returns the sink of what it publishes.
func startCodeCacheIngest(t *testing.T, url, traces string) *chaintest.Sink {
	ctx := context.Background()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "ingest_codecache")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	brokers := kafkatest.Broker(t, chaintest.Topics...)
	sink := chaintest.StartSink(t, brokers)
	cfg := gethConfig(t, url, dbURL, brokers)
	cfg.EVMCodeRecheck = 16 * time.Second
	cfg.EVMTraces = traces
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := ingest.Migrate(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runIngest(t, cfg))
	return sink
}

// waitTransfer waits until the sink holds a transfer of transaction h.
func waitTransfer(t *testing.T, sink *chaintest.Sink, h common.Hash) {
	t.Helper()
	want := strings.ToLower(h.Hex())
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		sink.Mu.Lock()
		var found *eventsv1.Transfer
		for _, tr := range sink.Transfers {
			if tr.TransactionHash == want {
				found = tr
			}
		}
		sink.Mu.Unlock()
		if found != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no transfer of %s published within 60s", want)
}

// waitHead waits until the node's head is at least n.
func waitHead(t *testing.T, c *devChain, n uint64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		head, err := c.ec.BlockNumber(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if head >= n {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("head below %d after 60s", n)
}
