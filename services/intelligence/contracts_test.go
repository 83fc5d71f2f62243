package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// TestContractFacts feeds chain.contracts.v1 and chain.transactions.v1 records, in both orders
// and twice, and reads /intelligence/contract: a contract with its creating transaction and code,
// a token first seen without its creation (no deployer), and an EIP-1967 proxy created inside a
// factory's call; each address is a contract in /intelligence/address. A record of an EIP-7702
// delegated EOA (an earlier ingest release's) is not stored: no contract, no mark; nor is a
// creation that left no code (its constructor self-destructed).
func TestContractFacts(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	h := events.Handlers{Store: store.New(pgtest.Pool(t))}
	tok, eoa, seen, proxy, factory, delegated, gone := addr(0x7a), addr(0xe0), addr(0x5e), addr(0x9a), addr(0xfa), addr(0xde), addr(0x60)
	code := "0x8063a9059cbb1461000b5760006000fd5b00"
	contracts := msgs(eventsv1.TopicContracts,
		&eventsv1.Contract{Chain: "ethereum", Address: tok, BlockNumber: 10, BlockHash: "0xb10", BlockTimeMs: 1_700_000_000_000, Bytecode: code,
			FunctionSighashes: []string{"0xa9059cbb"}, Deployer: eoa, DeployTxHash: "0xdeploy"},
		&eventsv1.Contract{Chain: "ethereum", Address: seen, BlockNumber: 20, BlockHash: "0xb20", BlockTimeMs: 1_700_000_100_000, Bytecode: "0x00"},
		&eventsv1.Contract{Chain: "ethereum", Address: "0x" + strings.ToUpper(proxy[2:]), BlockNumber: 30, BlockHash: "0xb30",
			BlockTimeMs: 1_700_000_200_000, Bytecode: "0x3660", ProxyImplementation: "0x" + strings.ToUpper(tok[2:]), Deployer: eoa,
			DeployTxHash: "0xfactorycall", InternalDeployer: factory},
		&eventsv1.Contract{Chain: "ethereum", Address: delegated, BlockNumber: 40, BlockHash: "0xb40", BlockTimeMs: 1_700_000_300_000,
			Bytecode: "0xef0100" + tok[2:]})
	creation := msgs(eventsv1.TopicTransactions, &eventsv1.Transaction{Chain: "ethereum", Hash: "0xdeploy", From: eoa,
		ContractCreated: tok, BlockTimeMs: 1_700_000_000_000, Success: true, BytecodeSize: 18},
		&eventsv1.Transaction{Chain: "ethereum", Hash: "0xselfdestructed", From: eoa, ContractCreated: gone, BlockTimeMs: 1_700_000_000_000,
			Success: true, BytecodeSize: 0})
	for range 2 {
		if err := h.Contracts(ctx, contracts); err != nil {
			t.Fatal(err)
		}
		if err := h.Transactions(ctx, creation); err != nil {
			t.Fatal(err)
		}
	}
	api := newTestAPI(t, nil, nil)
	info := func(a string, contract bool) string {
		c := "false"
		if contract {
			c = "true"
		}
		return `{"address":"` + a + `","chain":"ethereum","contract":` + c + `,"isUserAddress":false}`
	}
	for _, c := range []struct{ path, want string }{
		{"/intelligence/contract/ethereum/" + tok, `{"address":"` + tok + `","chain":"ethereum","deployer":` + info(eoa, false) + `,
			"deployTxHash":"0xdeploy","transactionHash":"0xdeploy","blockTimestamp":"2023-11-14T22:13:20Z","bytecodeSize":18,
			"bytecode":"` + code + `","functionSighashes":["0xa9059cbb"],"isProxy":false,"proxyAddress":null,"internalDeployer":` + info(eoa, false) + `}`},
		{"/intelligence/contract/ethereum/" + seen + "?notAParameter=1", `{"address":"` + seen + `","chain":"ethereum","deployer":null,
			"deployTxHash":"","transactionHash":"","blockTimestamp":"2023-11-14T22:15:00Z","bytecodeSize":1,
			"bytecode":"0x00","functionSighashes":[],"isProxy":false,"proxyAddress":null,"internalDeployer":null}`},
		{"/intelligence/contract/ethereum/" + proxy, `{"address":"` + proxy + `","chain":"ethereum","deployer":` + info(eoa, false) + `,
			"deployTxHash":"0xfactorycall","transactionHash":"0xfactorycall","blockTimestamp":"2023-11-14T22:16:40Z","bytecodeSize":2,
			"bytecode":"0x3660","functionSighashes":[],"isProxy":true,"proxyAddress":"` + tok + `","internalDeployer":` + info(factory, false) + `}`},
		{"/intelligence/address/" + seen, info(seen, true)},
		{"/intelligence/address/" + proxy, info(proxy, true)},
		{"/intelligence/address/" + delegated, info(delegated, false)},
		{"/intelligence/address/" + gone, info(gone, false)},
	} {
		code, body := api.do(t, "GET", c.path, "", nil)
		if code != 200 {
			t.Errorf("%s: %d %s", c.path, code, body)
			continue
		}
		assertJSON(t, c.path, body, c.want)
	}
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/intelligence/contract/ethereum/" + addr(0x404), 404, `{"error":"no contract deployment known at ` + addr(0x404) + ` on ethereum"}`},
		{"/intelligence/contract/ethereum/" + delegated, 404, `{"error":"no contract deployment known at ` + delegated + ` on ethereum"}`},
		{"/intelligence/contract/ethereum/" + gone, 404, `{"error":"no contract deployment known at ` + gone + ` on ethereum"}`},
		{"/intelligence/contract/nochain/" + tok, 400, ``},
	} {
		code, body := api.do(t, "GET", c.path, "", nil)
		if code != c.code {
			t.Errorf("%s: %d %s, want %d", c.path, code, body, c.code)
		} else if c.want != "" {
			assertJSON(t, c.path, body, c.want)
		}
	}
}

