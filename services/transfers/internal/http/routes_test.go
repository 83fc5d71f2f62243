package http_test

import (
	"net/http"
	"testing"

	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// GET /transfers/tx/{hash}: the transaction's transfers in log order, fully attributed; by
// chain and by transfer type; a transaction on no chain asked for is a 404.
func TestTransfersOfTx(t *testing.T) {
	e := world(t)
	f := `{"address":"` + tw.F + `","chain":"ethereum","serviceEntity":{"id":"a16z","name":"a16z","note":"","type":"fund","service":true},"contract":false,"isUserAddress":false}`
	p := `{"address":"` + tw.P + `","chain":"ethereum","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},"serviceLabel":{"name":"USDC/WETH Pool","address":"` + tw.P + `","chainType":"evm"},"contract":true,"isUserAddress":false}`
	common := `"transactionHash":"` + tw.TxHash(7) + `","blockHash":"` + tw.BlockHash("ethereum", 7) + `","blockNumber":107,"blockTimestamp":"2026-01-04T08:00:00Z","chain":"ethereum",`
	t7 := `{"id":"` + tw.ID("t7") + `",` + common + `"fromAddress":` + f + `,"toAddress":` + p + `,"fromIsContract":false,"toIsContract":true,
	  "tokenAddress":"` + tw.WETH + `","tokenId":"weth","tokenName":"Wrapped Ether","tokenSymbol":"WETH","tokenDecimals":18,"unitValue":5,"historicalUSD":10000,"type":"token"}`
	t8 := `{"id":"` + tw.ID("t8") + `",` + common + `"fromAddress":` + p + `,"toAddress":` + f + `,"fromIsContract":true,"toIsContract":false,
	  "tokenAddress":"` + tw.USDC + `","tokenId":"usd-coin","tokenName":"USD Coin","tokenSymbol":"USDC","tokenDecimals":6,"unitValue":9900,"historicalUSD":9900,"type":"token"}`
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)), http.StatusOK, `[`+t7+`,`+t8+`]`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)+"?chain=ethereum&transferType=token"), http.StatusOK, `[`+t7+`,`+t8+`]`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)+"?transferType=external"), http.StatusOK, `[]`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)+"?chain=base"), http.StatusNotFound,
		`{"error":"transaction `+tw.TxHash(7)+` not found on base"}`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)+"?transferType=erc20"), http.StatusBadRequest,
		`{"error":"transferType: must be one of external, internal, token, got \"erc20\""}`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(7)+"?chain=mars"), http.StatusBadRequest,
		`{"error":"chain: unknown chain \"mars\""}`)
	sameJSON(t, e.get(t, &bob, "/transfers/tx/"+tw.TxHash(99)), http.StatusNotFound,
		`{"error":"transaction `+tw.TxHash(99)+` not found on any chain"}`)
}

// GET /transfers/unenriched: /transfers's filters and paging, each address as its address and
// chain only, even for a caller with labels.
func TestUnenrichedTransfers(t *testing.T) {
	e := world(t)
	addr := func(a string) string {
		return `{"address":"` + a + `","chain":"ethereum","contract":false,"isUserAddress":false}`
	}
	t6 := `{"id":"` + tw.ID("t6") + `","transactionHash":"` + tw.TxHash(6) + `","blockHash":"` + tw.BlockHash("ethereum", 6) + `","blockNumber":106,
	  "blockTimestamp":"2026-01-03T05:00:00Z","chain":"ethereum","fromAddress":` + addr(tw.H1) + `,"toAddress":` + addr(tw.H2) + `,
	  "fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH","tokenDecimals":18,
	  "unitValue":10,"historicalUSD":20000,"type":"external"}`
	t3 := `{"id":"` + tw.ID("t3") + `","transactionHash":"` + tw.TxHash(3) + `","blockHash":"` + tw.BlockHash("ethereum", 3) + `","blockNumber":103,
	  "blockTimestamp":"2026-01-02T09:00:00Z","chain":"ethereum","fromAddress":` + addr(tw.H1) + `,"toAddress":` + addr(tw.U2) + `,
	  "fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH","tokenDecimals":18,
	  "unitValue":2,"historicalUSD":4000,"type":"external"}`
	sameJSON(t, e.get(t, &alice, "/transfers/unenriched?base="+tw.H1+"&limit=2"), http.StatusOK, `{"transfers":[`+t6+`,`+t3+`],"count":3}`)
	// The same page through a cursor: the first page of one, then the next from its cursor.
	r := e.get(t, &alice, "/transfers/unenriched?base="+tw.H1+"&limit=1&includeCursors=true")
	var p cursorPage
	mustJSON(t, r.body, &p)
	if len(p.Transfers) != 1 || p.Transfers[0].ID != tw.ID("t6") || p.NextCursor == "" {
		t.Fatalf("first page: %s", r.body)
	}
	sameJSON(t, e.get(t, &alice, "/transfers/unenriched?base="+tw.H1+"&limit=1&cursor="+p.NextCursor), http.StatusOK,
		`{"transfers":[`+t3+`],"count":2,"nextCursor":"`+cursorAfter(t, e, "/transfers/unenriched?base="+tw.H1+"&limit=1&cursor="+p.NextCursor)+`"}`)
	sameJSON(t, e.get(t, &alice, "/transfers/unenriched?base=binance&flow=sideways"), http.StatusBadRequest,
		`{"error":"flow: must be one of in, out, self, all, got \"sideways\""}`)
}

