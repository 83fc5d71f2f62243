package http

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// The ranking's world (now is 2026-03-10 12:00 UTC): binance (cex; tags cex) holds a1, 10 ETH
// from Feb 1, 20 ETH from Mar 1, 1,000 USDC from Mar 5; kraken (cex; cex, hot-wallet) holds a2,
// 5 ETH from Feb 1, and the Solana address, 100 SOL from Feb 20 (SOL is named by the chain
// catalogue only); jump (fund; market-maker) holds a3, 50 ETH from Mar 8; tornado (mixer; no
// tags) holds a4, 2 ETH from Feb 1 to Mar 9. ETH is 1,000 from Feb 1, 1,500 from Feb 20, 1,800
// from Mar 2, 2,000 from Mar 9; USDC 1; SOL 100, 150 from Mar 5. So 7 days back (Mar 3 12:00,
// the snapshots of the end of Mar 3) ETH is 1,800 and SOL 100; 14 days back (Feb 24) ETH 1,500;
// 30 days back (Feb 8) ETH 1,000. (a4 is holders_additions_test.go's.)
func day(month time.Month, d int) time.Time { return time.Date(2026, month, d, 6, 0, 0, 0, time.UTC) }

func newRankingEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st := emptyStore(t)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(st.ApplyTokens(ctx, []store.MarketToken{
		{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH", Deployments: []store.Deployment{{Chain: "ethereum", Decimals: 18}}},
		{PricingID: "usd-coin", Name: "USD Coin", Symbol: "USDC", Deployments: []store.Deployment{{Chain: "ethereum", Token: usdc, Decimals: 6}}},
	}, nil))
	check(st.WritePrices(ctx, []store.PricePoint{
		{PricingID: "ethereum", Time: day(2, 1), Price: 1000}, {PricingID: "ethereum", Time: day(2, 20), Price: 1500},
		{PricingID: "ethereum", Time: day(3, 2), Price: 1800}, {PricingID: "ethereum", Time: day(3, 9), Price: 2000},
		{PricingID: "usd-coin", Time: day(2, 1), Price: 1},
		{PricingID: "solana", Time: day(2, 1), Price: 100}, {PricingID: "solana", Time: day(3, 5), Price: 150},
	}))
	ent := func(id, name, typ string, tags ...string) *store.Entity {
		e := &store.Entity{ID: id, Name: name, Type: typ}
		for i, tg := range tags {
			e.Tags = append(e.Tags, store.Tag{ID: tg, Label: tg, Rank: int32(i + 1)})
		}
		return e
	}
	binance, kraken := ent("binance", "Binance", "cex", "cex"), ent("kraken", "Kraken", "cex", "cex", "hot-wallet")
	_, err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: a1, Entity: binance, Version: 1},
		{ChainType: "evm", Address: a2, Entity: kraken, Version: 1},
		{ChainType: "solana", Address: solOwn, Entity: kraken, Version: 1},
		{ChainType: "evm", Address: a3, Entity: ent("jump", "Jump", "fund", "market-maker"), Version: 1},
		{ChainType: "evm", Address: a4, Entity: ent("tornado", "Tornado", "mixer"), Version: 1},
	})
	check(err)
	_, err = st.WriteObservations(ctx, []store.Observation{
		ob("ethereum", a1, "", 100, day(2, 1), "10000000000000000000"),
		ob("ethereum", a2, "", 110, day(2, 1), "5000000000000000000"),
		ob("ethereum", a4, "", 120, day(2, 1), "2000000000000000000"),
		ob("solana", solOwn, "", 500, day(2, 20), "100000000000"),
		ob("ethereum", a1, "", 300, day(3, 1), "20000000000000000000"),
		ob("ethereum", a1, usdc, 400, day(3, 5), "1000000000"),
		ob("ethereum", a3, "", 600, day(3, 8), "50000000000000000000"),
		ob("ethereum", a4, "", 650, day(3, 9), "0"),
	})
	check(err)
	cs, err := chains.NewSet(nil)
	check(err)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "balances"})
	Register(e, app.New(st, fakeLabels{}, cs, app.WithClock(func() time.Time { return now })))
	return &env{h: e, st: st}
}

