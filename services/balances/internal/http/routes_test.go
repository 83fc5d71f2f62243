package http

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// fill replaces the world's names in a JSON template.
func fill(s string) string {
	return strings.NewReplacer("@A1", a1, "@A2", a2, "@A3", a3, "@USDC", usdc, "@BIGT", bigTok, "@SOLOWN", solOwn, "@SOLSUB", solSub).Replace(s)
}

const (
	binanceJSON = `{"id":"binance","name":"Binance","note":"","type":"cex","service":true}`
	// The entity object of /balances/entity also carries what attributions say of the entity
	// beyond its name: its description and populated tags.
	binanceFullJSON = `{"id":"binance","name":"Binance","note":"","type":"cex","service":true,
		"description":"Centralised exchange.","populatedTags":[{"id":"cex","label":"Exchange","rank":1,"tagParams":"",
		"disablePage":false,"excludeEntities":false},{"id":"hot-wallet","label":"Hot wallet","rank":2,"tagParams":"eth",
		"disablePage":true,"excludeEntities":false,"chain":"ethereum"}]}`
	infoA1 = `{"address":"@A1","chain":"ethereum","serviceEntity":` + binanceJSON + `,"serviceLabel":{"name":"Binance 14","address":"@A1","chainType":"evm"},"contract":false,"isUserAddress":false}`
	infoA2 = `{"address":"@A2","chain":"ethereum","serviceEntity":` + binanceJSON + `,"contract":false,"isUserAddress":false}`
	infoA3 = `{"address":"@A3","chain":"ethereum","userLabel":{"name":"cold wallet","address":"@A3","chainType":"evm"},"userEntity":{"id":"` + userEnt + `","name":"my desk","note":"","type":"user","service":null},"contract":false,"isUserAddress":true}`
)

func TestAddressBalances(t *testing.T) {
	ev := newEnv(t)
	ev.expect(t, fill("/balances/address/@A1"), 200, fill(fmt.Sprintf(`{
		"addresses":{"ethereum":{"@A1":`+infoA1+`}},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":2,"balanceExact":"2000000000000000000","price":2200,
			 "priceChange24h":100,"priceChange24hPercent":%v,"quoteTime":"2026-03-10T11:00:00Z","usd":4400},
			{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"balanceExact":"500000000","ethereumAddress":"@USDC",
			 "price":1,"priceChange24h":0,"priceChange24hPercent":0,"quoteTime":"2026-03-08T00:00:00Z","usd":500}]},
		"totalBalance":{"ethereum":4900},"totalBalance24hAgo":{"ethereum":4700}}`, 100.0/2100*100)))
	// Exact above 2^64 with 18 decimals; a token without a price has usd 0 and no quoteTime.
	ev.expect(t, fill("/balances/address/@A2?chains=ethereum"), 200, fill(fmt.Sprintf(`{
		"addresses":{"ethereum":{"@A2":`+infoA2+`}},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":3,"balanceExact":"3000000000000000000","price":2200,
			 "priceChange24h":100,"priceChange24hPercent":%v,"quoteTime":"2026-03-10T11:00:00Z","usd":6600},
			{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"balanceExact":"`+two70+`","ethereumAddress":"@BIGT",
			 "price":0,"priceChange24h":0,"priceChange24hPercent":0,"usd":0}]},
		"totalBalance":{"ethereum":6600},"totalBalance24hAgo":{"ethereum":6300}}`, 100.0/2100*100)))
	// Chains without the address's rows are absent.
	ev.expect(t, fill("/balances/address/@A1?chains=base"), 200, `{"addresses":{},"balances":{},"totalBalance":{},"totalBalance24hAgo":{}}`)
}

func entityBalancesJSON(ethBal, ethUSD, ethUSD24 float64) string {
	return fmt.Sprintf(`{"entities":{"binance":`+binanceFullJSON+`},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":%v,"price":2200,"priceChange24h":100,"priceChange24hPercent":%v,
			 "quoteTime":"2026-03-10T11:00:00Z","usd":%v},
			{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"ethereumAddress":"@USDC","price":1,"priceChange24h":0,
			 "priceChange24hPercent":0,"quoteTime":"2026-03-08T00:00:00Z","usd":500}%s]},
		"totalBalance":{"ethereum":%v},"totalBalance24hAgo":{"ethereum":%v}}`, ethBal, 100.0/2100*100, ethUSD,
		map[bool]string{true: `,{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"ethereumAddress":"@BIGT",
			 "price":0,"priceChange24h":0,"priceChange24hPercent":0,"usd":0}`, false: ""}[ethBal != 2], ethUSD+500, ethUSD24+500)
}

