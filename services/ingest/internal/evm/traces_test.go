package evm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// A block of three transactions: a contract call that pays out inside nested calls (with a
// reverted branch, a delegate call, a static call, a creation with value, self-destructs and a
// zero-value call), a failed transaction whose trace shows calls with value, and a payout above
// 2^64 wei.
const (
	trA, trC, trD, trE  = "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000c1", "0x00000000000000000000000000000000000000d1", "0x00000000000000000000000000000000000000e1"
	trF, trG, trL, trN  = "0x00000000000000000000000000000000000000f1", "0x0000000000000000000000000000000000000091", "0x0000000000000000000000000000000000000081", "0x0000000000000000000000000000000000000071"
	trP, trH, trM       = "0x0000000000000000000000000000000000000061", "0x0000000000000000000000000000000000000051", "0x0000000000000000000000000000000000000041"
	trTx0, trTx1, trTx2 = "0x1000000000000000000000000000000000000000000000000000000000000000", "0x2000000000000000000000000000000000000000000000000000000000000000", "0x3000000000000000000000000000000000000000000000000000000000000000"
	trBlock             = "0xb000000000000000000000000000000000000000000000000000000000000000"
)

func traceBlock(t *testing.T, traces string) *RawBlock {
	t.Helper()
	tx := func(hash, to, value string, i int) string {
		return fmt.Sprintf(`{"hash":%q,"from":%q,"to":%q,"nonce":"0x%x","value":%q,"gasPrice":"0x1","input":"0x","transactionIndex":"0x%x","type":"0x2"}`, hash, trA, to, i, value, i)
	}
	rc := func(hash string, i, status int) string {
		return fmt.Sprintf(`{"transactionHash":%q,"transactionIndex":"0x%x","blockHash":%q,"status":"0x%x","gasUsed":"0x5208","effectiveGasPrice":"0x1","logs":[]}`, hash, i, trBlock, status)
	}
	b, err := ParseBlock(json.RawMessage(fmt.Sprintf(`{"number":"0x10","hash":%q,"parentHash":"0x%064x","timestamp":"0x64","miner":%q,"transactions":[%s,%s,%s]}`,
		trBlock, 1, trM, tx(trTx0, trC, "0xde0b6b3a7640000", 0), tx(trTx1, trC, "0x0", 1), tx(trTx2, trM, "0x0", 2))))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseReceipts(json.RawMessage("[" + rc(trTx0, 0, 1) + "," + rc(trTx1, 1, 0) + "," + rc(trTx2, 2, 1) + "]"))
	if err != nil {
		t.Fatal(err)
	}
	rb := &RawBlock{Block: b, Receipts: rs}
	if err := json.Unmarshal([]byte(traces), &rb.Traces); err != nil {
		t.Fatal(err)
	}
	return rb
}

func frame(typ, from, to, value, errText string, calls ...string) string {
	return fmt.Sprintf(`{"type":%q,"from":%q,"to":%q,"value":%q,"error":%q,"calls":[%s]}`, typ, from, to, value, errText, strings.Join(calls, ","))
}

var blockTraces = "[" + strings.Join([]string{
	fmt.Sprintf(`{"txHash":%q,"result":%s}`, trTx0, frame("CALL", trA, trC, "0xde0b6b3a7640000", "",
		frame("CALL", trC, trD, "0x429d069189e0000", "", // 0.3 ETH
			frame("CALL", trD, trE, "0x16345785d8a0000", "")), // 0.1 ETH
		frame("CALL", trC, trF, "0x2c68af0bb140000", "execution reverted", // 0.2 ETH, undone
			frame("CALL", trF, trG, "0xb1a2bc2ec50000", "")), // 0.05 ETH, undone with its caller
		frame("DELEGATECALL", trC, trL, "0xde0b6b3a7640000", ""),
		frame("STATICCALL", trC, trP, "0x0", ""),
		frame("CREATE", trC, trN, "0x2386f26fc10000", "", // 0.01 ETH into a new contract
			frame("SELFDESTRUCT", trN, trN, "0x1", "")),
		frame("CALL", trC, trH, "0x0", ""),
		frame("CALLCODE", trC, trL, "0x5", ""),
		frame("SELFDESTRUCT", trD, trE, "0x7", ""),
	)),
	fmt.Sprintf(`{"txHash":%q,"result":%s}`, trTx1, frame("CALL", trA, trC, "0x0", "execution reverted",
		frame("CALL", trC, trD, "0x1", ""))),
	fmt.Sprintf(`{"result":%s}`, frame("CALL", trA, trM, "0x0", "",
		frame("CALL", trM, trP, "0x1158e460913d00000000", ""))), // 81,920 ETH, above 2^64 wei; no txHash, as some nodes answer
}, ",") + "]"

