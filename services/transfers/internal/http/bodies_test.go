package http_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	"encoding/json"
	"fmt"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"strings"
	"testing"

	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// compact re-encodes JSON without spaces so whole bodies compare exactly.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return b.String()
}

func sameJSON(t *testing.T, r resp, status int, want string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if got, w := compact(t, string(r.body)), compact(t, want); got != w {
		t.Fatalf("body\n got %s\nwant %s", got, w)
	}
}

const (
	h1Info = `{"address":"` + tw.H1 + `","chain":"ethereum","serviceEntity":{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"website":"https://binance.com"},"serviceLabel":{"name":"Hot Wallet 1","address":"` + tw.H1 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	u2Bob  = `{"address":"` + tw.U2 + `","chain":"ethereum","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false}`
)

// The Transfer object, field by field, for the caller who labelled the recipient and for one
// who did not.
func TestTransferObject(t *testing.T) {
	e := world(t)
	t3 := `{"id":"` + tw.ID("t3") + `","transactionHash":"` + tw.TxHash(3) + `","blockHash":"` + tw.BlockHash("ethereum", 3) + `",
	  "blockNumber":103,"blockTimestamp":"2026-01-02T09:00:00Z","chain":"ethereum","fromAddress":` + h1Info + `,
	  "toAddress":%s,"fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH",
	  "tokenDecimals":18,"unitValue":2,"historicalUSD":4000,"type":"external"}`
	u2Alice := `{"address":"` + tw.U2 + `","chain":"ethereum","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},
	  "userEntity":{"id":"` + e.aliceEntity + `","name":"My desk","note":"mine","type":"user","service":null},
	  "userLabel":{"name":"Bob's wallet","address":"` + tw.U2 + `","chainType":"evm"},"contract":false,"isUserAddress":true}`
	sameJSON(t, e.get(t, &alice, "/transfers?base=binance&counterparties="+tw.U2), 200,
		`{"transfers":[`+fmt.Sprintf(t3, u2Alice)+`],"count":1}`)
	sameJSON(t, e.get(t, &bob, "/transfers?base=binance&counterparties="+tw.U2), 200,
		`{"transfers":[`+fmt.Sprintf(t3, u2Bob)+`],"count":1}`)
	// A token transfer into a contract, and one without a known price.
	r := e.get(t, &bob, "/transfers?from="+tw.F)
	sameJSON(t, r, 200, `{"transfers":[{"id":"`+tw.ID("t7")+`","transactionHash":"`+tw.TxHash(7)+`","blockHash":"`+tw.BlockHash("ethereum", 7)+`",
	  "blockNumber":107,"blockTimestamp":"2026-01-04T08:00:00Z","chain":"ethereum",
	  "fromAddress":{"address":"`+tw.F+`","chain":"ethereum","serviceEntity":{"id":"a16z","name":"a16z","note":"","type":"fund","service":true},"contract":false,"isUserAddress":false},
	  "toAddress":{"address":"`+tw.P+`","chain":"ethereum","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},"serviceLabel":{"name":"USDC/WETH Pool","address":"`+tw.P+`","chainType":"evm"},"contract":true,"isUserAddress":false},
	  "fromIsContract":false,"toIsContract":true,"tokenAddress":"`+tw.WETH+`","tokenId":"weth","tokenName":"Wrapped Ether","tokenSymbol":"WETH",
	  "tokenDecimals":18,"unitValue":5,"historicalUSD":10000,"type":"token"}],"count":1}`)
	r = e.get(t, &bob, "/transfers?chains=base&valueLte=0.5")
	sameJSON(t, r, 200, `{"transfers":[{"id":"`+tw.ID("t9")+`","transactionHash":"`+tw.TxHash(9)+`","blockHash":"`+tw.BlockHash("base", 9)+`",
	  "blockNumber":109,"blockTimestamp":"2026-01-05T02:00:00Z","chain":"base",
	  "fromAddress":{"address":"`+tw.U1+`","chain":"base","contract":false,"isUserAddress":false},
	  "toAddress":{"address":"`+tw.U2+`","chain":"base","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false},
	  "fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH",
	  "tokenDecimals":18,"unitValue":0.1,"type":"external"}],"count":1}`)
}

