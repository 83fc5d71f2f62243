package intelligence

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/heuristics"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"google.golang.org/protobuf/proto"
)

func addr(n int) string { return fmt.Sprintf("0x%040x", n) }

func msgs[M proto.Message](topic string, ms ...M) []eventbus.Message[M] {
	out := make([]eventbus.Message[M], len(ms))
	for i, m := range ms {
		out[i] = eventbus.Message[M]{Topic: topic, Partition: i % 2, Offset: int64(i), Msg: m}
	}
	return out
}

func usd(v float64) *float64 { return &v }

// TestHeuristicsAndChainData feeds a small world through the consumers' handlers: an exchange
// hot wallet (curated), customers paying into deposit addresses that sweep into it, an issuer
// funding the hot wallet and a busy wallet that pays it once; then a heuristics pass, and the
// enriched, prediction, summary, contract and token answers.
func TestHeuristicsAndChainData(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	hot, c1, c2, d1, d2, d3, treasury, busy, tok := addr(0x100), addr(0xc1), addr(0xc2), addr(0xd1), addr(0xd2), addr(0xd3), addr(0x77), addr(0xbb), addr(0x70)
	_, err := ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}],
		"addresses":[{"chainType":"evm","address":"`+hot+`","entity":"acme","label":"Hot Wallet 1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pgtest.Pool(t))
	h := events.Handlers{Store: st}
	tr := func(id, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	transfers := msgs(eventsv1.TopicTransfers,
		tr("a", c1, d1, 1000, 100), tr("b", c1, d3, 2000, 50), tr("c", c2, d2, 3000, 70),
		tr("d", d1, hot, 4000, 100), tr("e", d2, hot, 5000, 70), tr("f", d3, hot, 6000, 50),
		tr("g", hot, c1, 7000, 10), tr("h", treasury, hot, 8000, 1000),
		tr("i", busy, hot, 9000, 5), tr("j", busy, c2, 9100, 5), tr("k", busy, c1, 9200, 5), tr("l", c2, busy, 9300, 5),
		tr("m", c1, c1, 9400, 1))
	for range 2 { // a redelivered batch changes nothing
		if err := h.Transfers(ctx, transfers); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Transactions(ctx, msgs(eventsv1.TopicTransactions,
		&eventsv1.Transaction{Chain: "ethereum", Hash: "0xdeploy", From: c2, ContractCreated: tok, BlockTimeMs: 1_700_000_000_000, Success: true, BytecodeSize: 2048})); err != nil {
		t.Fatal(err)
	}
	if err := h.Tokens(ctx, msgs(eventsv1.TopicTokens, &eventsv1.Token{Chain: "ethereum", Address: tok, Name: "Acme Token", Symbol: "ACME", Decimals: 6})); err != nil {
		t.Fatal(err)
	}
	if err := h.MarketTokens(ctx, msgs(eventsv1.TopicMarketTokens,
		&eventsv1.MarketToken{PricingId: "acme-token", Name: "Acme Token", Symbol: "ACME", Deployments: []*eventsv1.MarketToken_Deployment{{Chain: "ethereum", Address: tok, Decimals: 6}, {Chain: "base", Address: addr(0x71), Decimals: 6}}},
		&eventsv1.MarketToken{PricingId: "ethereum", Name: "Ether", Symbol: "ETH", Deployments: []*eventsv1.MarketToken_Deployment{{Chain: "ethereum", Decimals: 18}}})); err != nil {
		t.Fatal(err)
	}
	day := int64(86_400_000)
	if err := h.Prices(ctx, msgs(eventsv1.TopicPrices,
		&eventsv1.Price{PricingId: "ethereum", TimeMs: 10 * day, Price: 1800}, &eventsv1.Price{PricingId: "ethereum", TimeMs: 11 * day, Price: 2000},
		&eventsv1.Price{PricingId: "acme-token", TimeMs: 11 * day, Price: 0.5})); err != nil {
		t.Fatal(err)
	}
	if err := h.Balances(ctx, msgs(eventsv1.TopicBalances,
		&eventsv1.BalanceObservation{Chain: "ethereum", Address: d1, BlockNumber: 5, Balance: "2000000000000000000", TokenDecimals: 18},
		&eventsv1.BalanceObservation{Chain: "ethereum", Address: d1, BlockNumber: 4, Balance: "9000000000000000000", TokenDecimals: 18}, // older: ignored
		&eventsv1.BalanceObservation{Chain: "ethereum", Address: d2, TokenAddress: tok, BlockNumber: 5, Balance: "300000000", TokenDecimals: 6},
		&eventsv1.BalanceObservation{Chain: "ethereum", Address: hot, BlockNumber: 5, Balance: "1", TokenDecimals: 18})); err != nil { // attributed: not kept
		t.Fatal(err)
	}

	sum, err := heuristics.Run(ctx, st, heuristics.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range sum.Deposits {
		got = append(got, d.Address+"→"+d.Exchange)
	}
	want := []string{d1 + "→acme", d2 + "→acme", d3 + "→acme"}
	if fmt.Sprint(got) != fmt.Sprint(want) || sum.Clusters != 2 || sum.Clustered != 5 {
		t.Fatalf("heuristics: deposits %v, %d clusters of %d addresses; want %v in 2 clusters of 5", got, sum.Clusters, sum.Clustered, want)
	}
	clusters := heuristics.Clusters(sum.Deposits, mustSenders(t, st, d1, d2, d3))
	cl1, cl2 := clusters["evm:"+c1], clusters["evm:"+c2]
	if cl1 == "" || cl1 != clusters["evm:"+d1] || cl1 != clusters["evm:"+d3] || cl2 == "" || cl2 != clusters["evm:"+d2] || cl1 == cl2 {
		t.Fatalf("clusters: %v", clusters)
	}

	api := newTestAPI(t, nil, nil)
	acme := `{"id":"acme","name":"Acme","note":"","type":"cex","service":null}`
	checks := []struct{ path, want string }{
		{"/intelligence/address_enriched/" + d1, `{"address":"` + d1 + `","chain":"ethereum","predictedEntity":` + acme + `,"depositServiceID":"acme",
			"contract":false,"isUserAddress":false,"populatedTags":[],"clusterIds":["` + cl1 + `"]}`},
		{"/intelligence/address_enriched/" + d1 + "?includeEntityPredictions=false&includeTags=false", `{"address":"` + d1 + `","chain":"ethereum","depositServiceID":"acme",
			"contract":false,"isUserAddress":false,"clusterIds":["` + cl1 + `"]}`},
		{"/intelligence/address_enriched/" + c2, `{"address":"` + c2 + `","chain":"ethereum","contract":false,"isUserAddress":false,"populatedTags":[],"clusterIds":["` + cl2 + `"]}`},
		{"/intelligence/entity_predictions/acme", `[{"address":"` + d1 + `","entityID":"acme","usdBalance":4000},{"address":"` + d2 + `","entityID":"acme","usdBalance":150},
			{"address":"` + d3 + `","entityID":"acme","usdBalance":0}]`},
		// The hot wallet's activity: sweeps in (220), a withdrawal (10), the issuer (1000) and the busy wallet (5).
		{"/intelligence/entity/acme/summary", `{"entityId":"acme","numAddresses":1,"balanceUsd":0,"volumeUsd":1235,"firstTx":"1970-01-01T00:00:04Z","lastTx":"1970-01-01T00:00:09Z"}`},
		{"/intelligence/contract/ethereum/" + tok, `{"address":"` + tok + `","chain":"ethereum","deployer":{"address":"` + c2 + `","chain":"ethereum","contract":false,"isUserAddress":false},
			"deployTxHash":"0xdeploy","transactionHash":"0xdeploy","blockTimestamp":"2023-11-14T22:13:20Z","bytecodeSize":2048,
			"bytecode":"","functionSighashes":null,"isProxy":false,"proxyAddress":null,"internalDeployer":{"address":"` + c2 + `","chain":"ethereum","contract":false,"isUserAddress":false},"token":{"id":"acme-token","name":"Acme Token","symbol":"ACME","decimals":6}}`},
		{"/intelligence/address/" + tok, `{"address":"` + tok + `","chain":"ethereum","contract":true,"isUserAddress":false}`},
		{"/intelligence/token/acme-token", `{"identifier":{"pricingID":"acme-token"},"name":"Acme Token","symbol":"ACME","price":0.5,"price24hAgo":0.5,
			"deployments":[{"chain":"base","address":"` + addr(0x71) + `","decimals":6},{"chain":"ethereum","address":"` + tok + `","decimals":6}]}`},
		{"/intelligence/token/ethereum/" + tok, `{"identifier":{"pricingID":"acme-token","chain":"ethereum","address":"` + tok + `"},"name":"Acme Token","symbol":"ACME","price":0.5,"price24hAgo":0.5,
			"deployments":[{"chain":"base","address":"` + addr(0x71) + `","decimals":6},{"chain":"ethereum","address":"` + tok + `","decimals":6}]}`},
		{"/intelligence/token/ethereum", `{"identifier":{"pricingID":"ethereum"},"name":"Ether","symbol":"ETH","price":2000,"price24hAgo":1800,"deployments":[{"chain":"ethereum","address":"","decimals":18}]}`},
	}
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	for _, c := range checks {
		code, body := api.do(t, "GET", c.path, "", caller)
		if code != 200 {
			t.Errorf("%s: %d %s", c.path, code, body)
			continue
		}
		assertJSON(t, c.path, body, c.want)
	}
	// Without a caller, an operator entity's summary needs a key.
	if code, body := api.do(t, "GET", "/intelligence/entity/acme/summary", "", nil); code != 401 || body != `{"error":"error validating API key"}` {
		t.Errorf("summary without a caller: %d %s", code, body)
	}
	code, body := api.do(t, "POST", "/intelligence/address/batch", `{"addresses":["`+d2+`","`+hot+`"]}`, nil)
	if code != 200 {
		t.Fatal(code, body)
	}
	assertJSON(t, "batch", body, `{"addresses":{
		"`+d2+`":{"address":"`+d2+`","chain":"ethereum","predictedEntity":`+acme+`,"depositServiceID":"acme","contract":false,"isUserAddress":false},
		"`+hot+`":{"address":"`+hot+`","chain":"ethereum","serviceEntity":`+acme+`,"serviceLabel":{"name":"Hot Wallet 1","address":"`+hot+`","chainType":"evm"},"contract":false,"isUserAddress":false}}}`)

	// Relabelling the hot wallet as a non-exchange undoes the conclusions at the next pass.
	if _, err := ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"fund"}]}`)); err != nil {
		t.Fatal(err)
	}
	sum, err = heuristics.Run(ctx, st, heuristics.DefaultParams())
	if err != nil || len(sum.Deposits) != 0 || sum.Changed != 5 {
		t.Fatalf("after relabel: %+v, %v", sum, err)
	}
	// And a pass with nothing new changes nothing.
	sum, err = heuristics.Run(ctx, st, heuristics.DefaultParams())
	if err != nil || sum.Changed != 0 {
		t.Fatalf("idle pass: %+v, %v", sum, err)
	}
}

func mustSenders(t *testing.T, st *store.Store, deps ...string) []store.Sender {
	t.Helper()
	chs := make([]string, len(deps))
	for i := range deps {
		chs[i] = "ethereum"
	}
	s, err := st.SendersOf(context.Background(), chs, deps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