func TestInternalTransfers(t *testing.T) {
	d, err := Decode("ethereum", traceBlock(t, blockTraces))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range d.Transfers {
		if tr.Type != eventsv1.TransferType_TRANSFER_TYPE_INTERNAL {
			continue
		}
		if tr.BlockHash != trBlock || tr.BlockNumber != 16 || tr.BlockTimeMs != 100_000 || tr.TokenAddress != "" || tr.Chain != "ethereum" {
			t.Errorf("%s: %v", tr.Id, tr)
		}
		got = append(got, fmt.Sprintf("%s %s>%s %s #%d", tr.Id[len(tr.Id)-5:], tr.From[len(tr.From)-2:], tr.To[len(tr.To)-2:], tr.Amount, tr.TxIndex))
	}
	want := []string{
		"_int0 c1>d1 300000000000000000 #0",
		"_int1 d1>e1 100000000000000000 #0",
		"_int2 c1>71 10000000000000000 #0",
		"_int3 d1>e1 7 #0",
		"_int0 41>61 81920000000000000000000 #2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("internal transfers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.Transfers[1].Id != trTx0+"_int0" {
		t.Errorf("id %s", d.Transfers[1].Id)
	}
	if want := []Creation{{Address: trN, Creator: trC, Sender: trA, TxHash: trTx0}}; !slices.Equal(d.InternalCreations, want) {
		t.Errorf("creations %v, want %v", d.InternalCreations, want)
	}
	touched := map[string]bool{}
	for _, p := range d.Touched {
		if p.Token == "" {
			touched[p.Address] = true
		}
	}
	for _, a := range []string{trA, trC, trD, trE, trN, trM, trP} {
		if !touched[a] {
			t.Errorf("%s not touched", a)
		}
	}
	for _, a := range []string{trF, trG, trL, trH} {
		if touched[a] {
			t.Errorf("%s touched: only undone or value-less calls reached it", a)
		}
	}
}

func TestTracesOfAnotherBlock(t *testing.T) {
	var ts []TxTrace
	if err := json.Unmarshal([]byte(blockTraces), &ts); err != nil {
		t.Fatal(err)
	}
	for name, traces := range map[string][]TxTrace{
		"too few":     ts[:2],
		"another tx":  {ts[1], ts[0], ts[2]},
		"none at all": {},
	} {
		rb := traceBlock(t, "null")
		rb.Traces = traces
		if _, err := Decode("ethereum", rb); err == nil || !strings.Contains(err.Error(), "trace") {
			t.Errorf("%s: %v", name, err)
		}
	}
	rb := traceBlock(t, "null") // traces not read: no internal transfers, no error
	d, err := Decode("ethereum", rb)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range d.Transfers {
		if tr.Type == eventsv1.TransferType_TRANSFER_TYPE_INTERNAL {
			t.Errorf("internal transfer %s without traces", tr.Id)
		}
	}
}

// The answers a node can give to the traces probe: served; refused by a JSON-RPC error of any
// wording or by a gateway's HTTP 4xx (traces off, with the answer); unreachable or failing with
// a 5xx (asked again).
func TestSupportsTraces(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		answer     string
		served     bool
		why, error string
	}{
		{"served", 200, `{"jsonrpc":"2.0","id":1,"result":{"type":"CALL"}}`, true, "", ""},
		{"method not found", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"the method debug_traceCall does not exist/is not available"}}`, false, "does not exist", ""},
		{"refused to this plan", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Unsupported method: debug_traceCall on ETH_MAINNET"}}`, false, "Unsupported method", ""},
		{"gateway 403", 403, `forbidden`, false, "403", ""},
		{"server failing", 502, `bad gateway`, false, "", "502"},
		{"rate limited", 429, `slow down`, false, "", "429"},
		{"rate limited in JSON-RPC", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"request rate exceeded"}}`, false, "", "rate exceeded"},
		{"limit in words", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"daily request limit exceeded"}}`, false, "", "limit exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer srv.Close()
			c, err := Dial(context.Background(), srv.URL, ClientOptions{Attempts: 1, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			served, why, err := c.SupportsTraces(context.Background())
			if served != tc.served || !strings.Contains(why, tc.why) || (tc.error == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.error) {
				t.Errorf("served %v, why %q, err %v", served, why, err)
			}
		})
	}
}

// A transaction's trace failing inline (some nodes answer {txHash, error} instead of failing
// the call) fails the read of the block's traces: its internal transfers are not dropped.
func TestTraceFailedInline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":[{"txHash":"` + trTx0 + `","error":"execution timeout"}]}`))
	}))
	defer srv.Close()
	c, err := Dial(context.Background(), srv.URL, ClientOptions{Attempts: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rb := traceBlock(t, "null")
	if err := c.Traces(context.Background(), []*RawBlock{rb}); err == nil || !strings.Contains(err.Error(), "execution timeout") {
		t.Fatalf("traces read: %v", err)
	}
}
