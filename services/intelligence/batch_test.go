package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

const (
	bw1     = "0xa100000000000000000000000000000000000001"
	bw2     = "0xa100000000000000000000000000000000000002"
	btc1    = "bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h"
	cluster = "cl-00000000000000c1"
)

func batchWorld(t *testing.T) {
	t.Helper()
	resetDB(t)
	doc := `{"entities":[{"id":"acme","name":"Acme","type":"cex"},{"id":"fundco","name":"Fund Co","type":"fund"}],
		"addresses":[{"chainType":"evm","address":"` + bw1 + `","entity":"acme","label":"Hot 1","tags":[{"id":"hot","params":""},{"id":"bridge","params":"base"}]},
			{"chainType":"bitcoin","address":"` + btc1 + `","entity":"fundco","label":"Cold"}],
		"tags":[{"id":"hot","label":"Hot wallet","rank":1},{"id":"bridge","label":"Bridge to {param}","rank":2,"chain":"ethereum"}]}`
	if _, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	// A cluster as the heuristics pass leaves it: two members, one with activity.
	_, err := pgtest.Pool(t).Exec(context.Background(), `
		INSERT INTO intel.addresses (chain_type, address, cluster_ids, version) VALUES ('evm', '`+bw2+`', '{`+cluster+`}', nextval('intel.attribution_version'));
		UPDATE intel.addresses SET cluster_ids = '{`+cluster+`}', version = nextval('intel.attribution_version') WHERE address = '`+bw1+`';
		INSERT INTO intel.address_activity VALUES ('evm', '`+bw1+`', 150.5, 3, 1700000000000, 1700003600000),
			('evm', '`+bw2+`', 0, 0, 0, 0)`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestBatchesTypesAndClusters: the batch/all and enriched batch routes, entity types and the
// cluster summary on a known world, whole bodies; bad input named.
func TestBatchesTypesAndClusters(t *testing.T) {
	batchWorld(t)
	api := newTestAPI(t, nil, nil)
	id := httpx.Identity{KeyID: "k-b", UserID: "u-b", Role: httpx.RoleIndividual, Tier: "api"}
	do := func(method, path, body string) (int, string) { return api.do(t, method, path, body, &id) }
	check := func(what string, code int, body string, wantCode int, want string) {
		t.Helper()
		if code != wantCode {
			t.Fatalf("%s: %d %s", what, code, body)
		}
		assertJSON(t, what, body, want)
	}

	acme := `{"id":"acme","name":"Acme","note":"","type":"cex","service":null}`
	info := func(a, chain string) string {
		return `{"address":"` + a + `","chain":"` + chain + `","serviceEntity":` + acme + `,"serviceLabel":{"name":"Hot 1","address":"` + a +
			`","chainType":"evm"},"contract":false,"isUserAddress":false`
	}
	hot := `{"id":"hot","label":"Hot wallet","rank":1,"tagParams":"","disablePage":false,"excludeEntities":false}`
	bridge := `{"id":"bridge","label":"Bridge to base","rank":2,"tagParams":"base","disablePage":false,"excludeEntities":false,"chain":"ethereum"}`

	code, body := do("GET", "/intelligence/entity_types", "")
	check("entity_types", code, body, 200, `["cex","fund"]`)

	// batch/all: every configured chain of each address's format, or only the chains asked for.
	code, body = do("POST", "/intelligence/address/batch/all?chains=ethereum,base", `{"addresses":["`+strings.ToUpper(bw1[2:3])+bw1[3:]+`","`+btc1+`"]}`)
	if code != 400 {
		t.Fatalf("no 0x: %d %s", code, body)
	}
	code, body = do("POST", "/intelligence/address/batch/all?chains=ethereum,base", `{"addresses":["`+bw1+`","`+bw2+`"]}`)
	check("batch/all", code, body, 200, `{"addresses":{"`+bw1+`":{"ethereum":`+info(bw1, "ethereum")+`},"base":`+info(bw1, "base")+`}},
		"`+bw2+`":{"ethereum":{"address":"`+bw2+`","chain":"ethereum","contract":false,"isUserAddress":false},
			"base":{"address":"`+bw2+`","chain":"base","contract":false,"isUserAddress":false}}}}`)
	code, body = do("POST", "/intelligence/address/batch/all?chain=bitcoin", `{"addresses":["`+btc1+`"]}`)
	check("batch/all one chain", code, body, 200, `{"addresses":{"`+btc1+`":{"bitcoin":{"address":"`+btc1+`","chain":"bitcoin",
		"serviceEntity":{"id":"fundco","name":"Fund Co","note":"","type":"fund","service":null},
		"serviceLabel":{"name":"Cold","address":"`+btc1+`","chainType":"bitcoin"},"contract":false,"isUserAddress":false}}}}`)
	code, body = do("POST", "/intelligence/address/batch/all?chains=bitcoin", `{"addresses":["`+bw1+`"]}`)
	check("batch/all no chain left", code, body, 400, `{"error":"addresses[0]: \"`+bw1+`\" is not a valid address on any requested chain"}`)
	// Every batch route reads chains (and chain) through params.Chains: an unknown name is a 400
	// naming the parameter and the value, never the empty answer a filter on no chain reads.
	for _, route := range []string{"/intelligence/address/batch", "/intelligence/address/batch/all",
		"/intelligence/address_enriched/batch", "/intelligence/address_enriched/batch/all"} {
		code, body = do("POST", route+"?chains=ethereum,notachain", `{"addresses":["`+bw1+`"]}`)
		check(route+" unknown chains", code, body, 400, `{"error":"chains: unknown chain \"notachain\""}`)
		code, body = do("POST", route+"?chain=notachain", `{"addresses":["`+bw1+`"]}`)
		check(route+" unknown chain", code, body, 400, `{"error":"chain: unknown chain \"notachain\""}`)
	}
	// The single /all lookups read chains and chain as /batch/all does: applied, an unknown name
	// a 400 naming its parameter, an address valid on none of them a 404.
	code, body = do("GET", "/intelligence/address/"+bw1+"/all?chains=base&chain=polygon", "")
	check("all on base and polygon", code, body, 200, `{"polygon":`+info(bw1, "polygon")+`},"base":`+info(bw1, "base")+`}}`)
	code, body = do("GET", "/intelligence/address/"+bw1+"/all?chain=base", "")
	check("all on base", code, body, 200, `{"base":`+info(bw1, "base")+`}}`)
	code, body = do("GET", "/intelligence/address_enriched/"+bw1+"/all?chains=polygon&includeTags=false", "")
	check("enriched all on polygon", code, body, 200, `{"polygon":`+info(bw1, "polygon")+`,"clusterIds":["`+cluster+`"]}}`)
	for _, route := range []string{"/intelligence/address/", "/intelligence/address_enriched/", "/intelligence/address_with_extra_enrichment/"} {
		code, body = do("GET", route+bw1+"/all?chains=foo", "")
		check(route+" all unknown chains", code, body, 400, `{"error":"chains: unknown chain \"foo\""}`)
		code, body = do("GET", route+bw1+"/all?chain=foo", "")
		check(route+" all unknown chain", code, body, 400, `{"error":"chain: unknown chain \"foo\""}`)
		code, body = do("GET", route+bw1+"/all?chains=bitcoin", "")
		check(route+" all no chain left", code, body, 404, `{"error":"address \"`+bw1+`\" is not valid on the requested chains (bitcoin)"}`)
	}
	// The batch paths are POST only: another method is a 405 naming POST, never an address
	// lookup of "batch".
	for _, route := range []string{"/intelligence/address/batch", "/intelligence/address/batch/all",
		"/intelligence/address_enriched/batch", "/intelligence/address_enriched/batch/all"} {
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			w := api.send(t, m, route, "", &id)
			if w.Code != 405 || w.Header().Get("Allow") != "POST" {
				t.Fatalf("%s %s: %d, Allow %q: %s", m, route, w.Code, w.Header().Get("Allow"), w.Body)
			}
			assertJSON(t, m+" "+route, w.Body.String(), `{"error":"method `+m+` not allowed on `+route+`"}`)
		}
	}
	code, body = do("GET", "/intelligence/address_with_extra_enrichment/batch", "")
	check("no batch alias", code, body, 404, `{"error":"address \"batch\" has the format of no chain configured on this deployment"}`)

	// Without chain, chains bounds the chain an address is detected on.
	code, body = do("POST", "/intelligence/address/batch?chains=base", `{"addresses":["`+bw1+`"]}`)
	check("batch on base", code, body, 200, `{"addresses":{"`+bw1+`":`+info(bw1, "base")+`}}}`)
	code, body = do("POST", "/intelligence/address/batch?chain=polygon", `{"addresses":["`+bw1+`"]}`)
	check("batch on polygon", code, body, 200, `{"addresses":{"`+bw1+`":`+info(bw1, "polygon")+`}}}`)
	// Both given, chain must be among chains: neither silently wins.
	for _, route := range []string{"/intelligence/address/batch", "/intelligence/address_enriched/batch"} {
		code, body = do("POST", route+"?chain=base&chains=bitcoin", `{"addresses":["`+bw1+`"]}`)
		check(route+" chain outside chains", code, body, 400, `{"error":"chain: \"base\" is not among chains (bitcoin)"}`)
	}
	code, body = do("POST", "/intelligence/address/batch?chain=polygon&chains=base,polygon", `{"addresses":["`+bw1+`"]}`)
	check("batch on polygon among chains", code, body, 200, `{"addresses":{"`+bw1+`":`+info(bw1, "polygon")+`}}}`)
	code, body = do("POST", "/intelligence/address/batch?chains=bitcoin", `{"addresses":["`+bw1+`"]}`)
	check("batch no chain left", code, body, 400, `{"error":"addresses[0]: \"`+bw1+`\" is not a valid address on any requested chain"}`)

	// Enriched batch: tags (chain-specific ones on their chain only), clusters, toggles.
	code, body = do("POST", "/intelligence/address_enriched/batch", `{"addresses":["`+bw1+`","`+bw2+`"]}`)
	check("enriched batch", code, body, 200, `{"addresses":{"`+bw1+`":`+info(bw1, "ethereum")+`,"populatedTags":[`+hot+`,`+bridge+`],"clusterIds":["`+cluster+`"]},
		"`+bw2+`":{"address":"`+bw2+`","chain":"ethereum","contract":false,"isUserAddress":false,"populatedTags":[],"clusterIds":["`+cluster+`"]}}}`)
	code, body = do("POST", "/intelligence/address_enriched/batch?chain=base&includeClusters=false", `{"addresses":["`+bw1+`"]}`)
	check("enriched batch on base", code, body, 200, `{"addresses":{"`+bw1+`":`+info(bw1, "base")+`,"populatedTags":[`+hot+`]}}}`)
	code, body = do("POST", "/intelligence/address_enriched/batch/all?chains=ethereum,polygon&includeTags=false", `{"addresses":["`+bw1+`"]}`)
	check("enriched batch/all", code, body, 200, `{"addresses":{"`+bw1+`":{"ethereum":`+info(bw1, "ethereum")+`,"clusterIds":["`+cluster+`"]},
		"polygon":`+info(bw1, "polygon")+`,"clusterIds":["`+cluster+`"]}}}}`)
	code, body = do("POST", "/intelligence/address_enriched/batch?includeTags=maybe", `{"addresses":["`+bw1+`"]}`)
	if code != 400 || !strings.Contains(body, "includeTags") {
		t.Fatalf("bad toggle: %d %s", code, body)
	}
	// A batch is charged per address answered (X-Chainintel-Rows): an address named many times
	// is one row.
	for _, route := range []string{"/intelligence/address/batch", "/intelligence/address/batch/all", "/intelligence/address_enriched/batch",
		"/intelligence/address_enriched/batch/all"} {
		w := api.send(t, "POST", route, `{"addresses":["`+bw1+`","`+bw1+`","`+bw2+`","`+bw1+`"]}`, &id)
		if w.Code != 200 || w.Header().Get(httpx.HeaderRows) != "2" {
			t.Fatalf("%s with repeated addresses: %d, rows %q, want 2: %s", route, w.Code, w.Header().Get(httpx.HeaderRows), w.Body)
		}
	}
	code, body = do("POST", "/intelligence/address_enriched/batch", `{"addresses":[]}`)
	check("empty batch", code, body, 400, `{"error":"addresses: give at least one address"}`)

	// Cluster summary.
	code, body = do("GET", "/cluster/"+cluster+"/summary", "")
	check("cluster", code, body, 200, `{"clusterId":"`+cluster+`","numAddresses":2,"volumeUsd":150.5,"balanceUsd":0,
		"firstTx":"2023-11-14T22:13:20Z","lastTx":"2023-11-14T23:13:20Z"}`)
	code, body = do("GET", "/cluster/cl-00000000000000c2/summary", "")
	check("unknown cluster", code, body, 404, `{"error":"unknown cluster \"cl-00000000000000c2\""}`)
	code, body = do("GET", "/cluster/binance/summary", "")
	check("not a cluster id", code, body, 404, `{"error":"unknown cluster \"binance\" (cluster ids are cl- and 16 hex digits)"}`)
}