func TestHistograms(t *testing.T) {
	t.Run("small-set plans", testHistograms)
	t.Run("large-set plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		testHistograms(t)
	})
	t.Run("entity-rollup plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer liveGroups(t)()
		testHistograms(t)
	})
}

func testHistograms(t *testing.T) {
	e := world(t)
	day := func(d int) string { return tw.D0.AddDate(0, 0, d).Format("2006-01-02T15:04:05Z") }
	cases := []struct{ path, want string }{
		// Per-address rollups, entity summed over its addresses, internal sweep counted once.
		{"/transfers/histogram?base=binance", `[{"time":"` + day(0) + `","count":2,"usd":2000},{"time":"` + day(1) + `","count":1,"usd":4000},{"time":"` + day(2) + `","count":1,"usd":20000}]`},
		{"/transfers/histogram?base=binance&flow=in", `[{"time":"` + day(0) + `","count":1,"usd":1000}]`},
		{"/transfers/histogram?base=binance&flow=self", `[{"time":"` + day(0) + `","count":1,"usd":1000}]`},
		{"/transfers/histogram?base=binance&flow=out&chains=base", `[]`},
		{"/transfers/histogram?base=" + tw.U1 + "&flow=out", `[{"time":"` + day(0) + `","count":1,"usd":1000},{"time":"` + day(4) + `","count":1,"usd":0}]`},
		// Per-chain rollup.
		{"/transfers/histogram", `[{"time":"` + day(0) + `","count":2,"usd":2000},{"time":"` + day(1) + `","count":2,"usd":4500},{"time":"` + day(2) + `","count":2,"usd":20500},{"time":"` + day(3) + `","count":2,"usd":19900},{"time":"` + day(4) + `","count":2,"usd":2000}]`},
		{"/transfers/histogram?tokens=usd-coin&chains=base", `[{"time":"` + day(1) + `","count":1,"usd":500},{"time":"` + day(2) + `","count":1,"usd":500}]`},
		// Pair rollup (from/to/counterparties).
		{"/transfers/histogram?from=type:cex", `[{"time":"` + day(0) + `","count":1,"usd":1000},{"time":"` + day(1) + `","count":1,"usd":4000},{"time":"` + day(2) + `","count":2,"usd":20500}]`},
		{"/transfers/histogram?from=type:cex&to=type:cex", `[{"time":"` + day(0) + `","count":1,"usd":1000},{"time":"` + day(2) + `","count":2,"usd":20500}]`},
		{"/transfers/histogram?from=type:cex&to=!type:cex", `[{"time":"` + day(1) + `","count":1,"usd":4000}]`},
		{"/transfers/histogram?from=binance&to=coinbase&granularity=1h&timeLast=30d", `[{"time":"2026-01-03T05:00:00Z","count":1,"usd":20000}]`},
		{"/transfers/histogram?base=binance&counterparties=coinbase", `[{"time":"` + day(2) + `","count":1,"usd":20000}]`},
		// Row-level ranges (an entity's through its pair rows under the entity-rollup plans).
		{"/transfers/histogram?usdGte=5000", `[{"time":"` + day(2) + `","count":1,"usd":20000},{"time":"` + day(3) + `","count":2,"usd":19900}]`},
		{"/transfers/histogram?base=binance&usdGte=3000", `[{"time":"` + day(1) + `","count":1,"usd":4000},{"time":"` + day(2) + `","count":1,"usd":20000}]`},
		{"/transfers/histogram?base=binance&usdLte=1000", `[{"time":"` + day(0) + `","count":2,"usd":2000}]`},
		{"/transfers/histogram?base=binance&flow=out&usdGte=1500&usdLte=10000", `[{"time":"` + day(1) + `","count":1,"usd":4000}]`},
		{"/transfers/histogram?granularity=1h&base=binance&timeGte=2026-01-01T10:30:00Z&timeLte=2026-01-02T09:10:00Z&usdGte=2000",
			`[{"time":"2026-01-02T09:00:00Z","count":1,"usd":4000}]`},
		// Types and deposit addresses on an entity's pair rows, with a range.
		{"/transfers/histogram?from=binance&to=!type:cex&usdGte=100", `[{"time":"` + day(1) + `","count":1,"usd":4000}]`},
		{"/transfers/histogram?to=coinbase&from=type:cex&usdGte=100", `[{"time":"` + day(2) + `","count":2,"usd":20500}]`},
		{"/transfers/histogram?from=deposit:coinbase&to=type:cex&usdGte=100", `[{"time":"` + day(2) + `","count":1,"usd":500}]`},
		{"/transfers/histogram?to=deposit:binance&from=!type:cex&usdLte=5000", `[{"time":"` + day(0) + `","count":1,"usd":1000}]`},
		// An entity and an address, with a range: the entity's pair rows, the address's rows, less
		// the transfers between them (t4 here), which both hold.
		{"/transfers/histogram?base=binance," + tw.U1 + "&usdGte=1500", `[{"time":"` + day(1) + `","count":1,"usd":4000},{"time":"` + day(2) + `","count":1,"usd":20000},{"time":"` + day(4) + `","count":1,"usd":2000}]`},
		{"/transfers/histogram?base=coinbase," + tw.U2 + "&usdLte=1000", `[{"time":"` + day(1) + `","count":1,"usd":500},{"time":"` + day(2) + `","count":1,"usd":500}]`},
		// Hourly, a window cutting its first and last hours: t1 (10:00) lies before it, t3
		// (09:00 the next day) inside.
		{"/transfers/histogram?granularity=1h&base=binance&timeGte=2026-01-01T10:30:00Z&timeLte=2026-01-02T09:10:00Z",
			`[{"time":"2026-01-01T12:00:00Z","count":1,"usd":1000},{"time":"2026-01-02T09:00:00Z","count":1,"usd":4000}]`},
		{"/transfers/histogram?granularity=1h&timeLast=7d&chains=base", `[{"time":"2026-01-03T01:00:00Z","count":1,"usd":500},{"time":"2026-01-05T02:00:00Z","count":1,"usd":0}]`},
		{"/transfers/histogram/simple?base=coinbase&flow=in", `[{"time":"` + day(1) + `","count":1,"usd":500},{"time":"` + day(2) + `","count":1,"usd":20000}]`},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) { sameJSON(t, e.get(t, &bob, c.path), 200, c.want) })
	}
	// The caller's only_add additions (the fund) join binance: its two transfers with the pool
	// count, on the fourth day.
	sameJSON(t, e.get(t, &alice, "/transfers/histogram?base=binance"), 200, `[{"time":"`+day(0)+`","count":2,"usd":2000},{"time":"`+day(1)+`","count":1,"usd":4000},{"time":"`+day(2)+`","count":1,"usd":20000},{"time":"`+day(3)+`","count":2,"usd":19900}]`)
	sameJSON(t, e.get(t, &alice, "/transfers/histogram?base=binance&flow=in"), 200, `[{"time":"`+day(0)+`","count":1,"usd":1000},{"time":"`+day(3)+`","count":1,"usd":9900}]`)
	sameJSON(t, e.get(t, &alice, "/transfers/histogram?base=binance&flow=self&granularity=1h&timeLast=30d"), 200, `[{"time":"2026-01-01T12:00:00Z","count":1,"usd":1000}]`)
	// The public histogram needs no caller.
	sameJSON(t, e.get(t, nil, "/transfers/histogram/simple?base=binance&flow=in"), 200, `[{"time":"`+day(0)+`","count":1,"usd":1000}]`)
}