// TestTransferFlagsContracts: a DEX pool intelligence never saw created is a contract in every
// address answer once a transfer says so (from_is_contract or to_is_contract), as /transfers says
// it is; its deployment stays unknown (404). Redelivery, and a reorg orphaning the transfer's
// block, change nothing: no new attribution version, the flag stays.
func TestTransferFlagsContracts(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	pair, router, trader := addr(0x5756), addr(0x7a11), addr(0xe0a)
	transfers := msgs(eventsv1.TopicTransfers,
		&eventsv1.Transfer{Chain: "ethereum", Id: "0xswap:1", TransactionHash: "0xswap", BlockHash: "0xb1", BlockNumber: 1,
			BlockTimeMs: 1_700_000_000_000, From: "0x" + strings.ToUpper(pair[2:]), To: trader, Amount: "5", FromIsContract: true},
		&eventsv1.Transfer{Chain: "ethereum", Id: "0xswap:2", TransactionHash: "0xswap", BlockHash: "0xb1", BlockNumber: 1,
			BlockTimeMs: 1_700_000_000_000, From: trader, To: router, Amount: "7", ToIsContract: true})
	version := func() (v int64) {
		if err := pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM intel.addresses`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := h.Transfers(ctx, transfers); err != nil {
		t.Fatal(err)
	}
	before := version()
	if err := h.Transfers(ctx, transfers); err != nil {
		t.Fatal(err)
	}
	reorg := msgs(eventsv1.TopicReorgs, &eventsv1.Reorg{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{{Hash: "0xb1", Number: 1}}})
	if err := h.Reorgs(ctx, reorg); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != before || before == 0 {
		t.Fatalf("redelivery or reorg took attribution version %d, after %d", v, before)
	}
	api := newTestAPI(t, nil, nil)
	id := httpx.Identity{KeyID: "k-c", UserID: "u-c", Role: httpx.RoleIndividual, Tier: "api"}
	info := func(a, chain, contract string) string {
		return `{"address":"` + a + `","chain":"` + chain + `","contract":` + contract + `,"isUserAddress":false}`
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/intelligence/address/" + pair, "", 200, info(pair, "ethereum", "true")},
		{"GET", "/intelligence/address/" + router, "", 200, info(router, "ethereum", "true")},
		{"GET", "/intelligence/address/" + trader, "", 200, info(trader, "ethereum", "false")},
		{"POST", "/intelligence/address/batch", `{"addresses":["` + pair + `","` + trader + `"]}`, 200,
			`{"addresses":{"` + pair + `":` + info(pair, "ethereum", "true") + `,"` + trader + `":` + info(trader, "ethereum", "false") + `}}`},
		{"POST", "/intelligence/address/batch/all?chains=ethereum,base", `{"addresses":["` + pair + `"]}`, 200,
			`{"addresses":{"` + pair + `":{"ethereum":` + info(pair, "ethereum", "true") + `,"base":` + info(pair, "base", "true") + `}}}`},
		{"GET", "/intelligence/contract/ethereum/" + pair, "", 404, `{"error":"no contract deployment known at ` + pair + ` on ethereum"}`},
	} {
		code, body := api.do(t, c.method, c.path, c.body, &id)
		if code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.code)
			continue
		}
		assertJSON(t, c.method+" "+c.path, body, c.want)
	}
}
