package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/sharedtest"
)

const binanceEntity = `{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"website":"https://binance.com","twitter":"https://twitter.com/binance"}`

// TestGraphSenseSamplesAnswerExchangeWallets imports the real GraphSense samples and asks the
// real router about known exchange wallets and entities.
func TestGraphSenseSamplesAnswerExchangeWallets(t *testing.T) {
	resetDB(t)
	dir := sharedtest.Path(t, "data/labels/graphsense")
	ctx := context.Background()
	rep, err := ImportGraphSense(ctx, testConfig(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entities < 3800 || rep.AddressesChanged < 2000 {
		t.Fatalf("import: %d entities, %d addresses; want the 3,800+ actors and 2,000+ addresses of the samples", rep.Entities, rep.AddressesChanged)
	}
	if !containsPrefix(rep.Skipped, `exchange-wallets-binance: 25 tags on currency "BEP2"`) {
		t.Errorf("skipped list does not report the BEP2 tags: %v", rep.Skipped[:min(5, len(rep.Skipped))])
	}
	if !containsPrefix(rep.Skipped, "graphsense:defi-protocols-csh: evm 0x0000000000000000000000000000000000000000 is the zero address") {
		t.Error("skipped list does not report the zero address")
	}
	api := newTestAPI(t, nil, nil)

	cases := []struct{ path, want string }{
		{"/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60",
			`{"address":"0x28c6c06298d514db089934071355e5743bf21d60","chain":"ethereum","serviceEntity":` + binanceEntity + `,
			"serviceLabel":{"name":"binance reserve wallets ETH","address":"0x28c6c06298d514db089934071355e5743bf21d60","chainType":"evm"},
			"contract":false,"isUserAddress":false}`},
		// Upper-case input is normalised; chain given explicitly.
		{"/intelligence/address/0xA344C7ADA83113B3B56941F6E85BF2EB425949F3?chain=base",
			`{"address":"0xa344c7ada83113b3b56941f6e85bf2eb425949f3","chain":"base","serviceEntity":` + binanceEntity + `,
			"serviceLabel":{"name":"binance reserve wallets USDC","address":"0xa344c7ada83113b3b56941f6e85bf2eb425949f3","chainType":"evm"},
			"contract":false,"isUserAddress":false}`},
		// Bitcoin detected from the format.
		{"/intelligence/address/34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo",
			`{"address":"34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo","chain":"bitcoin","serviceEntity":` + binanceEntity + `,
			"serviceLabel":{"name":"binance reserve wallets BTC","address":"34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo","chainType":"bitcoin"},
			"contract":false,"isUserAddress":false}`},
		// TRON.
		{"/intelligence/address/TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi",
			`{"address":"TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi","chain":"tron","serviceEntity":` + binanceEntity + `,
			"serviceLabel":{"name":"binance reserve wallets USDC","address":"TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi","chainType":"tron"},
			"contract":false,"isUserAddress":false}`},
		// The zero address, which defi-protocols-csh tags as MakerDAO's faucet, is no one's
		// wallet: skipped, so mints and burns name no entity.
		{"/intelligence/address/0x0000000000000000000000000000000000000000",
			`{"address":"0x0000000000000000000000000000000000000000","chain":"ethereum","contract":false,"isUserAddress":false}`},
		// Nothing known: the bare AddressInfo.
		{"/intelligence/address/0x0000000000000000000000000000000000000001",
			`{"address":"0x0000000000000000000000000000000000000001","chain":"ethereum","contract":false,"isUserAddress":false}`},
		{"/intelligence/entity/binance", strings.TrimSuffix(binanceEntity, "}") +
			`,"populatedTags":[{"id":"exchange","label":"Exchange","rank":10,"tagParams":"","disablePage":false,"excludeEntities":false}]}`},
		{"/intelligence/entity/tornado",
			`{"id":"tornado","name":"Tornado Cash","note":"","type":"mixer","service":null,"website":"https://tornado.cash","twitter":"https://twitter.com/TornadoCash",
			"populatedTags":[{"id":"ofac-sanctioned","label":"OFAC sanctioned","rank":1,"tagParams":"","disablePage":false,"excludeEntities":false},
				{"id":"mixer","label":"Mixer","rank":5,"tagParams":"","disablePage":false,"excludeEntities":false}]}`},
		{"/intelligence/address_enriched/0x8589427373D6D84E98730D7795D8f6f8731FDA16",
			`{"address":"0x8589427373d6d84e98730d7795d8f6f8731fda16","chain":"ethereum",
			"serviceEntity":{"id":"tornado","name":"Tornado Cash","note":"","type":"mixer","service":null,"website":"https://tornado.cash","twitter":"https://twitter.com/TornadoCash"},
			"serviceLabel":{"name":"tornado.cash","address":"0x8589427373d6d84e98730d7795d8f6f8731fda16","chainType":"evm"},
			"contract":false,"isUserAddress":false,
			"populatedTags":[{"id":"ofac-sanctioned","label":"OFAC sanctioned","rank":1,"tagParams":"","disablePage":false,"excludeEntities":false},
				{"id":"mixer","label":"Mixer","rank":5,"tagParams":"","disablePage":false,"excludeEntities":false}],"clusterIds":[]}`},
		{"/intelligence/address_with_extra_enrichment/0x8589427373D6D84E98730D7795D8f6f8731FDA16?includeTags=false&includeClusters=false",
			`{"address":"0x8589427373d6d84e98730d7795d8f6f8731fda16","chain":"ethereum",
			"serviceEntity":{"id":"tornado","name":"Tornado Cash","note":"","type":"mixer","service":null,"website":"https://tornado.cash","twitter":"https://twitter.com/TornadoCash"},
			"serviceLabel":{"name":"tornado.cash","address":"0x8589427373d6d84e98730d7795d8f6f8731fda16","chainType":"evm"},
			"contract":false,"isUserAddress":false}`},
		{"/tag/exchange/summary", `{"tagId":"exchange","numAddresses":177,"numEntities":12,"numUniqueTagParams":1}`},
		{"/tag/ofac-sanctioned/params?limit=5",
			`[{"id":"ofac-sanctioned","label":"OFAC sanctioned","rank":1,"tagParams":"","disablePage":false,"excludeEntities":false}]`},
	}
	for _, c := range cases {
		code, body := api.do(t, "GET", c.path, "", nil)
		if code != 200 {
			t.Errorf("%s: %d %s", c.path, code, body)
			continue
		}
		assertJSON(t, c.path, body, c.want)
	}

	// /all answers every EVM chain for an EVM address.
	code, body := api.do(t, "GET", "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60/all", "", nil)
	if code != 200 {
		t.Fatalf("/all: %d %s", code, body)
	}
	want := "{"
	for i, ch := range []string{"ethereum", "polygon", "bsc", "optimism", "avalanche", "arbitrum_one", "base"} {
		if i > 0 {
			want += ","
		}
		want += `"` + ch + `":{"address":"0x28c6c06298d514db089934071355e5743bf21d60","chain":"` + ch + `","serviceEntity":` + binanceEntity +
			`,"serviceLabel":{"name":"binance reserve wallets ETH","address":"0x28c6c06298d514db089934071355e5743bf21d60","chainType":"evm"},"contract":false,"isUserAddress":false}`
	}
	assertJSON(t, "/all", body, want+"}")

	// Re-importing changes nothing.
	again, err := ImportGraphSense(ctx, testConfig(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Entities != 0 || again.AddressesChanged != 0 {
		t.Errorf("re-import changed %d entities and %d addresses; want none", again.Entities, again.AddressesChanged)
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestAddressErrors checks the 4xx answers of the address endpoints.
func TestAddressErrors(t *testing.T) {
	resetDB(t)
	api := newTestAPI(t, nil, nil)
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/intelligence/address/not-an-address", "", 404, `{"error":"address \"not-an-address\" has the format of no chain configured on this deployment"}`},
		{"GET", "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60?chain=bitcoin", "", 404,
			`{"error":"invalid bitcoin address \"0x28c6c06298d514db089934071355e5743bf21d60\": want a base58 P2PKH (1...) or P2SH (3...) address, or a bech32 segwit address (bc1...)"}`},
		{"GET", "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60?chain=dogechain", "", 400, `{"error":"chain: unknown chain \"dogechain\""}`},
		{"GET", "/intelligence/address_enriched/0x28c6c06298d514db089934071355e5743bf21d60?includeTags=maybe", "", 400,
			`{"error":"includeTags: must be true or false, got \"maybe\""}`},
		{"GET", "/intelligence/entity/no-such-entity", "", 404, `{"error":"unknown entity \"no-such-entity\""}`},
		{"GET", "/intelligence/entity/no-such-entity/summary", "", 401, `{"error":"error validating API key"}`},
		{"GET", "/intelligence/entity/8d4c2a4e-8d0a-4c36-9e8f-2b6f1c0e4a11/summary", "", 401, `{"error":"error validating API key"}`},
		{"GET", "/intelligence/entity_predictions/no-such-entity", "", 404, `{"error":"unknown entity \"no-such-entity\""}`},
		{"GET", "/tag/nope/summary", "", 404, `{"error":"unknown tag \"nope\""}`},
		{"GET", "/tag/nope/params?limit=0", "", 400, `{"error":"limit: must be between 1 and 1000, got 0"}`},
		{"GET", "/intelligence/token/nope", "", 404, `{"error":"unknown token \"nope\""}`},
		{"GET", "/intelligence/contract/ethereum/0x28c6c06298d514db089934071355e5743bf21d60", "", 404,
			`{"error":"no contract deployment known at 0x28c6c06298d514db089934071355e5743bf21d60 on ethereum"}`},
		{"POST", "/intelligence/address/batch", `{"addresses":[]}`, 400, `{"error":"addresses: give at least one address"}`},
		{"POST", "/intelligence/address/batch", `{"addresses":["0x28c6c06298d514db089934071355e5743bf21d60","nope"]}`, 400,
			`{"error":"addresses[1]: \"nope\" is not a valid address on any configured chain"}`},
		{"POST", "/intelligence/address/batch", `{"address":[]}`, 400, `{"error":"request body has an unknown field \"address\""}`},
	}
	for _, c := range cases {
		code, body := api.do(t, c.method, c.path, c.body, nil)
		if code != c.code {
			t.Errorf("%s %s: %d %s; want %d", c.method, c.path, code, body, c.code)
			continue
		}
		assertJSON(t, c.path, body, c.want)
	}
	// Over 1000 addresses.
	var sb strings.Builder
	sb.WriteString(`{"addresses":[`)
	for i := 0; i < 1001; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"0x28c6c06298d514db089934071355e5743bf21d60"`)
	}
	sb.WriteString("]}")
	code, body := api.do(t, "POST", "/intelligence/address/batch", sb.String(), nil)
	assertJSON(t, "batch 1001", body, `{"error":"addresses: at most 1000 addresses per call, got 1001"}`)
	if code != 400 {
		t.Errorf("batch of 1001: %d", code)
	}
}
