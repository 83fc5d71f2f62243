package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// searchUserLabels is one caller's user-labels data: what the real service's internal search
// answers for it (services/user-labels tests that side against PostgreSQL).
type searchUserLabels struct{ calls *int }

func (f searchUserLabels) Lookup(_ context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error) {
	out := ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}
	for _, a := range addrs {
		if a.Address == searchUserAddr {
			out.Labels[a.Key()] = ulclient.Label{Name: "binance desk of mine", Note: "n"}
		}
	}
	return out, nil
}
func (f searchUserLabels) Entity(context.Context, string) (ulclient.UserEntity, error) {
	return ulclient.UserEntity{}, ulclient.ErrNotFound
}
func (f searchUserLabels) SharedEntity(context.Context, string) (ulclient.UserEntity, error) {
	return ulclient.UserEntity{}, ulclient.ErrNotFound
}
func (f searchUserLabels) Additions(context.Context, string) (map[string][]string, error) {
	return map[string][]string{}, nil
}
func (f searchUserLabels) Search(_ context.Context, q string, limit, offset int) (ulclient.SearchResult, error) {
	*f.calls++
	out := ulclient.SearchResult{Entities: []ulclient.UserEntity{}, Labels: []ulclient.UserLabel{}}
	if q == "binance" && offset == 0 && limit > 0 {
		out.Entities = append(out.Entities, ulclient.UserEntity{ID: "0b6f8a52-6f0e-4c1c-9d1e-2f1d8c7a9b01", Name: "Binance OTC desk",
			Type: "user", Shareable: true, LinkShareable: true, Addresses: map[string][]string{"evm": {searchUserAddr}}})
		out.Labels = append(out.Labels, ulclient.UserLabel{Name: "binance desk of mine", Note: "n", Address: searchUserAddr, ChainType: "evm"})
	}
	return out, nil
}

const searchUserAddr = "0x9000000000000000000000000000000000000009"

func searchWorld(t *testing.T) {
	t.Helper()
	resetDB(t)
	doc := `{"entities":[{"id":"binance","name":"Binance","type":"cex","twitter":"https://twitter.com/binance"},
			{"id":"binance-us","name":"Binance.US","type":"cex"},
			{"id":"not-binance-fund","name":"Fund Formerly Binance","type":"fund"},
			{"id":"kraken","name":"Kraken","type":"cex"}],
		"addresses":[
			{"chainType":"evm","address":"0xb1a0000000000000000000000000000000000001","entity":"binance","label":"Binance 14"},
			{"chainType":"evm","address":"0xb1a0000000000000000000000000000000000002","entity":"binance","label":"Hot Wallet"},
			{"chainType":"evm","address":"0x0000000000000000000000000000000000000b1a","entity":"binance-us","label":"binance"},
			{"chainType":"evm","address":"0xc0000000000000000000000000000000000000c1","entity":"kraken","label":"Kraken 1",
			 "tags":[{"id":"exchange-hot-wallet","params":""}]}],
		"tags":[{"id":"exchange-hot-wallet","label":"Exchange hot wallet","rank":10},{"id":"binance-deposit","label":"Binance deposit","rank":20}]}`
	if _, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	_, err := pgtest.Pool(t).Exec(context.Background(), `
		INSERT INTO intel.market_tokens VALUES ('binancecoin', 'BNB', 'BNB'), ('binance-usd', 'Binance USD', 'BUSD'), ('tether', 'Tether', 'USDT');
		INSERT INTO intel.token_deployments VALUES ('binance-usd', 'ethereum', '0x4fabb145d64652a948d72533023f6e7a623c7c53', 18);
		INSERT INTO intel.prices VALUES ('binancecoin', 1000, 590), ('binancecoin', 86401000, 600);
		INSERT INTO intel.tokens (chain, address, name, symbol, decimals) VALUES
			('ethereum', '0x4fabb145d64652a948d72533023f6e7a623c7c53', 'Binance USD', 'BUSD', 18),
			('ethereum', '0xbbbb000000000000000000000000000000000001', 'Binance Meme', 'BNBMEME', 9)`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestSearch: every category on a known world, ranked (equal, then prefix, then substring),
// with toggles, offsets and the filter objects; the caller's own entities and labels; bad
// parameters named. Both plans answer the same: the service's (entities from memory, the rest
// in one batch) and the benchmark's baseline (a statement per category).
func TestSearch(t *testing.T) {
	searchWorld(t)
	for _, perCategory := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory_and_batch", true: "per_category"}[perCategory], func(t *testing.T) {
			testSearch(t, perCategory)
		})
	}
}