func TestCounterpartiesAndFlow(t *testing.T) {
	t.Run("small-set plans", testCounterpartiesAndFlow)
	t.Run("large-set plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		testCounterpartiesAndFlow(t)
	})
	t.Run("entity-rollup plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer liveGroups(t)()
		testCounterpartiesAndFlow(t)
	})
}

func testCounterpartiesAndFlow(t *testing.T) {
	e := world(t)
	u1 := `{"address":"` + tw.U1 + `","chain":"ethereum","contract":false,"isUserAddress":false}`
	h2 := `{"address":"` + tw.H2 + `","chain":"ethereum","serviceEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"serviceLabel":{"name":"Hot Wallet","address":"` + tw.H2 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance"), 200, `{"ethereum":[
	  {"address":`+h2+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000},
	  {"address":`+u2Bob+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":4000},
	  {"address":`+u1+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`)
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?flow=in"), 200, `{"ethereum":[{"address":`+u1+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`)
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?usdGte=5000"), 200, `{"ethereum":[{"address":`+h2+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000}]}`)
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?limit=1&tokens=usd-coin"), 200, `{"ethereum":[{"address":`+u1+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`)
	// The top counterparties by USD when there are more than the limit, and an entity's
	// counterparties on two chains, all of them or the chains asked for (one named twice).
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?limit=2"), 200, `{"ethereum":[
	  {"address":`+h2+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000},
	  {"address":`+u2Bob+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":4000}]}`)
	u2base := `{"address":"` + tw.U2 + `","chain":"base","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false}`
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/coinbase"), 200, `{
	  "base":[{"address":`+u2base+`,"chains":["base"],"flow":"in","transactionCount":1,"usd":500}],
	  "ethereum":[{"address":`+h1Info+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":20000}]}`)
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/coinbase?chains=base,base"), 200, `{
	  "base":[{"address":`+u2base+`,"chains":["base"],"flow":"in","transactionCount":1,"usd":500}]}`)
	// An address seen on two chains, in both directions with one counterparty.
	u2b := `{"address":"` + tw.U2 + `","chain":"base","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false}`
	d3 := `{"address":"` + tw.D3 + `","chain":"base","serviceEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"serviceLabel":{"name":"Deposit","address":"` + tw.D3 + `","chainType":"evm"},"depositServiceID":"coinbase","contract":false,"isUserAddress":false}`
	h1 := `{"address":"` + tw.H1 + `","chain":"ethereum","serviceEntity":{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"website":"https://binance.com"},"serviceLabel":{"name":"Hot Wallet 1","address":"` + tw.H1 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	sameJSON(t, e.get(t, &bob, "/counterparties/address/"+tw.U2), 200, `{"base":[
	  {"address":`+d3+`,"chains":["base"],"flow":"out","transactionCount":1,"usd":500},
	  {"address":{"address":"`+tw.U1+`","chain":"base","contract":false,"isUserAddress":false},"chains":["base"],"flow":"in","transactionCount":1,"usd":0}],
	  "ethereum":[{"address":`+h1+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":4000}]}`)
	_ = u2b

	sameJSON(t, e.get(t, &bob, "/flow/entity/binance"), 200, `{"ethereum":[
	  {"time":"2026-01-01T00:00:00Z","inflow":1000,"outflow":0,"cumulativeInflow":1000,"cumulativeOutflow":0},
	  {"time":"2026-01-02T00:00:00Z","inflow":0,"outflow":4000,"cumulativeInflow":1000,"cumulativeOutflow":4000},
	  {"time":"2026-01-03T00:00:00Z","inflow":0,"outflow":20000,"cumulativeInflow":1000,"cumulativeOutflow":24000}]}`)
	// A window that cuts a day: t3 (09:00 on the 2nd) lies before it.
	sameJSON(t, e.get(t, &bob, "/flow/entity/binance?timeGte=2026-01-02T12:00:00Z"), 200, `{"ethereum":[
	  {"time":"2026-01-03T00:00:00Z","inflow":0,"outflow":20000,"cumulativeInflow":0,"cumulativeOutflow":20000}]}`)
	sameJSON(t, e.get(t, &bob, "/flow/entity/binance?timeGte=2026-01-02T09:00:00Z"), 200, `{"ethereum":[
	  {"time":"2026-01-02T00:00:00Z","inflow":0,"outflow":4000,"cumulativeInflow":0,"cumulativeOutflow":4000},
	  {"time":"2026-01-03T00:00:00Z","inflow":0,"outflow":20000,"cumulativeInflow":0,"cumulativeOutflow":24000}]}`)
	sameJSON(t, e.get(t, &alice, "/flow/entity/"+e.aliceEntity+"?chains=ethereum"), 200, `{"ethereum":[
	  {"time":"2026-01-01T00:00:00Z","inflow":0,"outflow":1000,"cumulativeInflow":0,"cumulativeOutflow":1000},
	  {"time":"2026-01-02T00:00:00Z","inflow":4000,"outflow":0,"cumulativeInflow":4000,"cumulativeOutflow":1000}]}`)
	sameJSON(t, e.get(t, &bob, "/flow/address/"+tw.U1+"?chains=base"), 200, `{"base":[
	  {"time":"2026-01-05T00:00:00Z","inflow":0,"outflow":0,"cumulativeInflow":0,"cumulativeOutflow":0}]}`)
	// Windows read the entity's pair rows (hours): t1 at 10:00 is outside.
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?timeGte=2026-01-01T11:00:00Z"), 200, `{"ethereum":[
	  {"address":`+h2+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000},
	  {"address":`+u2Bob+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":4000}]}`)
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?timeLte=2026-01-02T09:00:00Z&flow=out"), 200, `{"ethereum":[
	  {"address":`+u2Bob+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":4000}]}`)
	// The caller's only_add additions (the fund) join binance: the pool becomes a counterparty
	// both ways; the fund's flows join binance's.
	p := `{"address":"` + tw.P + `","chain":"ethereum","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},"serviceLabel":{"name":"USDC/WETH Pool","address":"` + tw.P + `","chainType":"evm"},"contract":true,"isUserAddress":false}`
	mine := `"userEntity":{"id":"` + e.aliceEntity + `","name":"My desk","note":"mine","type":"user","service":null}`
	u2Alice := `{"address":"` + tw.U2 + `","chain":"ethereum","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},` + mine +
		`,"userLabel":{"name":"Bob's wallet","address":"` + tw.U2 + `","chainType":"evm"},"contract":false,"isUserAddress":true}`
	u1Alice := `{"address":"` + tw.U1 + `","chain":"ethereum",` + mine + `,"contract":false,"isUserAddress":true}`
	sameJSON(t, e.get(t, &alice, "/counterparties/entity/binance"), 200, `{"ethereum":[
	  {"address":`+h2+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000},
	  {"address":`+p+`,"chains":["ethereum"],"flow":"either","transactionCount":2,"usd":19900},
	  {"address":`+u2Alice+`,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":4000},
	  {"address":`+u1Alice+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`)
	sameJSON(t, e.get(t, &alice, "/counterparties/entity/binance?timeGte=2026-01-01T11:00:00Z&flow=in"), 200, `{"ethereum":[
	  {"address":`+p+`,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":9900}]}`)
	sameJSON(t, e.get(t, &alice, "/flow/entity/binance"), 200, `{"ethereum":[
	  {"time":"2026-01-01T00:00:00Z","inflow":1000,"outflow":0,"cumulativeInflow":1000,"cumulativeOutflow":0},
	  {"time":"2026-01-02T00:00:00Z","inflow":0,"outflow":4000,"cumulativeInflow":1000,"cumulativeOutflow":4000},
	  {"time":"2026-01-03T00:00:00Z","inflow":0,"outflow":20000,"cumulativeInflow":1000,"cumulativeOutflow":24000},
	  {"time":"2026-01-04T00:00:00Z","inflow":9900,"outflow":10000,"cumulativeInflow":10900,"cumulativeOutflow":34000}]}`)
	// Another caller cannot use alice's entity.
	r := e.get(t, &bob, "/flow/entity/"+e.aliceEntity)
	if r.status != 404 {
		t.Fatalf("bob reading alice's entity: %d %s", r.status, r.body)
	}
}

func TestSwapsAndTx(t *testing.T) {
	e := world(t)
	s1 := `{"id":"` + tw.TxHash(20) + `_4","chain":"ethereum","transactionHash":"` + tw.TxHash(20) + `","blockHash":"` + tw.BlockHash("ethereum", 20) + `",
	  "blockNumber":120,"blockTimestamp":"2026-01-04T03:00:00Z",
	  "contractAddress":{"address":"` + tw.P + `","chain":"ethereum","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},"serviceLabel":{"name":"USDC/WETH Pool","address":"` + tw.P + `","chainType":"evm"},"contract":true,"isUserAddress":false},
	  "contractEntityId":"uniswap",
	  "sender":{"address":"` + tw.U1 + `","chain":"ethereum","contract":false,"isUserAddress":false},
	  "receiver":{"address":"` + tw.U1 + `","chain":"ethereum","contract":false,"isUserAddress":false},
	  "token0":"` + tw.USDC + `","token0Id":"usd-coin","token0Name":"USD Coin","token0Symbol":"USDC","token0Decimals":6,"unitValue0":1000,
	  "token1":"` + tw.WETH + `","token1Id":"weth","token1Name":"Wrapped Ether","token1Symbol":"WETH","token1Decimals":18,"unitValue1":-0.5,
	  "historicalUSD":1000,"valid":true}`
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U1+"&flow=out"), 200, `{"swaps":[`+s1+`],"count":1}`)
	// flow follows the tokens, not only the sides: in is base receiving token1 (the pool paid it
	// out, unitValue1 < 0), out is base sending token0 (the pool received it, unitValue0 > 0).
	// _4 (U1 -> U1, +1000 USDC / -0.5 WETH) is both for U1; in _7 (U2 -> U1, -250 USDC /
	// +0.125 WETH) U1 received token0 and U2 sent token1, so it is neither.
	s7 := `{"id":"` + tw.TxHash(21) + `_7","chain":"base","transactionHash":"` + tw.TxHash(21) + `","blockHash":"` + tw.BlockHash("base", 21) + `",
	  "blockNumber":121,"blockTimestamp":"2026-01-04T04:00:00Z",
	  "contractAddress":{"address":"` + tw.P + `","chain":"base","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},"serviceLabel":{"name":"USDC/WETH Pool","address":"` + tw.P + `","chainType":"evm"},"contract":true,"isUserAddress":false},
	  "contractEntityId":"uniswap",
	  "sender":{"address":"` + tw.U2 + `","chain":"base","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false},
	  "receiver":{"address":"` + tw.U1 + `","chain":"base","contract":false,"isUserAddress":false},
	  "token0":"` + tw.USDC + `","token0Id":"usd-coin","token0Name":"USD Coin","token0Symbol":"USDC","token0Decimals":6,"unitValue0":-250,
	  "token1":"` + tw.WETH + `","token1Id":"weth","token1Name":"Wrapped Ether","token1Symbol":"WETH","token1Decimals":18,"unitValue1":0.125,
	  "historicalUSD":250,"valid":true}`
	none := `{"swaps":[],"count":0}`
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U1+"&flow=in"), 200, `{"swaps":[`+s1+`],"count":1}`)
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U1+"&flow=in&chains=base"), 200, none)
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U1+"&flow=all"), 200, `{"swaps":[`+s7+`,`+s1+`],"count":2}`)
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U2+"&flow=out"), 200, none)
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U2+"&flow=in"), 200, none)
	sameJSON(t, e.get(t, &bob, "/swaps?base="+tw.U2), 200, `{"swaps":[`+s7+`],"count":1}`)
	list := func(path string) string {
		r := e.get(t, &bob, path)
		var out struct {
			Swaps []struct {
				ID string `json:"id"`
			} `json:"swaps"`
			Count int `json:"count"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &out) != nil {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		s := ""
		for _, x := range out.Swaps {
			s += x.ID[len(x.ID)-2:] + " "
		}
		return s + fmt.Sprintf("(%d)", out.Count)
	}
	for path, want := range map[string]string{
		"/swaps":                                   "_7 _4 (2)",
		"/swaps?sortDir=asc":                       "_4 _7 (2)",
		"/swaps?base=" + tw.U1 + "&flow=in":        "_4 (1)",
		"/swaps?base=" + tw.U2:                     "_7 (1)",
		"/swaps?chains=ethereum":                   "_4 (1)",
		"/swaps?tokens=weth&sortKey=usd":           "_4 _7 (2)",
		"/swaps?sortKey=usd&sortDir=asc":           "_7 _4 (2)",
		"/swaps?usdGte=500":                        "_4 (1)",
		"/swaps?from=" + tw.U2 + "&to=" + tw.U1:    "_7 (1)",
		"/swaps?to=!" + tw.U1:                      "(0)",
		"/swaps?limit=1&offset=1":                  "_4 (2)",
		"/swaps?base=uniswap&flow=out&timeLast=1h": "(0)",
		// A lone bound of the time range is a one-sided bound, never ignored.
		"/swaps?timeGte=2026-01-04T03:30:00Z": "_7 (1)",
		"/swaps?timeLte=2026-01-04T03:30:00Z": "_4 (1)",
	} {
		if got := list(path); got != want {
			t.Errorf("%s: got %s, want %s", path, got, want)
		}
	}

	r := e.get(t, &alice, "/tx/"+tw.TxHash(3))
	sameJSON(t, r, 200, `{"ethereum":{"hash":"`+tw.TxHash(3)+`","chain":"ethereum","blockNumber":103,"blockHash":"`+tw.BlockHash("ethereum", 3)+`",
	  "blockTimestamp":"2026-01-02T09:00:00Z","from":`+h1Info+`,"to":{"address":"`+tw.U2+`","chain":"ethereum","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},
	  "userEntity":{"id":"`+e.aliceEntity+`","name":"My desk","note":"mine","type":"user","service":null},"userLabel":{"name":"Bob's wallet","address":"`+tw.U2+`","chainType":"evm"},"contract":false,"isUserAddress":true},
	  "nonce":3,"status":"success","value":2,"valueExact":"2000000000000000000","usd":4000,"gasUsed":21000,"gasPrice":20000000000,
	  "effectiveGasPrice":20000000000,"fee":0.00042,"feeUsd":0.5,
	  "transfers":[{"id":"`+tw.ID("t3")+`","transactionHash":"`+tw.TxHash(3)+`","blockHash":"`+tw.BlockHash("ethereum", 3)+`",
	  "blockNumber":103,"blockTimestamp":"2026-01-02T09:00:00Z","chain":"ethereum","fromAddress":`+h1Info+`,
	  "toAddress":{"address":"`+tw.U2+`","chain":"ethereum","predictedEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},
	  "userEntity":{"id":"`+e.aliceEntity+`","name":"My desk","note":"mine","type":"user","service":null},"userLabel":{"name":"Bob's wallet","address":"`+tw.U2+`","chainType":"evm"},"contract":false,"isUserAddress":true},
	  "fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH",
	  "tokenDecimals":18,"unitValue":2,"historicalUSD":4000,"type":"external"}]}}`)
	// Upper-case hex finds the same transaction; a transaction with two transfers lists both.
	r = e.get(t, &bob, "/tx/0x"+strings.ToUpper(tw.TxHash(7)[2:]))
	var tx map[string]struct {
		MethodID  string `json:"methodId"`
		Transfers []struct {
			ID string `json:"id"`
		} `json:"transfers"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &tx) != nil || len(tx["ethereum"].Transfers) != 2 ||
		tx["ethereum"].Transfers[0].ID != tw.ID("t7") || tx["ethereum"].MethodID != "0xa9059cbb" {
		t.Fatalf("tx 7: %d %s", r.status, r.body)
	}
}

