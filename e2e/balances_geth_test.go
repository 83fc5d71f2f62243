package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/sharedtest"
)

// gethBin finds geth: $CHAININTEL_GETH, then the repository's .bin, then PATH.
func gethBin(t *testing.T) string {
	for _, p := range []string{os.Getenv("CHAININTEL_GETH"), filepath.Join("..", ".bin", "geth")} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("geth"); err == nil {
		return p
	}
	t.Skip("geth not found: set CHAININTEL_GETH or put geth on PATH (make tools installs it)")
	return ""
}

func loopbackPort(t *testing.T) string { return fmt.Sprint(sharedtest.FreePort(t)) }

// rpcNode is a JSON-RPC client of a geth --dev node.
type rpcNode struct {
	t   *testing.T
	url string
}

func (n rpcNode) call(out any, method string, params ...any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(n.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %s", method, b)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %s", method, r.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result, out)
}

func (n rpcNode) must(out any, method string, params ...any) {
	n.t.Helper()
	if err := n.call(out, method, params...); err != nil {
		n.t.Fatal(err)
	}
}

// startDevGeth runs `geth --dev` (a block a second) on free loopback ports.
func startDevGeth(t *testing.T) rpcNode {
	dir := t.TempDir()
	port := loopbackPort(t)
	logf, err := os.Create(filepath.Join(dir, "geth.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gethBin(t), "--dev", "--dev.period", "1", "--datadir", filepath.Join(dir, "data"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", port, "--http.api", "eth,net,web3,debug",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", loopbackPort(t), "--port", loopbackPort(t), "--nodiscover", "--maxpeers", "0",
		"--ipcdisable", "--gcmode", "archive", "--verbosity", "2")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	n := rpcNode{t: t, url: "http://127.0.0.1:" + port}
	Eventually(t, 60*time.Second, func() error { return n.call(nil, "eth_blockNumber") })
	return n
}

func word(v *big.Int) string { return fmt.Sprintf("%064x", v) }

func addrWord(a string) string {
	return strings.Repeat("0", 24) + strings.TrimPrefix(strings.ToLower(a), "0x")
}

func strWords(s string) string {
	b := make([]byte, 32)
	copy(b, s)
	return word(big.NewInt(int64(len(s)))) + hex.EncodeToString(b)
}

func hexBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if !ok {
		return new(big.Int)
	}
	return v
}