func testSearch(t *testing.T, perCategory bool) {
	calls := 0
	api := newTestAPI(t, searchUserLabels{calls: &calls}, nil)
	api.app.SearchPerCategory = perCategory
	id := httpx.Identity{KeyID: "k-s", UserID: "u-s", Role: httpx.RoleIndividual, Tier: "api"}

	binance := `{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"twitter":"https://twitter.com/binance"}`
	binanceUS := `{"id":"binance-us","name":"Binance.US","note":"","type":"cex","service":null}`
	formerly := `{"id":"not-binance-fund","name":"Fund Formerly Binance","note":"","type":"fund","service":null}`
	addr := func(a, entity, label string) string {
		return `{"address":"` + a + `","chain":"ethereum","serviceEntity":` + entity + `,"serviceLabel":{"name":"` + label +
			`","address":"` + a + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	}
	userAddr := `{"address":"` + searchUserAddr + `","chain":"ethereum","userLabel":{"name":"binance desk of mine","address":"` +
		searchUserAddr + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	empty := `"ens":[],"opensea":[],"pools":[],"polymarketEvents":[],"polymarketWallets":[],"services":[]`
	want := `{"serviceEntities":[` + binance + `,` + binanceUS + `,` + formerly + `],
		"serviceAddresses":[` + addr("0x0000000000000000000000000000000000000b1a", binanceUS, "binance") + `,` +
		addr("0xb1a0000000000000000000000000000000000001", binance, "Binance 14") + `],
		"userEntities":[{"id":"0b6f8a52-6f0e-4c1c-9d1e-2f1d8c7a9b01","name":"Binance OTC desk","note":"","type":"user","service":null,
			"addresses":{"evm":["` + searchUserAddr + `"]},"linkShareable":true}],
		"userAddresses":[` + userAddr + `],
		"types":[],"twitter":[` + binance + `],
		"tokens":[
			{"identifier":{"pricingID":"binancecoin"},"name":"BNB","symbol":"BNB","price":600,"price24hAgo":590,"deployments":[]},
			{"identifier":{"pricingID":null,"chain":"ethereum","address":"0xbbbb000000000000000000000000000000000001"},"name":"Binance Meme",
			 "symbol":"BNBMEME","deployments":[{"chain":"ethereum","address":"0xbbbb000000000000000000000000000000000001","decimals":9}]},
			{"identifier":{"pricingID":"binance-usd"},"name":"Binance USD","symbol":"BUSD",
			 "deployments":[{"chain":"ethereum","address":"0x4fabb145d64652a948d72533023f6e7a623c7c53","decimals":18}]}],
		"tags":[{"value":"binance-deposit","formatted":"Binance deposit"}],` + empty + `}`
	code, body := api.do(t, "GET", "/intelligence/search?query=Binance", "", &id)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	assertJSON(t, "search Binance", body, want)
	if calls != 1 {
		t.Errorf("user-labels searched %d times, want once", calls)
	}

	// Without a key: no user categories and no call; toggles turn categories off; offsets page.
	calls = 0
	code, body = api.do(t, "GET", "/intelligence/search?query=binance&serviceEntities=1&serviceEntitiesOffset=1&serviceAddresses=0&tokens=0&twitter=0&tags=0", "", nil)
	assertJSON(t, "toggles", body, `{"serviceEntities":[`+binanceUS+`],"serviceAddresses":[],"userEntities":[],"userAddresses":[],
		"types":[],"twitter":[],"tokens":[],"tags":[],`+empty+`}`)
	if code != 200 || calls != 0 {
		t.Errorf("status %d, %d user-labels calls", code, calls)
	}
	// The filter objects, as JSON and as deep-object keys; a category's own parameter wins.
	for _, q := range []string{
		`filterLimits={"serviceEntities":1,"serviceAddresses":0,"tokens":0,"twitter":0,"tags":0}&filterOffsets={"serviceEntities":2}`,
		`filterLimits[serviceEntities]=1&filterLimits[serviceAddresses]=0&filterLimits[tokens]=0&filterLimits[twitter]=0&filterLimits[tags]=0&filterOffsets[serviceEntities]=2`,
		`filterLimits={"serviceEntities":5}&serviceEntities=1&serviceEntitiesOffset=2&serviceAddresses=0&tokens=0&twitter=0&tags=0`,
	} {
		_, body = api.do(t, "GET", "/intelligence/search?query=binance&"+strings.ReplaceAll(strings.ReplaceAll(q, "{", "%7B"), "}", "%7D"), "", nil)
		assertJSON(t, q, body, `{"serviceEntities":[`+formerly+`],"serviceAddresses":[],"userEntities":[],"userAddresses":[],
			"types":[],"twitter":[],"tokens":[],"tags":[],`+empty+`}`)
	}

	// An address prefix (any case), a ticker, an entity type, a tag id.
	_, body = api.do(t, "GET", "/intelligence/search?query=0xB1A&serviceEntities=0&tokens=0&twitter=0&tags=0", "", nil)
	assertJSON(t, "address prefix", body, `{"serviceEntities":[],"serviceAddresses":[`+
		addr("0xb1a0000000000000000000000000000000000001", binance, "Binance 14")+`,`+
		addr("0xb1a0000000000000000000000000000000000002", binance, "Hot Wallet")+`],"userEntities":[],"userAddresses":[],
		"types":[],"twitter":[],"tokens":[],"tags":[],`+empty+`}`)
	_, body = api.do(t, "GET", "/intelligence/search?query=bnb&serviceAddresses=0", "", nil)
	assertJSON(t, "ticker", body, `{"serviceEntities":[],"serviceAddresses":[],"userEntities":[],"userAddresses":[],"types":[],"twitter":[],
		"tokens":[{"identifier":{"pricingID":"binancecoin"},"name":"BNB","symbol":"BNB","price":600,"price24hAgo":590,"deployments":[]},
			{"identifier":{"pricingID":null,"chain":"ethereum","address":"0xbbbb000000000000000000000000000000000001"},"name":"Binance Meme",
			 "symbol":"BNBMEME","deployments":[{"chain":"ethereum","address":"0xbbbb000000000000000000000000000000000001","decimals":9}]}],
		"tags":[],`+empty+`}`)
	_, body = api.do(t, "GET", "/intelligence/search?query=CEX", "", nil)
	assertJSON(t, "type", body, `{"serviceEntities":[],"serviceAddresses":[],"userEntities":[],"userAddresses":[],"types":["cex"],"twitter":[],
		"tokens":[],"tags":[],`+empty+`}`)
	// LIKE wildcards are literal.
	_, body = api.do(t, "GET", "/intelligence/search?query=%25", "", nil)
	assertJSON(t, "wildcard", body, `{"serviceEntities":[],"serviceAddresses":[],"userEntities":[],"userAddresses":[],"types":[],"twitter":[],
		"tokens":[],"tags":[],`+empty+`}`)

	for q, msg := range map[string]string{
		"":                                       "query: must be 1 to 200 characters (got 0)",
		"query=" + strings.Repeat("a", 201):      "query: must be 1 to 200 characters (got 201)",
		"query=a&tokens=101":                     "tokens: must be between 0 and 100, got 101",
		"query=a&tokens=x":                       `tokens: must be an integer, got \"x\"`,
		"query=a&tagsOffset=-1":                  "tagsOffset: must be between 0 and 10000, got -1",
		"query=a&filterLimits=%5B1%5D":           `filterLimits: must be a JSON object of category to count, like {\"tokens\":5}`,
		"query=a&filterLimits=%7B%22nft%22:1%7D": `filterLimits.nft: unknown search category \"nft\" (one of ` + strings.Join(searchCategoryNames(), ", ") + `)`,
		"query=a&filterOffsets[tags]=10001":      "filterOffsets[tags]: must be between 0 and 10000, got 10001",
		"query=a&filterLimits[tags=1":            "filterLimits[tags: a key must look like filterLimits[category]",
		"query=a%00":                             "query: must not contain a NUL character (byte 1)",
		"query=%ff":                              "query: is not valid UTF-8 (byte 0)",
	} {
		code, body := api.do(t, "GET", "/intelligence/search?"+q, "", nil)
		if code != 400 || strings.TrimSpace(body) != `{"error":"`+msg+`"}` {
			t.Errorf("%s: got %d %s, want 400 %s", q, code, body, msg)
		}
	}
}

