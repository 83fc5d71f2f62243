package http

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// The holders world: besides Binance's 5 ETH (a1, a2), Coinbase holds 4.5 (a6), Kraken 4 (a4),
// okx-sim 1 (a5), Huobi nothing (a9, no balance); a7 (3.8, and 1 at yesterday's close; 250 USDC
// since yesterday), a8 (0.2) and a3 (0.5) are nobody's.
const (
	a4 = "0x4444444444444444444444444444444444444444"
	a5 = "0x5555555555555555555555555555555555555555"
	a6 = "0x6666666666666666666666666666666666666666"
	a7 = "0x7777777777777777777777777777777777777777"
	a8 = "0x8888888888888888888888888888888888888888"
	a9 = "0x9999999999999999999999999999999999999999"
)

// callerA's additions: to okx-sim a7 and a3 (they count), a5 (okx-sim's own: not twice) and a
// Solana address (another chain type); to huobi a8; to a slug attributions do not know, a4.
var callerA = map[string]map[string][]string{
	"okx-sim": {"evm": {a7, a3, a5}, "solana": {solSub}},
	"huobi":   {"evm": {a8}},
	"nobody":  {"evm": {a4}},
}

func holdersWorld(t *testing.T) *env {
	t.Helper()
	ev := newEnv(t)
	ctx := context.Background()
	ent := func(id, name string) *store.Entity {
		return &store.Entity{ID: id, Name: name, Type: "cex", Service: "exchange"}
	}
	if _, err := ev.st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: a4, Entity: ent("kraken", "Kraken"), Version: 1},
		{ChainType: "evm", Address: a5, Entity: ent("okx-sim", "OKX"), Version: 1},
		{ChainType: "evm", Address: a6, Entity: ent("coinbase", "Coinbase"), Version: 1},
		{ChainType: "evm", Address: a9, Entity: ent("huobi", "Huobi"), Version: 1},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.st.WriteObservations(ctx, []store.Observation{
		ob("ethereum", a4, "", 400, at(10, 2), "4000000000000000000"),
		ob("ethereum", a5, "", 401, at(10, 2), "1000000000000000000"),
		ob("ethereum", a6, "", 402, at(10, 2), "4500000000000000000"),
		ob("ethereum", a7, "", 350, at(9, 5), "1000000000000000000"),
		ob("ethereum", a7, usdc, 351, at(9, 5), "250000000"),
		ob("ethereum", a7, "", 403, at(10, 2), "3800000000000000000"),
		ob("ethereum", a8, "", 404, at(10, 2), "200000000000000000"),
	}); err != nil {
		t.Fatal(err)
	}
	return ev
}

// entityRows renders entityTopHolders rows of ETH (price 2200, supply 19).
func entityRows(rows ...string) string {
	var out []string
	for i := 0; i < len(rows); i += 2 {
		id, bal := rows[i], rows[i+1]
		name := map[string]string{"binance": "Binance", "coinbase": "Coinbase", "kraken": "Kraken", "okx-sim": "OKX", "huobi": "Huobi"}[id]
		var b float64
		fmt.Sscan(bal, &b)
		out = append(out, fmt.Sprintf(`{"entity":{"id":%q,"name":%q,"note":"","type":"cex","service":true},"balance":%v,"usd":%v,"pctOfCap":%v}`,
			id, name, b, b*2200, ofSupply(bal)))
	}
	return `[` + strings.Join(out, ",") + `]`
}

// ofSupply is bal (decimal ETH) as an exact fraction of the supply of 19, as pctOfCap divides.
func ofSupply(bal string) float64 {
	r, ok := new(big.Rat).SetString(bal)
	if !ok {
		panic(bal)
	}
	f, _ := r.Quo(r, big.NewRat(19, 1)).Float64()
	return f
}

// addressRow renders an addressTopHolders row of ETH.
func addressRow(info string, bal string) string {
	var b float64
	fmt.Sscan(bal, &b)
	return fmt.Sprintf(`{"address":%s,"balance":%v,"usd":%v,"pctOfCap":%v}`, info, b, b*2200, ofSupply(bal))
}