func TestEntityBalancesLiveCheapAndRelabel(t *testing.T) {
	ev := newEnv(t)
	want := fill(entityBalancesJSON(5, 11000, 10500))
	ev.expect(t, "/balances/entity/binance", 200, want)
	ev.expect(t, "/balances/entity/binance?cheap=true&chains=ethereum,solana", 200, want)
	// A relabel moves a2 (3 ETH and the big token) and its history to Kraken.
	if _, err := ev.st.ApplyAttributions(context.Background(), []store.Attribution{{ChainType: "evm", Address: a2,
		Entity: &store.Entity{ID: "kraken", Name: "Kraken", Type: "cex"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	after := fill(entityBalancesJSON(2, 4400, 4200))
	ev.expect(t, "/balances/entity/binance", 200, after)
	ev.expect(t, "/balances/entity/binance?cheap=1", 200, after)
	ev.expect(t, "/history/entity/kraken", 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":6000},
		{"time":"2026-03-09T00:00:00Z","usd":6300},{"time":"2026-03-10T00:00:00Z","usd":6600}]}`)
	ev.expect(t, "/history/entity/binance", 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":2000},
		{"time":"2026-03-09T00:00:00Z","usd":4700},{"time":"2026-03-10T00:00:00Z","usd":4900}]}`)
}

// TestEntityDetailsKeepNewestVersion checks that /balances/entity shows the entity details of the
// highest details version whatever order the events of the entity's addresses arrive in: older
// details (another address's event, in a later batch or later in the same batch) change nothing,
// and unversioned ones (publishers predating Entity.version) replace only unversioned ones.
func TestEntityDetailsKeepNewestVersion(t *testing.T) {
	ev := newEnv(t)
	ctx := context.Background()
	apply := func(as ...store.Attribution) {
		t.Helper()
		if _, err := ev.st.ApplyAttributions(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	binance := func(desc string, version int64, tags ...store.Tag) *store.Entity {
		return &store.Entity{ID: "binance", Name: "Binance", Type: "cex", Service: "exchange", Description: desc, Tags: tags, Version: version}
	}
	body := func(desc, tags string) string {
		return strings.Replace(fill(entityBalancesJSON(5, 11000, 10500)), binanceFullJSON, `{"id":"binance","name":"Binance","note":"","type":"cex",
			"service":true,"description":"`+desc+`","populatedTags":`+tags+`}`, 1)
	}
	cex := store.Tag{ID: "cex", Label: "Exchange", Rank: 1}
	cexJSON := `{"id":"cex","label":"Exchange","rank":1,"tagParams":"","disablePage":false,"excludeEntities":false}`
	// Unversioned details replace unversioned ones, as before versions.
	apply(store.Attribution{ChainType: "evm", Address: a2, Entity: binance("Unversioned.", 0), Version: 2})
	ev.expect(t, "/balances/entity/binance", 200, body("Unversioned.", `[]`))
	apply(store.Attribution{ChainType: "evm", Address: a1, Entity: binance("Version 7.", 7, cex), Label: "Binance 14", Version: 2})
	want := body("Version 7.", `[`+cexJSON+`]`)
	ev.expect(t, "/balances/entity/binance", 200, want)
	// Another address's event with older details, then unversioned ones: nothing changes.
	apply(store.Attribution{ChainType: "evm", Address: a2, Entity: binance("Version 5.", 5), Version: 3})
	ev.expect(t, "/balances/entity/binance", 200, want)
	apply(store.Attribution{ChainType: "evm", Address: a2, Entity: binance("Unversioned.", 0), Version: 4})
	ev.expect(t, "/balances/entity/binance", 200, want)
	// In one batch the newest details win, wherever they are.
	apply(store.Attribution{ChainType: "evm", Address: a2, Entity: binance("Version 8.", 8, cex), Version: 5},
		store.Attribution{ChainType: "evm", Address: a1, Entity: binance("Version 9.", 9), Label: "Binance 14", Version: 3})
	ev.expect(t, "/balances/entity/binance", 200, body("Version 9.", `[]`))
}

func TestUserEntityBalances(t *testing.T) {
	ev := newEnv(t)
	ev.expect(t, "/balances/entity/"+userEnt+"?chains=ethereum", 200, fill(fmt.Sprintf(`{
		"entities":{"`+userEnt+`":{"id":"`+userEnt+`","name":"my desk","note":"","type":"user","service":null,
			"description":"","populatedTags":[]}},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":3.5,"price":2200,"priceChange24h":100,"priceChange24hPercent":%v,
			 "quoteTime":"2026-03-10T11:00:00Z","usd":7700},
			{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"ethereumAddress":"@BIGT",
			 "price":0,"priceChange24h":0,"priceChange24hPercent":0,"usd":0}]},
		"totalBalance":{"ethereum":7700},"totalBalance24hAgo":{"ethereum":6300}}`, 100.0/2100*100)))
}

func TestHistory(t *testing.T) {
	ev := newEnv(t)
	ev.expect(t, fill("/history/address/@A1"), 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":2000},
		{"time":"2026-03-09T00:00:00Z","usd":4700},{"time":"2026-03-10T00:00:00Z","usd":4900}]}`)
	ev.expect(t, "/history/entity/binance", 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":8000},
		{"time":"2026-03-09T00:00:00Z","usd":11000},{"time":"2026-03-10T00:00:00Z","usd":11500}]}`)
	ev.expect(t, "/history/entity/"+userEnt, 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":6000},
		{"time":"2026-03-09T00:00:00Z","usd":6300},{"time":"2026-03-10T00:00:00Z","usd":7700}]}`)
	ev.expect(t, fill("/history/address/@A1?chains=polygon"), 200, `{}`)
}

func TestPortfolio(t *testing.T) {
	ev := newEnv(t)
	ms := at(9, 15).UnixMilli()
	ev.expect(t, fmt.Sprintf("/portfolio/entity/binance?time=%d", ms), 200, `{"ethereum":{
		"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":5,"price":2100,"usd":10500},
		"usd-coin":{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"price":1,"usd":500},
		"big-token":{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"price":0,"usd":0}}}`)
	ev.expect(t, fill("/portfolio/address/@A1?time=2026-03-08T23:59:59Z"), 200, `{"ethereum":{
		"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":1,"price":2000,"usd":2000}}}`)
	// Without a time, today.
	ev.expect(t, "/portfolio/entity/binance?chains=solana", 200, `{}`)
	ev.expect(t, fill("/portfolio/address/@A1"), 200, `{"ethereum":{
		"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":2,"price":2200,"usd":4400},
		"usd-coin":{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"price":1,"usd":500}}}`)
	// A day before any data is empty, not an error.
	ev.expect(t, fill("/portfolio/address/@A1?time=2026-03-07T12:00:00Z"), 200, `{}`)
	ev.expect(t, "/portfolio/entity/"+userEnt+"?time=2026-03-10T00:00:00Z&chains=ethereum", 200, `{"ethereum":{
		"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":3.5,"price":2200,"usd":7700},
		"big-token":{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"price":0,"usd":0}}}`)
}

func TestTimeSeries(t *testing.T) {
	ev := newEnv(t)
	usdcDay := `{"ethereum":{"usd-coin":{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"price":1,"usd":500}}}`
	ev.expect(t, fill("/portfolio/timeSeries/address/@A1?pricingId=usd-coin"), 200,
		`{"2026-03-09T00:00:00Z":`+usdcDay+`,"2026-03-10T00:00:00Z":`+usdcDay+`}`)
	eth := func(bal, price, usd float64) string {
		return fmt.Sprintf(`{"ethereum":{"ethereum":{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":%v,"price":%v,"usd":%v}}}`, bal, price, usd)
	}
	ev.expect(t, "/portfolio/timeSeries/entity/"+userEnt+"?pricingId=ethereum", 200, `{"2026-03-08T00:00:00Z":`+eth(3, 2000, 6000)+
		`,"2026-03-09T00:00:00Z":`+eth(3, 2100, 6300)+`,"2026-03-10T00:00:00Z":`+eth(3.5, 2200, 7700)+`}`)
	ev.expect(t, "/portfolio/timeSeries/entity/binance?pricingId=ethereum", 200, `{"2026-03-08T00:00:00Z":`+eth(4, 2000, 8000)+
		`,"2026-03-09T00:00:00Z":`+eth(5, 2100, 10500)+`,"2026-03-10T00:00:00Z":`+eth(5, 2200, 11000)+`}`)
}

func TestHolders(t *testing.T) {
	ev := newEnv(t)
	token := `"token":{"id":"ethereum","name":"Ethereum","symbol":"ETH","tvTicker":"ETHUSD"},"totalSupply":{"ethereum":5.5}`
	addrs := fmt.Sprintf(`"addressTopHolders":{"ethereum":[
		{"address":`+infoA2+`,"balance":3,"usd":6600,"pctOfCap":%v},
		{"address":`+infoA1+`,"balance":2,"usd":4400,"pctOfCap":%v},
		{"address":`+infoA3+`,"balance":0.5,"usd":1100,"pctOfCap":%v}]}`, 3/5.5, 2/5.5, 0.5/5.5)
	// Without groupByEntity the entities are not asked for: entityTopHolders is there, null.
	ev.expect(t, "/token/holders/ethereum", 200, fill(`{`+token+`,`+addrs+`}`))
	ev.expect(t, "/token/holders/ethereum?groupByEntity=true", 200, fill(fmt.Sprintf(`{`+token+`,`+addrs+`,
		"entityTopHolders":{"ethereum":[{"entity":`+binanceJSON+`,"balance":5,"usd":11000,"pctOfCap":%v}]}}`, 5/5.5)))
	// By chain and contract, paged.
	ev.expect(t, fill("/token/holders/ethereum/@BIGT?limit=1&offset=0&groupByEntity=1"), 200, fill(`{
		"token":{"id":"big-token","name":"Big","symbol":"BIG"},"totalSupply":{"ethereum":1180.591620717411303424},
		"addressTopHolders":{"ethereum":[{"address":`+infoA2+`,"balance":1180.591620717411303424,"usd":0,"pctOfCap":1}]},
		"entityTopHolders":{"ethereum":[{"entity":`+binanceJSON+`,"balance":1180.591620717411303424,"usd":0,"pctOfCap":1}]}}`))
	ev.expect(t, "/token/holders/ethereum?offset=2&limit=5", 200, fill(fmt.Sprintf(`{`+token+`,"addressTopHolders":{"ethereum":[
		{"address":`+infoA3+`,"balance":0.5,"usd":1100,"pctOfCap":%v}]}}`, 0.5/5.5)))
}

func TestTokenBalanceAndSubaccounts(t *testing.T) {
	ev := newEnv(t)
	ev.expect(t, "/token/balance/ethereum?entityID=binance", 200,
		`{"pricingID":"ethereum","name":"Ethereum","symbol":"ETH","balance":5,"price":2200,"usd":11000}`)
	ev.expect(t, fill("/token/balance/ethereum/@USDC?address=@A1"), 200,
		`{"pricingID":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"price":1,"usd":500}`)
	ev.expect(t, "/token/balance/ethereum?entityID="+userEnt, 200,
		`{"pricingID":"ethereum","name":"Ethereum","symbol":"ETH","balance":3.5,"price":2200,"usd":7700}`)
	sub := fill(`[{"address":"@SOLSUB","ownerAddress":"@SOLOWN","id":"solana","name":"Solana","symbol":"SOL","balance":5,
		"balanceExact":"5000000000","price":100,"usd":500}]`)
	ev.expect(t, fill("/balances/solana/subaccounts/address/@SOLOWN?pricingID=solana"), 200, sub)
	ev.expect(t, "/balances/solana/subaccounts/entity/binance?pricingID=solana&limit=10", 200, sub)
	ev.expect(t, fill("/balances/solana/subaccounts/address/@SOLOWN?pricingID=usd-coin"), 200, `[]`)
}

func TestBadRequests(t *testing.T) {
	ev := newEnv(t)
	for path, want := range map[string]string{
		"/portfolio/address/@A1?time=yesterday":                                 `{"error":"time: time \"yesterday\" must be Unix milliseconds or RFC 3339"}`,
		"/portfolio/timeSeries/address/@A1":                                     `{"error":"pricingId: required"}`,
		"/token/holders/ethereum?limit=101":                                     `{"error":"limit: must be between 1 and 100, got 101"}`,
		"/token/holders/ethereum?offset=950":                                    `{"error":"offset: offset+limit must be at most 1000, got 1050"}`,
		"/token/holders/ethereum?groupByEntity=maybe":                           `{"error":"groupByEntity: must be true or false, got \"maybe\""}`,
		"/balances/address/@A1?chains=mars":                                     `{"error":"chains: unknown chain \"mars\""}`,
		"/balances/entity/binance?chains=ethereum,notachain":                    `{"error":"chains: unknown chain \"notachain\""}`,
		"/history/address/@A1?chains=notachain":                                 `{"error":"chains: unknown chain \"notachain\""}`,
		"/history/entity/binance?chains=notachain":                              `{"error":"chains: unknown chain \"notachain\""}`,
		"/portfolio/address/@A1?chains=notachain":                               `{"error":"chains: unknown chain \"notachain\""}`,
		"/portfolio/timeSeries/entity/binance?pricingId=ethereum&chains=mars":   `{"error":"chains: unknown chain \"mars\""}`,
		"/balances/entity/binance?cheap=perhaps":                                `{"error":"cheap: must be true or false, got \"perhaps\""}`,
		"/token/balance/ethereum":                                               `{"error":"entityID: give entityID or address"}`,
		"/token/balance/ethereum?entityID=binance&address=@A1":                  `{"error":"entityID: give entityID or address, not both"}`,
		"/token/holders/mars/0x00":                                              `{"error":"chain: unknown chain \"mars\""}`,
		"/balances/solana/subaccounts/address/@SOLOWN":                          `{"error":"pricingID: required"}`,
		"/balances/solana/subaccounts/address/@SOLOWN?pricingID=solana&limit=0": `{"error":"limit: must be between 1 and 10000, got 0"}`,
	} {
		ev.expect(t, fill(path), 400, fill(want))
	}
	for path, want := range map[string]string{
		"/balances/entity/nobody":                                   `{"error":"entity \"nobody\" not found"}`,
		"/history/entity/6ba7b810-9dad-11d1-80b4-00c04fd430c8":      `{"error":"entity \"6ba7b810-9dad-11d1-80b4-00c04fd430c8\" not found"}`,
		"/balances/address/nonsense":                                `{"error":"address \"nonsense\" is not a valid address of any supported chain"}`,
		"/token/holders/nope":                                       `{"error":"token \"nope\" not found"}`,
		"/token/balance/nope?address=@A1":                           `{"error":"token \"nope\" not found"}`,
		"/token/holders/ethereum/0x00":                              `{"error":"token address \"0x00\" is not a evm address"}`,
		"/token/balance/ethereum/0x00?address=@A1":                  `{"error":"token address \"0x00\" is not a evm address"}`,
		"/balances/solana/subaccounts/address/@A1?pricingID=solana": `{"error":"address \"@A1\" is not a solana address"}`,
		"/portfolio/timeSeries/address/@A1?pricingId=nope":          `{"error":"token \"nope\" not found"}`,
		"/portfolio/timeSeries/entity/binance?pricingId=nope":       `{"error":"token \"nope\" not found"}`,
		// API.md: an address whose format fits none of the requested chains is a 404.
		"/balances/address/@A1?chains=bitcoin":                                `{"error":"address: address \"@A1\" is not valid on the requested chains (bitcoin)"}`,
		"/history/address/@A1?chains=bitcoin,solana":                          `{"error":"address: address \"@A1\" is not valid on the requested chains (bitcoin, solana)"}`,
		"/portfolio/address/@A1?chains=bitcoin":                               `{"error":"address: address \"@A1\" is not valid on the requested chains (bitcoin)"}`,
		"/portfolio/timeSeries/address/@A1?pricingId=ethereum&chains=bitcoin": `{"error":"address: address \"@A1\" is not valid on the requested chains (bitcoin)"}`,
	} {
		ev.expect(t, fill(path), 404, fill(want))
	}
	_ = url.Values{}
}

// The caller's additions to an operator entity count in its balances and history, once each
// (a1 is the entity's already).
func TestEntityWithCallerAdditions(t *testing.T) {
	ev := newEnvWith(t, fakeLabels{additions: map[string]map[string][]string{"binance": {"evm": {a3, a1}}}})
	want := fill(fmt.Sprintf(`{"entities":{"binance":`+binanceFullJSON+`},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":5.5,"price":2200,"priceChange24h":100,"priceChange24hPercent":%v,
			 "quoteTime":"2026-03-10T11:00:00Z","usd":12100},
			{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"ethereumAddress":"@USDC","price":1,"priceChange24h":0,
			 "priceChange24hPercent":0,"quoteTime":"2026-03-08T00:00:00Z","usd":500},
			{"id":"big-token","name":"Big","symbol":"BIG","balance":1180.591620717411303424,"ethereumAddress":"@BIGT",
			 "price":0,"priceChange24h":0,"priceChange24hPercent":0,"usd":0}]},
		"totalBalance":{"ethereum":12600},"totalBalance24hAgo":{"ethereum":11000}}`, 100.0/2100*100))
	ev.expect(t, "/balances/entity/binance", 200, want)
	ev.expect(t, "/balances/entity/binance?cheap=true", 200, want)
	ev.expect(t, "/history/entity/binance", 200, `{"ethereum":[{"time":"2026-03-08T00:00:00Z","usd":8000},
		{"time":"2026-03-09T00:00:00Z","usd":11000},{"time":"2026-03-10T00:00:00Z","usd":12600}]}`)
}

// totalBalance24hAgo values the holdings of 24 h ago (yesterday's snapshots), not today's, at
// the prices in force then: a1 receives 2 ETH today, which count now and not 24 h ago, for the
// address and for its entity.
func TestTotalBalance24hAgoUsesPastHoldings(t *testing.T) {
	ev := newEnv(t)
	if _, err := ev.st.WriteObservations(context.Background(), []store.Observation{
		ob("ethereum", a1, "", 250, at(10, 5), "4000000000000000000"),
	}); err != nil {
		t.Fatal(err)
	}
	ev.expect(t, fill("/balances/address/@A1"), 200, fill(fmt.Sprintf(`{
		"addresses":{"ethereum":{"@A1":`+infoA1+`}},
		"balances":{"ethereum":[
			{"id":"ethereum","name":"Ethereum","symbol":"ETH","balance":4,"balanceExact":"4000000000000000000","price":2200,
			 "priceChange24h":100,"priceChange24hPercent":%v,"quoteTime":"2026-03-10T11:00:00Z","usd":8800},
			{"id":"usd-coin","name":"USD Coin","symbol":"USDC","balance":500,"balanceExact":"500000000","ethereumAddress":"@USDC",
			 "price":1,"priceChange24h":0,"priceChange24hPercent":0,"quoteTime":"2026-03-08T00:00:00Z","usd":500}]},
		"totalBalance":{"ethereum":9300},"totalBalance24hAgo":{"ethereum":4700}}`, 100.0/2100*100)))
	want := fill(entityBalancesJSON(7, 15400, 10500))
	ev.expect(t, "/balances/entity/binance", 200, want)
	ev.expect(t, "/balances/entity/binance?cheap=true", 200, want)
}

// An address emptied today keeps its chain in the answer, holding nothing, with what it held 24 h
// ago: its 24 h change is the whole of that, not nothing.
func TestEmptiedChainKeepsItsTotal24hAgo(t *testing.T) {
	ev := newEnv(t)
	if _, err := ev.st.WriteObservations(context.Background(), []store.Observation{
		ob("ethereum", a1, "", 250, at(10, 5), "0"),
		ob("ethereum", a1, usdc, 250, at(10, 5), "0"),
	}); err != nil {
		t.Fatal(err)
	}
	ev.expect(t, fill("/balances/address/@A1"), 200, fill(`{
		"addresses":{"ethereum":{"@A1":`+infoA1+`}},
		"balances":{"ethereum":[]},
		"totalBalance":{"ethereum":0},"totalBalance24hAgo":{"ethereum":4700}}`))
}