// send sends a transaction from the unlocked dev account and waits for its receipt.
func (n rpcNode) send(from, to string, value *big.Int, data string) map[string]any {
	n.t.Helper()
	tx := map[string]any{"from": from, "value": "0x" + value.Text(16), "gas": "0x2dc6c0"}
	if to != "" {
		tx["to"] = to
	}
	if data != "" {
		tx["data"] = "0x" + data
	}
	var h string
	n.must(&h, "eth_sendTransaction", tx)
	var rcpt map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for rcpt == nil {
		n.must(&rcpt, "eth_getTransactionReceipt", h)
		if rcpt == nil {
			if time.Now().After(deadline) {
				n.t.Fatalf("transaction %s not mined within 30s", h)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if rcpt["status"] != "0x1" {
		n.t.Fatalf("transaction %s failed: %v", h, rcpt)
	}
	return rcpt
}

// Through the edge, on a real geth --dev chain: after native and ERC-20 transfers,
// /balances/address/{a} returns balanceExact equal to eth_getBalance and balanceOf at the block
// the platform indexed, for every address touched.
func TestBalancesGethDevExact(t *testing.T) {
	if os.Getenv("CHAININTEL_E2E_URL") != "" {
		t.Skip("starts its own platform on a geth --dev chain")
	}
	node := startDevGeth(t)
	p, key := gethPlatform(t, node)

	var accts []string
	node.must(&accts, "eth_accounts")
	dev := strings.ToLower(accts[0])
	tokenBin, err := os.ReadFile(filepath.Join("..", "services", "ingest", "testdata", "TestToken.bin"))
	if err != nil {
		t.Skipf("token bytecode: %v", err)
	}
	// 1,000,000 TUSD (6 decimals) minted to the dev account.
	ctor := word(big.NewInt(0x60)) + word(big.NewInt(0xa0)) + word(big.NewInt(1_000_000_000_000)) + strWords("Test USD") + strWords("TUSD")
	rcpt := node.send(dev, "", new(big.Int), strings.TrimPrefix(strings.TrimSpace(string(tokenBin)), "0x")+ctor)
	token := strings.ToLower(rcpt["contractAddress"].(string))
	touched := []string{dev}
	for i := 1; i <= 3; i++ {
		to := fmt.Sprintf("0x%040x", 0xba1a0000+i)
		touched = append(touched, to)
		// An amount above 2^64 wei, and tokens.
		v := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 65), big.NewInt(int64(i)))
		node.send(dev, to, v, "")
		node.send(dev, token, new(big.Int), "a9059cbb"+addrWord(to)+word(big.NewInt(int64(1_000_000*i+i))))
	}

	// Native value paid inside a call (an internal transfer, read from the node's call traces):
	// a forwarder sends half of what it receives to a fresh address and half to a contract that
	// reverts, so only the first half moves; the fresh address holds nothing else.
	reverter := deployRuntime(node, dev, "60006000fd")
	forwarder := deployRuntime(node, dev, forwarderRuntime)
	payee := fmt.Sprintf("0x%040x", 0xba1a00ff)
	paid := node.send(dev, forwarder, big.NewInt(3_000_000_000_000_001), addrWord(payee)+addrWord(reverter))
	touched = append(touched, payee, forwarder) // not the reverter: no value reached it
	wantInternal(t, p, key, payee, strings.ToLower(paid["transactionHash"].(string))+"_int0", forwarder, 0.0015)

	type tb struct {
		BalanceExact    string `json:"balanceExact"`
		EthereumAddress string `json:"ethereumAddress"`
	}
	Eventually(t, 120*time.Second, func() error {
		for _, a := range touched {
			var wantETH, wantTok string
			if err := node.call(&wantETH, "eth_getBalance", a, "latest"); err != nil {
				return err
			}
			if err := node.call(&wantTok, "eth_call", map[string]any{"to": token, "data": "0x70a08231" + addrWord(a)}, "latest"); err != nil {
				return err
			}
			r := p.DoPaced(t, http.MethodGet, "/balances/address/"+url.PathEscape(a)+"?chains=ethereum", key, nil)
			if r.Status != 200 {
				return fmt.Errorf("%s: %d %s", a, r.Status, r.Body)
			}
			var b struct {
				Balances map[string][]tb `json:"balances"`
			}
			r.JSON(t, &b)
			got := map[string]string{}
			for _, x := range b.Balances["ethereum"] {
				got[x.EthereumAddress] = x.BalanceExact
			}
			if w := hexBig(wantETH).String(); got[""] != w {
				return fmt.Errorf("%s: native balanceExact %q, node says %s", a, got[""], w)
			}
			if w := hexBig(wantTok); w.Sign() > 0 && got[token] != w.String() {
				return fmt.Errorf("%s: token balanceExact %q, balanceOf says %s", a, got[token], w)
			}
		}
		return nil
	})
}

// forwarderRuntime is a contract's code that, on every call, sends half the value it received to
// the address in its first argument word and half to the one in its second, ignoring whether
// either call succeeded: CALL(gas, arg, callvalue/2, 0, 0, 0, 0) twice.
const forwarderRuntime = "600060006000600060023404600035" + "5af150" + "600060006000600060023404602035" + "5af150" + "00"

// deployRuntime deploys a contract whose code is runtime (hex) and returns its address.
func deployRuntime(node rpcNode, from, runtime string) string {
	n := len(runtime) / 2
	// PUSH1 n DUP1 PUSH1 11 PUSH1 0 CODECOPY PUSH1 0 RETURN, then the code it copies.
	initcode := fmt.Sprintf("60%02x80600b6000396000f3", n) + runtime
	rcpt := node.send(from, "", new(big.Int), initcode)
	return strings.ToLower(rcpt["contractAddress"].(string))
}

// wantInternal waits until /transfers through the edge lists, for address, exactly one transfer:
// the internal transfer id from `from` of units (whole coins).
func wantInternal(t *testing.T, p *Platform, key, address, id, from string, units float64) {
	t.Helper()
	Eventually(t, 120*time.Second, func() error {
		r := p.DoPaced(t, http.MethodGet, "/transfers?base="+address+"&chains=ethereum", key, nil)
		if r.Status != 200 {
			return fmt.Errorf("/transfers: %d %s", r.Status, r.Body)
		}
		var b struct {
			Transfers []struct {
				ID          string  `json:"id"`
				Type        string  `json:"type"`
				UnitValue   float64 `json:"unitValue"`
				FromAddress struct {
					Address string `json:"address"`
				} `json:"fromAddress"`
			} `json:"transfers"`
		}
		r.JSON(t, &b)
		if len(b.Transfers) != 1 {
			return fmt.Errorf("/transfers?base=%s: %d transfers, want the internal one: %s", address, len(b.Transfers), r.Body)
		}
		if x := b.Transfers[0]; x.ID != id || x.Type != "internal" || x.FromAddress.Address != from || x.UnitValue != units {
			return fmt.Errorf("/transfers?base=%s: %+v, want %s of type internal from %s of %v", address, x, id, from, units)
		}
		return nil
	})
}

// gethPlatform starts a platform of its own indexing the node from block 0.
func gethPlatform(t *testing.T, node rpcNode) (*Platform, string) {
	ctx, cancel := context.WithCancel(context.Background())
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "e2egeth")
	if err != nil {
		t.Fatal(err)
	}
	st, err := stack.Start(ctx, stack.Options{HTTPAddr: "127.0.0.1:0", DatabaseURL: dbURL, LogLevel: "error", LogOutput: io.Discard,
		EVMRPCURL: node.url, EVMChain: "ethereum", EVMStartBlock: "0"}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		cancel()
		drop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-st.Done():
		case <-time.After(40 * time.Second):
		}
		drop()
	})
	return &Platform{URL: st.URL, APIKey: st.APIKey, HTTP: &http.Client{Timeout: 30 * time.Second}}, st.APIKey
}