// rankingRows are the entities' answers over 7 days without a pricingIds filter (no units).
var rankingRows = map[string]string{
	"binance": `{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":41000,"prevBalanceUsd":36000,
		"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":40000,"prevBalanceUsd":36000,"balanceUnit":20,"prevBalanceUnit":20},
		{"tokenId":"usd-coin","tokenSymbol":"USDC","balanceUsd":1000,"prevBalanceUsd":0,"balanceUnit":1000,"prevBalanceUnit":0}]}`,
	"kraken": `{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":25000,"prevBalanceUsd":19000,
		"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"solana","tokenSymbol":"SOL","balanceUsd":15000,"prevBalanceUsd":10000,"balanceUnit":100,"prevBalanceUnit":100},
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":10000,"prevBalanceUsd":9000,"balanceUnit":5,"prevBalanceUnit":5}]}`,
	"jump": `{"entityId":"jump","entityName":"Jump","entityType":"fund","balanceUsd":100000,"prevBalanceUsd":0,
		"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":100000,"prevBalanceUsd":0,"balanceUnit":50,"prevBalanceUnit":0}]}`,
	"tornado": `{"entityId":"tornado","entityName":"Tornado","entityType":"mixer","balanceUsd":0,"prevBalanceUsd":3600,
		"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":0,"prevBalanceUsd":3600,"balanceUnit":0,"prevBalanceUnit":2}]}`,
}

// ethRows are the entities' answers over 7 days with pricingIds=ethereum (units of ETH).
var ethRows = map[string]string{
	"binance": `{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":40000,"prevBalanceUsd":36000,
		"balanceUnit":20,"prevBalanceUnit":20,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":40000,"prevBalanceUsd":36000,"balanceUnit":20,"prevBalanceUnit":20}]}`,
	"kraken": `{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":10000,"prevBalanceUsd":9000,
		"balanceUnit":5,"prevBalanceUnit":5,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":10000,"prevBalanceUsd":9000,"balanceUnit":5,"prevBalanceUnit":5}]}`,
	"jump": `{"entityId":"jump","entityName":"Jump","entityType":"fund","balanceUsd":100000,"prevBalanceUsd":0,
		"balanceUnit":50,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":100000,"prevBalanceUsd":0,"balanceUnit":50,"prevBalanceUnit":0}]}`,
	"tornado": `{"entityId":"tornado","entityName":"Tornado","entityType":"mixer","balanceUsd":0,"prevBalanceUsd":3600,
		"balanceUnit":0,"prevBalanceUnit":2,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":0,"prevBalanceUsd":3600,"balanceUnit":0,"prevBalanceUnit":2}]}`,
}

func rows(from map[string]string, ids ...string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = from[id]
	}
	return "[" + strings.Join(out, ",") + "]"
}

const rankPath = "/intelligence/entity_balance_changes?"

// Every order in both directions: a percentage change from a previous balance of 0 (jump) has
// no value and comes last either way; ties go by entity id.
func TestEntityBalanceChangesOrders(t *testing.T) {
	ev := newRankingEnv(t)
	for _, c := range []struct {
		orderBy, dir string
		eth          bool
		ids          []string
	}{
		{"balanceUsd", "desc", false, []string{"jump", "binance", "kraken", "tornado"}},
		{"balanceUsd", "asc", false, []string{"tornado", "kraken", "binance", "jump"}},
		{"balanceUsdChange", "desc", false, []string{"jump", "kraken", "binance", "tornado"}},
		{"balanceUsdChange", "asc", false, []string{"tornado", "binance", "kraken", "jump"}},
		{"balanceUsdPctChange", "desc", false, []string{"kraken", "binance", "tornado", "jump"}},
		{"balanceUsdPctChange", "asc", false, []string{"tornado", "binance", "kraken", "jump"}},
		{"balanceUnit", "desc", true, []string{"jump", "binance", "kraken", "tornado"}},
		{"balanceUnit", "asc", true, []string{"tornado", "kraken", "binance", "jump"}},
		{"balanceUnitChange", "desc", true, []string{"jump", "binance", "kraken", "tornado"}},
		{"balanceUnitChange", "asc", true, []string{"tornado", "binance", "kraken", "jump"}},
		{"balanceUnitPctChange", "desc", true, []string{"binance", "kraken", "tornado", "jump"}},
		{"balanceUnitPctChange", "asc", true, []string{"tornado", "binance", "kraken", "jump"}},
	} {
		p := fmt.Sprintf("%sorderBy=%s&orderDir=%s&interval=7d&limit=10", rankPath, c.orderBy, c.dir)
		from := rankingRows
		if c.eth {
			p, from = p+"&pricingIds=ethereum", ethRows
		}
		ev.expect(t, p, 200, rows(from, c.ids...))
	}
}

