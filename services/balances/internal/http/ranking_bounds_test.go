package http

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York for the clock of another zone, present on any machine

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// rankingRouter is the real router over ev's store (st when set) with the clock clock.
func rankingRouter(t *testing.T, ev *env, st *store.Store, clock func() time.Time) *env {
	t.Helper()
	if st == nil {
		st = ev.st
	}
	cs, err := chains.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := httpx.NewEngine(httpx.EngineOptions{Service: "balances"})
	Register(e, app.New(st, fakeLabels{}, cs, app.WithClock(clock)))
	return &env{h: e, st: st}
}

// prevBalanceUsd is /history/entity's point of the interval's first day D: with ETH repriced to
// 1,600 at Feb 24 18:00, after now − 14 days (Feb 24 12:00) and before D's close, binance's 10
// ETH of D are worth 16,000 in both answers (the price in force at now − 14 days was 1,500).
func TestEntityBalanceChangesPrevIsHistoryOfTheDay(t *testing.T) {
	ev := newRankingEnv(t)
	if err := ev.st.WritePrices(context.Background(), []store.PricePoint{
		{PricingID: "ethereum", Time: time.Date(2026, 2, 24, 18, 0, 0, 0, time.UTC), Price: 1600}}); err != nil {
		t.Fatal(err)
	}
	_, hist := ev.get(t, "/history/entity/binance?chains=ethereum")
	var histD any
	for _, p := range hist.(map[string]any)["ethereum"].([]any) {
		if pt := p.(map[string]any); pt["time"] == "2026-02-24T00:00:00Z" {
			histD = pt["usd"]
		}
	}
	if histD != 16000.0 {
		t.Fatalf("/history/entity/binance on 2026-02-24: %v, want 16000", histD)
	}
	ev.expect(t, rankPath+"orderBy=balanceUsd&orderDir=desc&interval=14d&limit=10&entityIds=binance&chains=ethereum", 200, `[
		{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":41000,"prevBalanceUsd":16000,"balanceUnit":0,"prevBalanceUnit":0,
		 "tokenBalances":[{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":40000,"prevBalanceUsd":16000,"balanceUnit":20,"prevBalanceUnit":10},
		  {"tokenId":"usd-coin","tokenSymbol":"USDC","balanceUsd":1000,"prevBalanceUsd":0,"balanceUnit":1000,"prevBalanceUnit":0}]}]`)
}

// The interval is days of 24 hours in UTC whatever the clock's zone: at 2026-03-10 23:30 UTC
// (19:30 in New York, after the DST change of Mar 8) 7 days back is Mar 3 23:30 UTC, so the
// previous balances are the end of Mar 3 (20 ETH), not of Mar 4 (25 ETH from a1's observation
// of Mar 4), which 7 New York calendar days back (Mar 3 19:30 EST = Mar 4 00:30 UTC) would take.
func TestEntityBalanceChangesIntervalIsUTC(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	ev := newRankingEnv(t)
	if _, err := ev.st.WriteObservations(context.Background(), []store.Observation{
		ob("ethereum", a1, "", 350, day(3, 4), "25000000000000000000")}); err != nil {
		t.Fatal(err)
	}
	late := time.Date(2026, 3, 10, 23, 30, 0, 0, time.UTC).In(ny)
	rankingRouter(t, ev, nil, func() time.Time { return late }).expect(t,
		rankPath+"orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10&entityIds=binance&pricingIds=ethereum", 200, `[
		{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":50000,"prevBalanceUsd":36000,"balanceUnit":25,"prevBalanceUnit":20,
		 "tokenBalances":[{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":50000,"prevBalanceUsd":36000,"balanceUnit":25,"prevBalanceUnit":20}]}]`)
}

// An entity lists at most app.MaxRankingTokens tokens, its largest by balanceUsd, and none
// worth $0 now and before (an unpriced token); its totals count every token. whale holds one
// unit each of tokens t01…t26 priced 1…26 and 10^9 of an unpriced spam token.
func TestEntityBalanceChangesTokenListIsBounded(t *testing.T) {
	ev := newRankingEnv(t)
	ctx := context.Background()
	const whale = "0x5555555555555555555555555555555555555555"
	var toks []store.MarketToken
	var prices []store.PricePoint
	obs := []store.Observation{ob("ethereum", whale, "0x00000000000000000000000000000000000005ba", 700, day(3, 1), "1000000000")}
	for i := 1; i <= 26; i++ {
		id, contract := fmt.Sprintf("t%02d", i), fmt.Sprintf("0x%040x", 0xc00+i)
		toks = append(toks, store.MarketToken{PricingID: id, Name: id, Symbol: strings.ToUpper(id),
			Deployments: []store.Deployment{{Chain: "ethereum", Token: contract, Decimals: 0}}})
		prices = append(prices, store.PricePoint{PricingID: id, Time: day(2, 1), Price: float64(i)})
		obs = append(obs, ob("ethereum", whale, contract, int64(700+i), day(3, 1), "1"))
	}
	if err := ev.st.ApplyTokens(ctx, toks, nil); err != nil {
		t.Fatal(err)
	}
	if err := ev.st.WritePrices(ctx, prices); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.st.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: whale,
		Entity: &store.Entity{ID: "whale", Name: "Whale", Type: "fund"}, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	var list []string
	for i := 26; i > 26-app.MaxRankingTokens; i-- {
		list = append(list, fmt.Sprintf(`{"tokenId":"t%02d","tokenSymbol":"T%02d","balanceUsd":%d,"prevBalanceUsd":%d,"balanceUnit":1,"prevBalanceUnit":1}`, i, i, i, i))
	}
	ev.expect(t, rankPath+"orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10&entityIds=whale", 200,
		`[{"entityId":"whale","entityName":"Whale","entityType":"fund","balanceUsd":351,"prevBalanceUsd":351,"balanceUnit":0,"prevBalanceUnit":0,
		"tokenBalances":[`+strings.Join(list, ",")+`]}]`)
}

// A ranking stopped by its statement timeout (here behind a lock on entity_current) is a 503
// naming the read and its limit.
func TestEntityBalanceChangesTimeoutIs503(t *testing.T) {
	ev := newRankingEnv(t)
	ctx := context.Background()
	tx, err := ev.st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE balances.entity_current IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	st := store.New(ev.st.Pool(), store.WithRankingTimeout(100*time.Millisecond))
	rankingRouter(t, ev, st, func() time.Time { return now }).expect(t, rankPath+"orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10", 503,
		`{"error":"the entity balance ranking took longer than its limit of 100ms; narrow it with filters or retry later"}`)
}
