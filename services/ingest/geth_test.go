package ingest_test

import (
	"context"
	"crypto/ecdsa"
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/sharedtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	ingest "github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/services/ingest/internal/chaintest"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/migrations"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

//go:embed testdata/TestToken.bin
var tokenBin string

//go:embed testdata/TestToken.abi
var tokenABI string

// gethPath finds geth: $CHAININTEL_GETH (what `make tools` installs), then PATH.
func gethPath(t *testing.T) string {
	if p := os.Getenv("CHAININTEL_GETH"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("geth"); err == nil {
		return p
	}
	t.Skip("geth not found: set CHAININTEL_GETH or put geth on PATH (make tools installs it: " +
		"GOBIN=$PWD/.bin go install github.com/ethereum/go-ethereum/cmd/geth@v1.16.7)")
	return ""
}

func freePort(t *testing.T) string { return fmt.Sprint(sharedtest.FreePort(t)) }

// startGeth runs `geth --dev` (a block a second, archive state) on free loopback ports.
func startGeth(t *testing.T) string {
	bin := gethPath(t)
	dir := t.TempDir()
	httpPort := freePort(t)
	logf, err := os.Create(filepath.Join(dir, "geth.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--dev", "--dev.period", "1", "--datadir", filepath.Join(dir, "data"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", httpPort, "--http.api", "eth,net,web3,debug",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", freePort(t), "--port", freePort(t), "--nodiscover", "--maxpeers", "0",
		"--ipcdisable", "--gcmode", "archive", "--verbosity", "2")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("geth log:\n%s", b)
		}
	})
	url := "http://127.0.0.1:" + httpPort
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := rpc.Dial(url)
		if err == nil {
			var n string
			err = c.Call(&n, "eth_blockNumber")
			c.Close()
			if err == nil {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("geth did not answer at %s within 60s: %v", url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// wallet signs and sends transactions for a key.
type wallet struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

type devChain struct {
	t      *testing.T
	ec     *ethclient.Client
	rc     *rpc.Client
	signer types.Signer
	dev    common.Address
	abi    abi.ABI
}

func (c *devChain) waitReceipt(h common.Hash) *types.Receipt {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := c.ec.TransactionReceipt(context.Background(), h)
		if err == nil {
			return r
		}
		// A node just started answers "transaction indexing is in progress" until its
		// transaction index has caught up: not yet, like NotFound.
		if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "indexing is in progress") {
			c.t.Fatal(err)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("transaction %s not mined within 30s", h.Hex())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *devChain) send(w wallet, nonce uint64, to *common.Address, value *big.Int, data []byte, gas uint64) common.Hash {
	c.t.Helper()
	ctx := context.Background()
	head, err := c.ec.HeaderByNumber(ctx, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	tip := big.NewInt(1e9)
	fee := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	tx := types.MustSignNewTx(w.key, c.signer, &types.DynamicFeeTx{ChainID: c.signer.ChainID(), Nonce: nonce, GasTipCap: tip, GasFeeCap: fee,
		Gas: gas, To: to, Value: value, Data: data})
	if err := c.ec.SendTransaction(ctx, tx); err != nil {
		c.t.Fatal(err)
	}
	return tx.Hash()
}

func (c *devChain) pack(method string, args ...any) []byte {
	b, err := c.abi.Pack(method, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// runIngest starts the ingest service in evm mode; the returned function kills it (cancels and
// waits for it to stop).
func runIngest(t *testing.T, cfg ingest.Config) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest.Run(ctx, cfg, ingest.Deps{Logger: chaintest.Quiet}) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("ingest stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("ingest did not stop within 30s")
		}
	}
}

// TestGethDev indexes a real geth --dev chain: native transfers, a deployed ERC-20 with single
// and batched transfers and a reverted one; the ingester is killed mid-run and restarted. Every
// transfer the chain holds (read back with go-ethereum's own types) is consumed exactly once by
// id, none is extra, and every balance observation equals eth_getBalance/balanceOf at its block.
func TestGethDev(t *testing.T) {
	url := startGeth(t)
	ctx := context.Background()
	c := dialDevChain(t, url)
	rc := c.rc
	var err error
	if c.abi, err = abi.JSON(strings.NewReader(tokenABI)); err != nil {
		t.Fatal(err)
	}

	brokers := kafkatest.Broker(t, chaintest.Topics...)
	sink := chaintest.StartSink(t, brokers)
	cfg := gethConfig(t, url, pgtest.URL(t), brokers)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	stop := runIngest(t, cfg)

	// Wallets funded by the dev account (native transfers from an unlocked account).
	var ws []wallet
	for i := range 4 {
		k, _ := crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("chainintel geth test %d", i))))
		ws = append(ws, wallet{k, crypto.PubkeyToAddress(k.PublicKey)})
	}
	var fund []common.Hash
	for i, w := range ws {
		var h common.Hash
		v := new(big.Int).Mul(big.NewInt(int64(10+i)), big.NewInt(1e18))
		if err := rc.Call(&h, "eth_sendTransaction", map[string]any{"from": c.dev, "to": w.addr, "value": (*hexBig)(v)}); err != nil {
			t.Fatalf("eth_sendTransaction from the dev account: %v", err)
		}
		fund = append(fund, h)
	}
	for _, h := range fund {
		c.waitReceipt(h)
	}
	nonces := make([]uint64, len(ws))
	next := func(i int) uint64 { n := nonces[i]; nonces[i]++; return n }

	// Deploy the token from wallet 0 (1,000,000 TUSD, 6 decimals).
	data := append(common.FromHex(strings.TrimSpace(tokenBin)), c.pack("", "Test USD", "TUSD", big.NewInt(1_000_000_000_000))...)
	rcpt := c.waitReceipt(c.send(ws[0], next(0), nil, new(big.Int), data, 2_000_000))
	if rcpt.Status != 1 {
		t.Fatal("token deployment failed")
	}
	token := rcpt.ContractAddress
	// Two proxies of the token: an EIP-1167 clone, and a contract whose constructor writes the
	// token into the EIP-1967 implementation slot (its runtime code is one STOP).
	clone := common.FromHex("0x3d602d80600a3d3981f3363d3d373d3d3d363d73" + strings.TrimPrefix(strings.ToLower(token.Hex()), "0x") + "5af43d82803e903d91602b57fd5bf3")
	cloneRcpt := c.waitReceipt(c.send(ws[0], next(0), nil, new(big.Int), clone, 200_000))
	slotProxy := append(append([]byte{0x73}, token.Bytes()...), 0x7f)
	slotProxy = append(slotProxy, evm.EIP1967ImplementationSlot.Bytes()...)
	slotProxy = append(slotProxy, common.FromHex("0x556000600053600160"+"00f3")...)
	slotRcpt := c.waitReceipt(c.send(ws[0], next(0), nil, new(big.Int), slotProxy, 200_000))
	if cloneRcpt.Status != 1 || slotRcpt.Status != 1 {
		t.Fatal("proxy deployment failed")
	}

	round := func(r int) {
		var hs []common.Hash
		// Native transfers in a ring, token transfers, a batch payment and a reverted transfer.
		for i := range ws {
			to := ws[(i+1)%len(ws)].addr
			hs = append(hs, c.send(ws[i], next(i), &to, big.NewInt(int64(1e15)*int64(r*7+i+1)), nil, 21000))
		}
		hs = append(hs, c.send(ws[0], next(0), &token, new(big.Int), c.pack("transfer", ws[1+r%3].addr, big.NewInt(int64(1_000_000*(r+1)+r))), 100000))
		hs = append(hs, c.send(ws[0], next(0), &token, new(big.Int), c.pack("batch",
			[]common.Address{ws[1].addr, ws[2].addr, ws[3].addr}, []*big.Int{big.NewInt(int64(11 + r)), big.NewInt(int64(222 + r)), big.NewInt(int64(3333 + r))}), 200000))
		if r%2 == 1 {
			hs = append(hs, c.send(ws[3], next(3), &token, new(big.Int), c.pack("transfer", ws[2].addr, new(big.Int).Mul(big.NewInt(1e12), big.NewInt(1e6))), 100000))
		}
		if r%3 == 2 {
			hs = append(hs, c.send(ws[1], next(1), &token, new(big.Int), c.pack("transfer", ws[0].addr, big.NewInt(int64(5+r))), 100000))
		}
		for _, h := range hs {
			c.waitReceipt(h)
		}
	}
	for r := range 3 {
		round(r)
	}
	stop() // kill the ingester mid-run; the chain goes on without it
	for r := 3; r < 6; r++ {
		round(r)
	}
	stop = runIngest(t, cfg)
	for r := 6; r < 8; r++ {
		round(r)
	}
	// Native value paid inside a call, read from the node's call traces: a forwarder sends half
	// of what it receives to a fresh address and half to a contract that reverts (that half
	// stays with the forwarder).
	reverter := c.deploy(ws[2], next(2), "60006000fd")
	forwarder := c.deploy(ws[2], next(2), forwarderRuntime)
	payee := common.HexToAddress("0x00000000000000000000000000000000ba1a00ff")
	paid := c.waitReceipt(c.send(ws[2], next(2), &forwarder, big.NewInt(3_000_000_000_000_001),
		append(common.LeftPadBytes(payee.Bytes(), 32), common.LeftPadBytes(reverter.Bytes(), 32)...), 200_000))
	if paid.Status != 1 {
		t.Fatal("forwarder call failed")
	}
	last, err := c.ec.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// What the chain holds, read with go-ethereum's types (not the ingester's decoder).
	want := map[string]string{}
	var failed []string
	transferSig := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	for n := uint64(0); n <= last; n++ {
		b, err := c.ec.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Transactions() {
			r, err := c.ec.TransactionReceipt(ctx, tx.Hash())
			if err != nil {
				t.Fatal(err)
			}
			h := strings.ToLower(tx.Hash().Hex())
			if r.Status != 1 {
				failed = append(failed, h)
				continue
			}
			if tx.Value().Sign() > 0 && tx.To() != nil {
				want[h+"_ext"] = tx.Value().String()
			}
			for _, l := range r.Logs {
				if len(l.Topics) == 3 && l.Topics[0] == transferSig {
					want[fmt.Sprintf("%s_%d", h, l.Index)] = new(big.Int).SetBytes(l.Data).String()
				}
			}
		}
	}
	want[strings.ToLower(paid.TxHash.Hex())+"_int0"] = "1500000000000000" // half of 3,000,000,000,000,001 wei
	if len(failed) != 4 {
		t.Fatalf("%d reverted transactions on chain, the test sent 4", len(failed))
	}
	chaintest.Eventually(t, 60*time.Second, func() error {
		sink.Mu.Lock()
		defer sink.Mu.Unlock()
		for id, amt := range want {
			tr := sink.Transfers["ethereum:"+id]
			if tr == nil {
				return fmt.Errorf("transfer %s not consumed (%d of %d so far)", id, len(sink.Transfers), len(want))
			}
			if tr.Amount != amt {
				return fmt.Errorf("transfer %s amount %s, chain says %s", id, tr.Amount, amt)
			}
		}
		return nil
	})
	stop()

	sink.Mu.Lock()
	defer sink.Mu.Unlock()
	for id := range sink.Transfers {
		if _, ok := want[strings.TrimPrefix(id, "ethereum:")]; !ok {
			t.Errorf("consumed transfer %s the chain does not hold", id)
		}
	}
	t.Logf("%d transfers on chain up to block %d; %d distinct consumed from %d deliveries; %d balance observations",
		len(want), last, len(sink.Transfers), sink.Deliveries, len(sink.Balances))
	for _, h := range failed {
		tx := sink.Txs["ethereum:"+h]
		if tx == nil || tx.Success {
			t.Errorf("reverted transaction %s: %v", h, tx)
		}
	}
	tk := sink.Tokens["ethereum:"+strings.ToLower(token.Hex())]
	if tk == nil || tk.Name != "Test USD" || tk.Symbol != "TUSD" || tk.Decimals != 6 || tk.NonStandard {
		t.Errorf("token metadata %v", tk)
	}
	deploy := sink.Txs["ethereum:"+strings.ToLower(rcpt.TxHash.Hex())]
	code, _ := c.ec.CodeAt(ctx, token, nil)
	if deploy == nil || deploy.ContractCreated != strings.ToLower(token.Hex()) || deploy.BytecodeSize != uint32(len(code)) || deploy.To != "" {
		t.Errorf("deployment transaction %v; want contract %s with %d bytes of code", deploy, token.Hex(), len(code))
	}

	// The contracts with their code as the chain holds it, the token's selectors and the proxies'
	// implementation.
	for _, w := range []struct {
		rcpt  *types.Receipt
		proxy string
		sels  []string
	}{
		{rcpt, "", []string{"0x70a08231", "0xa9059cbb"}},
		{cloneRcpt, strings.ToLower(token.Hex()), nil},
		{slotRcpt, strings.ToLower(token.Hex()), nil},
	} {
		addr := strings.ToLower(w.rcpt.ContractAddress.Hex())
		got := sink.Contracts["ethereum:"+addr]
		code, _ := c.ec.CodeAt(ctx, w.rcpt.ContractAddress, nil)
		if got == nil || got.Bytecode != hexutil.Encode(code) || got.ProxyImplementation != w.proxy || got.Deployer != strings.ToLower(ws[0].addr.Hex()) ||
			got.DeployTxHash != strings.ToLower(w.rcpt.TxHash.Hex()) || got.InternalDeployer != "" || got.BlockNumber != w.rcpt.BlockNumber.Uint64() {
			t.Errorf("contract %s: %v; want its code, proxy of %q, deployed by %s in %s", addr, got, w.proxy, ws[0].addr.Hex(), w.rcpt.TxHash.Hex())
			continue
		}
		for _, sel := range w.sels {
			if !slices.Contains(got.FunctionSighashes, sel) {
				t.Errorf("contract %s: selectors %v lack %s", addr, got.FunctionSighashes, sel)
			}
		}
		if w.sels == nil && len(got.FunctionSighashes) != 0 {
			t.Errorf("proxy %s: selectors %v, want none", addr, got.FunctionSighashes)
		}
	}

	in := sink.Transfers["ethereum:"+strings.ToLower(paid.TxHash.Hex())+"_int0"]
	if in == nil || in.Type != eventsv1.TransferType_TRANSFER_TYPE_INTERNAL || in.From != strings.ToLower(forwarder.Hex()) || in.To != strings.ToLower(payee.Hex()) {
		t.Errorf("internal transfer %v; want %s to %s", in, forwarder.Hex(), payee.Hex())
	}
	for _, a := range []common.Address{payee, forwarder} {
		if sink.Balances["ethereum|"+strings.ToLower(a.Hex())+"|"] == nil {
			t.Errorf("no native balance observation of %s, a party of an internal transfer", a.Hex())
		}
	}

	// Every pair a transfer touched has an observation, and every observation is exact.
	for _, w := range ws {
		for _, tok := range []string{"", strings.ToLower(token.Hex())} {
			if sink.Balances["ethereum|"+strings.ToLower(w.addr.Hex())+"|"+tok] == nil {
				t.Errorf("no balance observation of %s token %q", w.addr.Hex(), tok)
			}
		}
	}
	for k, o := range sink.Balances {
		at := new(big.Int).SetUint64(o.BlockNumber)
		addr := common.HexToAddress(o.Address)
		var chainVal, headVal *big.Int
		if o.TokenAddress == "" {
			chainVal, err = c.ec.BalanceAt(ctx, addr, at)
			if err == nil {
				headVal, err = c.ec.BalanceAt(ctx, addr, new(big.Int).SetUint64(last))
			}
		} else {
			msg := ethereum.CallMsg{To: &token, Data: c.pack("balanceOf", addr)}
			var out []byte
			if out, err = c.ec.CallContract(ctx, msg, at); err == nil {
				chainVal = new(big.Int).SetBytes(out)
				if out, err = c.ec.CallContract(ctx, msg, new(big.Int).SetUint64(last)); err == nil {
					headVal = new(big.Int).SetBytes(out)
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if o.Balance != chainVal.String() {
			t.Errorf("%s at block %d: observed %s, chain says %s", k, o.BlockNumber, o.Balance, chainVal)
		}
		if o.Balance != headVal.String() {
			t.Errorf("%s: newest observation %s (block %d) but the balance at the head is %s", k, o.Balance, o.BlockNumber, headVal)
		}
	}
}

// forwarderRuntime is a contract's code that, on every call, sends half the value it received to
// the address in its first argument word and half to the one in its second, ignoring whether
// either call succeeded: CALL(gas, arg, callvalue/2, 0, 0, 0, 0) twice.
const forwarderRuntime = "600060006000600060023404600035" + "5af150" + "600060006000600060023404602035" + "5af150" + "00"

// deploy deploys, from w, a contract whose code is runtime (hex) and returns its address.
func (c *devChain) deploy(w wallet, nonce uint64, runtime string) common.Address {
	// PUSH1 len DUP1 PUSH1 11 PUSH1 0 CODECOPY PUSH1 0 RETURN, then the code it copies.
	initcode := common.FromHex(fmt.Sprintf("60%02x80600b6000396000f3", len(runtime)/2) + runtime)
	r := c.waitReceipt(c.send(w, nonce, nil, new(big.Int), initcode, 200_000))
	if r.Status != 1 {
		c.t.Fatalf("deploying %s failed", runtime)
	}
	return r.ContractAddress
}

// hexBig marshals a big.Int as a JSON-RPC quantity.
type hexBig big.Int

func (h *hexBig) MarshalText() ([]byte, error) {
	return []byte("0x" + (*big.Int)(h).Text(16)), nil
}

// gethConfig is ingest indexing the geth --dev node at url from block 0, into the database at
// dbURL, publishing to brokers: every block at once (no confirmations), in rounds of 4, without
// token-analytics (the market book alone prices blocks).
func gethConfig(t *testing.T, url, dbURL string, brokers []string) ingest.Config {
	t.Helper()
	var cfg ingest.Config
	if err := config.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Base = service.Base{HTTPAddr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", LogLevel: "error", ShutdownTimeout: 10 * time.Second,
		InternalSecret: "geth-test-internal-secret"}
	cfg.Postgres = service.Postgres{DatabaseURL: dbURL, MaxConns: 4}
	cfg.Kafka = service.Kafka{Brokers: brokers, Partitions: 4, ReplicationFactor: 1}
	cfg.Mode, cfg.EVMChain, cfg.EVMRPCURL, cfg.EVMStartBlock = ingest.ModeEVM, "ethereum", url, "0"
	cfg.EVMConfirmations, cfg.EVMBatchBlocks, cfg.EVMPollInterval, cfg.EVMMarketWait = 0, 4, 200*time.Millisecond, 100*time.Millisecond
	cfg.TokenAnalyticsURL = ""
	cfg.EVMTraces = "on"
	return cfg
}

// dialDevChain connects to the geth --dev node at url (closed at the test's end), with the
// chain's signer and the node's prefunded dev account.
func dialDevChain(t *testing.T, url string) *devChain {
	t.Helper()
	rc, err := rpc.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c := &devChain{t: t, ec: ethclient.NewClient(rc), rc: rc}
	chainID, err := c.ec.ChainID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.signer = types.LatestSignerForChainID(chainID)
	var accts []common.Address
	if err := rc.Call(&accts, "eth_accounts"); err != nil || len(accts) == 0 {
		t.Fatalf("dev account: %v %v", accts, err)
	}
	c.dev = accts[0]
	return c
}