// countingLabels counts the calls that reach the real user-labels client.
type countingLabels struct {
	*ulclient.Client
	lookups, addrs int
}

func (c *countingLabels) Lookup(ctx context.Context, a []ulclient.AddressRef) (ulclient.Lookup, error) {
	c.lookups++
	c.addrs += len(a)
	return c.Client.Lookup(ctx, a)
}

// A page asks user-labels once, for its distinct addresses; the next page within the cache's
// lifetime asks only for addresses it has not seen; another caller is asked for separately.
func TestUserLabelsBatchedAndCached(t *testing.T) {
	e := world(t)
	client, err := ulclient.New(e.ulURL, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := &countingLabels{Client: client}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(e.store, app.NewLabelCache(counter, time.Minute, 1000), cs),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	get := func(who httpx.Identity, path string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		httpx.NewSigner(secret).Sign(req.Header, who, time.Now())
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
	}
	get(alice, "/transfers?chains=ethereum") // 8 transfers among 7 distinct addresses
	if counter.lookups != 1 || counter.addrs != 7 {
		t.Fatalf("first page: %d lookups for %d addresses, want 1 for 7", counter.lookups, counter.addrs)
	}
	get(alice, "/transfers?chains=ethereum&limit=3")
	if counter.lookups != 1 {
		t.Fatalf("cached page asked user-labels again (%d lookups)", counter.lookups)
	}
	get(alice, "/transfers?chains=base") // keys are per chain type: only D3 is new
	if counter.lookups != 2 || counter.addrs != 8 {
		t.Fatalf("base page: %d lookups for %d addresses, want 2 for 8 (D3 new)", counter.lookups, counter.addrs)
	}
	get(bob, "/transfers?chains=ethereum")
	if counter.lookups != 3 || counter.addrs != 15 {
		t.Fatalf("another caller: %d lookups for %d addresses, want 3 for 15", counter.lookups, counter.addrs)
	}
}

func (e *env) post(t *testing.T, path string, body string) resp {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.router.ServeHTTP(w, req)
	return resp{w.Code, w.Header(), w.Body.Bytes()}
}

// POST /internal/activity (docs/contracts.md), from the rollups.
func TestInternalActivity(t *testing.T) {
	e := world(t)
	sameJSON(t, e.post(t, "/internal/activity", `{"addresses":[{"chainType":"evm","address":"0x`+strings.ToUpper(tw.H1[2:])+`"},{"chainType":"evm","address":"`+tw.D1+`"}]}`), 200,
		`{"volumeUsd":26000,"transferCount":4,"firstTx":"2026-01-01T10:00:00Z","lastTx":"2026-01-03T05:00:00Z"}`)
	sameJSON(t, e.post(t, "/internal/activity", `{"addresses":[{"chainType":"evm","address":"0x9999999999999999999999999999999999999999"}]}`), 200,
		`{"volumeUsd":0,"transferCount":0}`)
	too := `{"addresses":[` + strings.TrimSuffix(strings.Repeat(`{"chainType":"evm","address":"`+tw.U1+`"},`, 1001), ",") + `]}`
	for body, want := range map[string]string{
		too: "addresses: at most 1000",
		`{"addresses":[{"chainType":"evmx","address":"` + tw.U1 + `"}]}`: "addresses[0].chainType",
		`{"addresses":[{"chainType":"evm","address":"0x12"}]}`:           "addresses[0].address",
		`{"addresses":"x"}`: "addresses",
	} {
		r := e.post(t, "/internal/activity", body)
		if r.status != 400 || !strings.Contains(string(r.body), want) {
			t.Errorf("%.60s: %d %s, want 400 with %q", body, r.status, r.body, want)
		}
	}
}