func searchCategoryNames() []string {
	return []string{"serviceEntities", "serviceAddresses", "userEntities", "userAddresses", "ens",
		"types", "services", "twitter", "opensea", "tokens", "pools", "tags", "polymarketEvents"}
}

// TestSearchSeesNewEntities: an entity imported while the service runs is found once the
// attribution cache has refreshed, with its type, as the database-backed plan finds it.
func TestSearchSeesNewEntities(t *testing.T) {
	searchWorld(t)
	api := newTestAPI(t, nil, nil)
	q := "/intelligence/search?query=okx&serviceAddresses=0&tokens=0&tags=0"
	empty := `"ens":[],"opensea":[],"pools":[],"polymarketEvents":[],"polymarketWallets":[],"services":[]`
	_, body := api.do(t, "GET", q, "", nil)
	assertJSON(t, "before the import", body, `{"serviceEntities":[],"serviceAddresses":[],"userEntities":[],"userAddresses":[],
		"types":[],"twitter":[],"tokens":[],"tags":[],`+empty+`}`)
	doc := `{"entities":[{"id":"okx","name":"OKX","type":"okx-cex","twitter":"https://x.com/okx"}]}`
	if _, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	if err := api.cache.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	okx := `{"id":"okx","name":"OKX","note":"","type":"okx-cex","service":null,"twitter":"https://x.com/okx"}`
	want := `{"serviceEntities":[` + okx + `],"serviceAddresses":[],"userEntities":[],"userAddresses":[],
		"types":["okx-cex"],"twitter":[` + okx + `],"tokens":[],"tags":[],` + empty + `}`
	for _, perCategory := range []bool{false, true} {
		api.app.SearchPerCategory = perCategory
		_, body = api.do(t, "GET", q, "", nil)
		assertJSON(t, "after the import", body, want)
	}
}