// The intervals take the snapshots of the end of the UTC day 14 and 30 days back, at the prices
// in force then.
func TestEntityBalanceChangesIntervals(t *testing.T) {
	ev := newRankingEnv(t)
	ev.expect(t, rankPath+"orderBy=balanceUsdChange&orderDir=desc&interval=14d&limit=2&pricingIds=ethereum,solana", 200, `[
		{"entityId":"jump","entityName":"Jump","entityType":"fund","balanceUsd":100000,"prevBalanceUsd":0,"balanceUnit":0,"prevBalanceUnit":0,
		 "tokenBalances":[{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":100000,"prevBalanceUsd":0,"balanceUnit":50,"prevBalanceUnit":0}]},
		{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":40000,"prevBalanceUsd":15000,"balanceUnit":0,"prevBalanceUnit":0,
		 "tokenBalances":[{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":40000,"prevBalanceUsd":15000,"balanceUnit":20,"prevBalanceUnit":10}]}]`)
	ev.expect(t, rankPath+"orderBy=balanceUsd&orderDir=desc&interval=30d&limit=10&entityIds=kraken,tornado", 200, `[
		{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":25000,"prevBalanceUsd":5000,"balanceUnit":0,"prevBalanceUnit":0,
		 "tokenBalances":[{"tokenId":"solana","tokenSymbol":"SOL","balanceUsd":15000,"prevBalanceUsd":0,"balanceUnit":100,"prevBalanceUnit":0},
		  {"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":10000,"prevBalanceUsd":5000,"balanceUnit":5,"prevBalanceUnit":5}]},
		{"entityId":"tornado","entityName":"Tornado","entityType":"mixer","balanceUsd":0,"prevBalanceUsd":2000,"balanceUnit":0,"prevBalanceUnit":0,
		 "tokenBalances":[{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":0,"prevBalanceUsd":2000,"balanceUnit":0,"prevBalanceUnit":2}]}]`)
}

// Each filter selects exactly what it names; pages of one ranking do not overlap.
func TestEntityBalanceChangesFilters(t *testing.T) {
	ev := newRankingEnv(t)
	base := rankPath + "orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10&"
	ev.expect(t, base+"chains=solana", 200, `[{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":15000,
		"prevBalanceUsd":10000,"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"solana","tokenSymbol":"SOL","balanceUsd":15000,"prevBalanceUsd":10000,"balanceUnit":100,"prevBalanceUnit":100}]}]`)
	ev.expect(t, base+"pricingIds=solana", 200, `[{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":15000,
		"prevBalanceUsd":10000,"balanceUnit":100,"prevBalanceUnit":100,"tokenBalances":[
		{"tokenId":"solana","tokenSymbol":"SOL","balanceUsd":15000,"prevBalanceUsd":10000,"balanceUnit":100,"prevBalanceUnit":100}]}]`)
	ev.expect(t, base+"pricingIds=usd-coin", 200, `[{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":1000,
		"prevBalanceUsd":0,"balanceUnit":1000,"prevBalanceUnit":0,"tokenBalances":[
		{"tokenId":"usd-coin","tokenSymbol":"USDC","balanceUsd":1000,"prevBalanceUsd":0,"balanceUnit":1000,"prevBalanceUnit":0}]}]`)
	ev.expect(t, base+"pricingIds=unknown-token", 200, `[]`)
	for q, ids := range map[string][]string{
		"entityTypes=cex":                             {"binance", "kraken"},
		"entityTypes=mixer,fund":                      {"jump", "tornado"},
		"entityIds=tornado&entityIds=jump,nobody":     {"jump", "tornado"},
		"entityTags=hot-wallet":                       {"kraken"},
		"entityTags=cex,market-maker":                 {"jump", "binance", "kraken"},
		"negatedEntityTags=cex":                       {"jump", "tornado"},
		"entityTags=cex&negatedEntityTags=hot-wallet": {"binance"},
		"balanceMin=25000&balanceMax=41000":           {"binance", "kraken"},
		"balanceMin=41001":                            {"jump"},
		"balanceMax=0":                                {"tornado"},
		"chains=ethereum&entityTypes=cex&offset=1":    {"kraken"},
		"offset=0&limit=2":                            {"jump", "binance"},
		"offset=2&limit=2":                            {"kraken", "tornado"},
		"offset=4&limit=2":                            {},
	} {
		want := rows(rankingRows, ids...)
		if strings.Contains(q, "chains=ethereum") {
			want = `[{"entityId":"kraken","entityName":"Kraken","entityType":"cex","balanceUsd":10000,"prevBalanceUsd":9000,
				"balanceUnit":0,"prevBalanceUnit":0,"tokenBalances":[
				{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":10000,"prevBalanceUsd":9000,"balanceUnit":5,"prevBalanceUnit":5}]}]`
		}
		ev.expect(t, strings.Replace(base, "limit=10&", "", 1)+withLimit(q), 200, want)
	}
}