func entityInfo(addr, id, name string) string {
	return `{"address":"` + addr + `","chain":"ethereum","serviceEntity":{"id":"` + id + `","name":"` + name +
		`","note":"","type":"cex","service":true},"contract":false,"isUserAddress":false}`
}

func holdersJSON(addrs, entities string) string {
	return fill(`{"token":{"id":"ethereum","name":"Ethereum","symbol":"ETH","tvTicker":"ETHUSD"},"totalSupply":{"ethereum":19},
		"addressTopHolders":{"ethereum":` + addrs + `},"entityTopHolders":{"ethereum":` + entities + `}}`)
}

// Grouped holders count a caller's additions to operator entities as /balances/entity does: for
// caller A okx-sim holds 1 + 3.8 + 0.5 ETH and ranks first (lifted from below the page), Huobi
// 0.2; caller B sees the operators' totals. Both make one user-labels call.
func TestGroupedHoldersCountCallerAdditions(t *testing.T) {
	ev := holdersWorld(t)
	var callsA, callsB int
	evA := ev.as(t, fakeLabels{additions: callerA, calls: &callsA})
	evB := ev.as(t, fakeLabels{calls: &callsB})
	a6Row, a4Row := addressRow(entityInfo(a6, "coinbase", "Coinbase"), "4.5"), addressRow(entityInfo(a4, "kraken", "Kraken"), "4")

	evB.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=2", 200,
		holdersJSON(`[`+a6Row+`,`+a4Row+`]`, entityRows("binance", "5", "coinbase", "4.5")))
	evA.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=2", 200,
		holdersJSON(`[`+a6Row+`,`+a4Row+`]`, entityRows("okx-sim", "5.3", "binance", "5")))
	if callsA != 1 || callsB != 1 {
		t.Fatalf("user-labels calls: A %d, B %d; want one each", callsA, callsB)
	}
	// Pages further down.
	a7Row := addressRow(`{"address":"`+a7+`","chain":"ethereum","contract":false,"isUserAddress":false}`, "3.8")
	page2 := `[` + a7Row + `,` + addressRow(infoA2, "3") + `]`
	evB.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=2&offset=2", 200,
		holdersJSON(page2, entityRows("kraken", "4", "okx-sim", "1")))
	evA.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=2&offset=2", 200,
		holdersJSON(page2, entityRows("coinbase", "4.5", "kraken", "4")))
	evA.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=1&offset=4", 200,
		holdersJSON(`[`+addressRow(infoA1, "2")+`]`, entityRows("huobi", "0.2")))
	evB.expect(t, "/token/holders/ethereum?groupByEntity=true&limit=1&offset=4", 200,
		holdersJSON(`[`+addressRow(infoA1, "2")+`]`, `[]`))
	// The same totals as /balances/entity for the same caller.
	code, body := evA.get(t, "/balances/entity/okx-sim")
	if bal := body.(map[string]any)["balances"].(map[string]any)["ethereum"].([]any)[0].(map[string]any)["balance"]; code != 200 || bal != 5.3 {
		t.Fatalf("/balances/entity/okx-sim for A: %d %v", code, bal)
	}
	// Without groupByEntity nothing changes for A.
	evA.expect(t, "/token/holders/ethereum?limit=1", 200, fill(`{"token":{"id":"ethereum","name":"Ethereum","symbol":"ETH","tvTicker":"ETHUSD"},
		"totalSupply":{"ethereum":19},"addressTopHolders":{"ethereum":[`+a6Row+`]}}`))
}