// GET /volume/address|entity/...: per chain and day, USD deposited to and withdrawn from each
// exchange (entity of type cex, or a deposit address's service); transfers inside the subject
// are not volume.
func TestVolume(t *testing.T) {
	e := world(t)
	sameJSON(t, e.get(t, &bob, "/volume/address/"+tw.U2), http.StatusOK, `{
	  "base":[{"time":"2026-01-02T00:00:00Z","volumes":[{"exchangeID":"coinbase","exchangeName":"Coinbase","withdrawnUSD":0,"depositedUSD":500}]}],
	  "ethereum":[{"time":"2026-01-02T00:00:00Z","volumes":[{"exchangeID":"binance","exchangeName":"Binance","withdrawnUSD":4000,"depositedUSD":0}]}]}`)
	sameJSON(t, e.get(t, &bob, "/volume/address/"+tw.U2+"?chains=base"), http.StatusOK, `{
	  "base":[{"time":"2026-01-02T00:00:00Z","volumes":[{"exchangeID":"coinbase","exchangeName":"Coinbase","withdrawnUSD":0,"depositedUSD":500}]}]}`)
	sameJSON(t, e.get(t, &bob, "/volume/entity/binance"), http.StatusOK, `{
	  "ethereum":[{"time":"2026-01-03T00:00:00Z","volumes":[{"exchangeID":"coinbase","exchangeName":"Coinbase","withdrawnUSD":0,"depositedUSD":20000}]}]}`)
	sameJSON(t, e.get(t, &bob, "/volume/entity/coinbase"), http.StatusOK, `{
	  "ethereum":[{"time":"2026-01-03T00:00:00Z","volumes":[{"exchangeID":"binance","exchangeName":"Binance","withdrawnUSD":20000,"depositedUSD":0}]}]}`)
	sameJSON(t, e.get(t, &bob, "/volume/entity/a16z"), http.StatusOK, `{}`)
	sameJSON(t, e.get(t, &bob, "/volume/entity/nobody"), http.StatusNotFound, `{"error":"unknown entity \"nobody\""}`)
	sameJSON(t, e.get(t, &bob, "/volume/address/0x12"), http.StatusNotFound, `{"error":"\"0x12\" is not an address of any supported chain"}`)
	sameJSON(t, e.get(t, &bob, "/volume/entity/binance?chains=mars"), http.StatusBadRequest, `{"error":"chains: unknown chain \"mars\""}`)
}

// Every route taking chains reads it through params.Chains: a name that is no chain, or one not
// configured here, is a 400 naming the parameter and the value, never an empty 200.
func TestUnknownChainsEveryRoute(t *testing.T) {
	e := world(t)
	for _, path := range []string{
		"/transfers?chains=ethereum,notachain", "/transfers/histogram?base=binance&chains=notachain",
		"/transfers/histogram/simple?base=binance&chains=notachain", "/swaps?chains=notachain",
		"/counterparties/address/" + tw.U1 + "?chains=notachain", "/counterparties/entity/binance?chains=notachain",
		"/flow/address/" + tw.U1 + "?chains=notachain", "/flow/entity/binance?chains=notachain",
		"/volume/address/" + tw.U1 + "?chains=notachain", "/volume/entity/binance?chains=notachain",
	} {
		sameJSON(t, e.get(t, &bob, path), http.StatusBadRequest, `{"error":"chains: unknown chain \"notachain\""}`)
	}
}