// withLimit adds limit=10 to a query that does not set it.
func withLimit(q string) string {
	if strings.Contains(q, "limit=") {
		return q
	}
	return q + "&limit=10"
}

// A relabel moves the address's balances and history to its new entity; a reorg orphaning a
// block takes its balance out of the entity's figures, and making it canonical again restores
// them.
func TestEntityBalanceChangesFollowRelabelsAndReorgs(t *testing.T) {
	ev := newRankingEnv(t)
	ctx := context.Background()
	base := rankPath + "orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10&pricingIds=ethereum"
	binance := &store.Entity{ID: "binance", Name: "Binance", Type: "cex", Tags: []store.Tag{{ID: "cex", Label: "cex", Rank: 1}}}
	if _, err := ev.st.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: binance, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	ev.expect(t, base, 200, `[`+ethRows["jump"]+`,
		{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":50000,"prevBalanceUsd":45000,
		"balanceUnit":25,"prevBalanceUnit":25,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":50000,"prevBalanceUsd":45000,"balanceUnit":25,"prevBalanceUnit":25}]},`+
		ethRows["tornado"]+`]`)
	if _, err := ev.st.ApplyReorg(ctx, "ethereum", 600, []string{"0xh600"}, nil); err != nil {
		t.Fatal(err)
	}
	ev.expect(t, base, 200, `[
		{"entityId":"binance","entityName":"Binance","entityType":"cex","balanceUsd":50000,"prevBalanceUsd":45000,
		"balanceUnit":25,"prevBalanceUnit":25,"tokenBalances":[
		{"tokenId":"ethereum","tokenSymbol":"ETH","balanceUsd":50000,"prevBalanceUsd":45000,"balanceUnit":25,"prevBalanceUnit":25}]},`+
		ethRows["tornado"]+`]`)
	if _, err := ev.st.ApplyReorg(ctx, "ethereum", 600, nil, []string{"0xh600"}); err != nil {
		t.Fatal(err)
	}
	ev.expect(t, base+"&entityIds=jump", 200, rows(ethRows, "jump"))
}

// Bad input is a 400 naming the parameter.
func TestEntityBalanceChangesBadInput(t *testing.T) {
	ev := newRankingEnv(t)
	ok := "orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10"
	orders := "balanceUsd, balanceUsdChange, balanceUsdPctChange, balanceUnit, balanceUnitChange, balanceUnitPctChange"
	for q, msg := range map[string]string{
		"orderDir=desc&interval=7d&limit=10":                    "orderBy: required (one of " + orders + ")",
		"orderBy=usd&orderDir=desc&interval=7d&limit=10":        `orderBy: must be one of ` + orders + `, got \"usd\"`,
		"orderBy=balanceUsd&interval=7d&limit=10":               "orderDir: required (asc or desc)",
		"orderBy=balanceUsd&orderDir=up&interval=7d&limit=10":   `orderDir: must be one of asc, desc, got \"up\"`,
		"orderBy=balanceUsd&orderDir=desc&limit=10":             "interval: required (7d, 14d or 30d)",
		"orderBy=balanceUsd&orderDir=desc&interval=1d&limit=10": `interval: must be one of 7d, 14d, 30d, got \"1d\"`,
		"orderBy=balanceUsd&orderDir=desc&interval=7d":          "limit: required (1 to 100)",
		ok + "&limit=0": "limit: given 2 times; give it once",
		strings.Replace(ok, "limit=10", "limit=0", 1):   "limit: must be between 1 and 100, got 0",
		strings.Replace(ok, "limit=10", "limit=101", 1): "limit: must be between 1 and 100, got 101",
		ok + "&offset=-1":                                   "offset: must be between 0 and 10000, got -1",
		ok + "&balanceMin=1.5":                              `balanceMin: must be an integer, got \"1.5\"`,
		ok + "&balanceMax=x":                                `balanceMax: must be an integer, got \"x\"`,
		ok + "&balanceMin=10&balanceMax=5":                  "balanceMin: must be at most balanceMax (10 > 5)",
		ok + "&chains=nochain":                              `chains: unknown chain \"nochain\"`,
		strings.Replace(ok, "balanceUsd", "balanceUnit", 1): "orderBy: balanceUnit needs exactly one pricingIds value (units of different tokens do not add up)",
		strings.Replace(ok, "balanceUsd", "balanceUnitPctChange", 1) + "&pricingIds=ethereum,solana": "orderBy: balanceUnitPctChange needs exactly one pricingIds value (units of different tokens do not add up)",
	} {
		ev.expect(t, rankPath+q, 400, `{"error":"`+msg+`"}`)
	}
}