// A user-labels outage answers grouped holders as it answers every route asking user-labels
// for the caller: the same 503.
func TestGroupedHoldersUserLabelsDown(t *testing.T) {
	ev := holdersWorld(t)
	down := ev.as(t, fakeLabels{down: httpx.Unavailable("user-labels", errors.New("connection refused"))})
	code, want := down.get(t, "/balances/entity/okx-sim")
	if code != 503 {
		t.Fatalf("/balances/entity with user-labels down: %d %v", code, want)
	}
	w := fmt.Sprint(want)
	for _, path := range []string{"/token/holders/ethereum?groupByEntity=true", "/token/holders/ethereum"} {
		code, got := down.get(t, path)
		if code != 503 || fmt.Sprint(got) != w {
			t.Fatalf("%s with user-labels down: %d %v, want 503 %v", path, code, got, w)
		}
	}
}

// For a caller with additions to an operator entity, the token balance (by pricing id and by
// chain and contract) and the time series count them as /balances/entity and the portfolio do;
// another caller's answers are the operator's.
func TestTokenBalanceAndTimeSeriesCountCallerAdditions(t *testing.T) {
	ev := holdersWorld(t)
	evA, evB := ev.as(t, fakeLabels{additions: callerA}), ev.as(t, fakeLabels{})
	tok := func(id, name, symbol string, bal, price float64) string {
		return fmt.Sprintf(`{"pricingID":%q,"name":%q,"symbol":%q,"balance":%v,"price":%v,"usd":%v}`, id, name, symbol, bal, price, bal*price)
	}
	evA.expect(t, "/token/balance/ethereum?entityID=okx-sim", 200, tok("ethereum", "Ethereum", "ETH", 5.3, 2200))
	evB.expect(t, "/token/balance/ethereum?entityID=okx-sim", 200, tok("ethereum", "Ethereum", "ETH", 1, 2200))
	evA.expect(t, "/token/balance/ethereum/"+usdc+"?entityID=okx-sim", 200, tok("usd-coin", "USD Coin", "USDC", 250, 1))
	evB.expect(t, "/token/balance/ethereum/"+usdc+"?entityID=okx-sim", 200, tok("usd-coin", "USD Coin", "USDC", 0, 1))
	evA.expect(t, "/token/balance/ethereum?entityID=huobi", 200, tok("ethereum", "Ethereum", "ETH", 0.2, 2200))

	eth := func(bal, price float64) string {
		return fmt.Sprintf(`{"ethereum":{"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":%v,"price":%v,"usd":%v}}}`,
			bal, price, bal*price)
	}
	evA.expect(t, "/portfolio/timeSeries/entity/okx-sim?pricingId=ethereum", 200,
		`{"2026-03-09T00:00:00Z":`+eth(1, 2100)+`,"2026-03-10T00:00:00Z":`+eth(5.3, 2200)+`}`)
	evB.expect(t, "/portfolio/timeSeries/entity/okx-sim?pricingId=ethereum", 200, `{"2026-03-10T00:00:00Z":`+eth(1, 2200)+`}`)
	usdcDay := `{"ethereum":{"usd-coin":{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":250,"price":1,"usd":250}}}`
	evA.expect(t, "/portfolio/timeSeries/entity/okx-sim?pricingId=usd-coin", 200,
		`{"2026-03-09T00:00:00Z":`+usdcDay+`,"2026-03-10T00:00:00Z":`+usdcDay+`}`)
	evB.expect(t, "/portfolio/timeSeries/entity/okx-sim?pricingId=usd-coin", 200, `{}`)

	// The same figures as /balances/entity (today) and the portfolio (each day) for the caller.
	evA.expect(t, "/portfolio/entity/okx-sim?time=2026-03-09T12:00:00Z", 200, `{"ethereum":{
		"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":1,"price":2100,"usd":2100},
		"usd-coin":{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":250,"price":1,"usd":250}}}`)
	code, body := evA.get(t, "/balances/entity/okx-sim")
	got := map[string]float64{}
	for _, b := range body.(map[string]any)["balances"].(map[string]any)["ethereum"].([]any) {
		got[b.(map[string]any)["id"].(string)] = b.(map[string]any)["balance"].(float64)
	}
	if code != 200 || got["ethereum"] != 5.3 || got["usd-coin"] != 250 || len(got) != 2 {
		t.Fatalf("/balances/entity/okx-sim for A: %d %v", code, got)
	}
}
