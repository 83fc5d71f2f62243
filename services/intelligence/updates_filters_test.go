package intelligence

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// keysOf is each item of a feed page as "<id or address>[/tag]:status", in page order.
func keysOf(t *testing.T, page map[string]any) string {
	t.Helper()
	var out []string
	for _, it := range page["items"].([]any) {
		m := it.(map[string]any)
		k := fmt.Sprint(m["id"])
		if a, ok := m["address"]; ok {
			k = fmt.Sprint(a)
			if tag, ok := m["tag_id"]; ok {
				k += "/" + fmt.Sprint(tag) + "(" + fmt.Sprint(m["tag_params"]) + ")"
			}
		}
		out = append(out, k+":"+fmt.Sprint(m["status"]))
	}
	return strings.Join(out, " ")
}

// anyFeed GETs a change feed page in any order.
func anyFeed(t *testing.T, api *testAPI, path string) map[string]any {
	t.Helper()
	code, body := api.do(t, "GET", path, "", nil)
	var page map[string]any
	if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	return page
}

// TestChangeFeedFilters: every filter the public API lists on the four feeds selects on the
// record as it is now; orderBy reverses the order and pages on; include* shape address items;
// bad values are 400s naming the parameter; a filter of another feed is ignored.
func TestChangeFeedFilters(t *testing.T) {
	resetDB(t)
	start := time.Now()
	a2, a3 := "0x2222222222222222222222222222222222222222", "0x3333333333333333333333333333333333333333"
	doc := `{"entities":[{"id":"acme","name":"Acme","type":"cex"},{"id":"fundx","name":"Fund X","type":"fund"}],
		"tags":[{"id":"hot","label":"Hot wallet","rank":3},{"id":"whale","label":"Whale","rank":5}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme","label":"Hot 1","tags":[{"id":"hot","params":""}]},
			{"chainType":"evm","address":"` + a2 + `","entity":"fundx","label":"Fund X Treasury","tags":[{"id":"hot","params":"p1"},{"id":"whale","params":""}]},
			{"chainType":"evm","address":"` + a3 + `","tags":[{"id":"whale","params":""}]}]}`
	if _, err := ImportCurated(context.Background(), testConfig(t), strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	for _, c := range []struct{ path, want string }{
		{"/intelligence/entities/updates", "acme:new fundx:new"},
		{"/intelligence/entities/updates?entityId=fundx", "fundx:new"},
		{"/intelligence/entities/updates?entityType=cex,bank", "acme:new"},
		{"/intelligence/entities/updates?orderBy=-diff_seq", "fundx:new acme:new"},
		{"/intelligence/entities/updates?tagId=hot&chain=nochain", "acme:new fundx:new"}, // other feeds' filters
		{"/intelligence/addresses/updates", hot1 + ":new " + a2 + ":new " + a3 + ":new"},
		{"/intelligence/addresses/updates?entityId=acme&entityId=fundx", hot1 + ":new " + a2 + ":new"},
		{"/intelligence/addresses/updates?entityType=fund", a2 + ":new"},
		{"/intelligence/addresses/updates?label=treasURY", a2 + ":new"},
		{"/intelligence/addresses/updates?service=false", a3 + ":new"},
		{"/intelligence/addresses/updates?service=true&orderBy=-diff_ts", a2 + ":new " + hot1 + ":new"},
		{"/intelligence/addresses/updates?tagId=whale", a2 + ":new " + a3 + ":new"},
		{"/intelligence/addresses/updates?tagId=hot&tagParams=p1", a2 + ":new"},
		{"/intelligence/addresses/updates?tagParams=", hot1 + ":new " + a2 + ":new " + a3 + ":new"},
		{"/intelligence/addresses/updates?address=" + strings.ToUpper(a3[2:3]) + "x" + a3[2:] + "," + hot1, hot1 + ":new"},
		{"/intelligence/addresses/updates?address=0X" + strings.ToUpper(a3[2:]), a3 + ":new"},
		{"/intelligence/addresses/updates?chain=base", hot1 + ":new " + a2 + ":new " + a3 + ":new"},
		{"/intelligence/addresses/updates?chain=solana", ""},
		{"/intelligence/addresses/updates?depositExchangeId=acme", ""},
		{"/intelligence/tags/updates", "hot:new whale:new"},
		{"/intelligence/tags/updates?tagId=whale", "whale:new"},
		{"/intelligence/tags/updates?orderBy=-diff_seq", "whale:new hot:new"},
		{"/intelligence/tags/updates?category=exchange", ""},
		{"/intelligence/address_tags/updates?tagId=hot", hot1 + "/hot():new " + a2 + "/hot(p1):new"},
		{"/intelligence/address_tags/updates?tagParams=p1", a2 + "/hot(p1):new"},
		{"/intelligence/address_tags/updates?entityId=fundx&orderBy=-diff_seq", a2 + "/whale():new " + a2 + "/hot(p1):new"},
		{"/intelligence/address_tags/updates?address=" + a3 + "&chain=ethereum", a3 + "/whale():new"},
		{"/intelligence/address_tags/updates?category=exchange", ""},
	} {
		page := anyFeed(t, api, c.path)
		if !strings.Contains(c.path, "orderBy=-") {
			_, page = feed(t, api, c.path, start)
		}
		if got := keysOf(t, page); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.path, got, c.want)
		}
	}

	// Newest first, paged: the token continues downwards.
	page := anyFeed(t, api, "/intelligence/address_tags/updates?orderBy=-diff_seq&limit=2")
	tok, _ := page["pageToken"].(string)
	if keysOf(t, page) != a3+"/whale():new "+a2+"/whale():new" || page["hasMore"] != true || tok == "" {
		t.Fatalf("newest first, page 1: %v", page)
	}
	page = anyFeed(t, api, "/intelligence/address_tags/updates?orderBy=-diff_seq&limit=2&pageToken="+tok)
	if keysOf(t, page) != a2+"/hot(p1):new "+hot1+"/hot():new" || page["hasMore"] != false {
		t.Fatalf("newest first, page 2: %v", page)
	}

	// What an address update shows on request: its tags, its prediction, its clusters.
	got, _ := feed(t, api, "/intelligence/addresses/updates?address="+a2+"&includeTags=true&includeEntityPredictions=true&includeClusters=false", start)
	assertJSON(t, "includes", got, `{"items":[{"address":"`+a2+`","chain":"ethereum","entity_id":"fundx","entity_name":"Fund X","entity_type":"fund",
		"label":"Fund X Treasury","deposit_exchange_id":null,"service":true,"status":"new",
		"populated_tags":[{"id":"hot","label":"Hot wallet","rank":3,"excludeEntities":false,"disablePage":false,"tagParams":"p1"},
			{"id":"whale","label":"Whale","rank":5,"excludeEntities":false,"disablePage":false,"tagParams":""}]}],"hasMore":false}`)

	for q, msg := range map[string]string{
		"/intelligence/tags/updates?orderBy=rank":                    `orderBy: must be one of diff_seq, diff_ts, -diff_seq, -diff_ts, got \"rank\"`,
		"/intelligence/addresses/updates?service=maybe":              `service: must be true or false, got \"maybe\"`,
		"/intelligence/addresses/updates?includeTags=yes":            `includeTags: must be true or false, got \"yes\"`,
		"/intelligence/address_tags/updates?chain=nochain":           `chain: unknown chain \"nochain\"`,
		"/intelligence/addresses/updates?label=a&label=b":            `label: given 2 times; give it once`,
		"/intelligence/address_tags/updates?tagParams=a&tagParams=b": `tagParams: given 2 times; give it once`,
	} {
		code, body := api.do(t, "GET", q, "", nil)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != 400 || !strings.HasPrefix(e.Error, strings.ReplaceAll(msg, `\"`, `"`)) {
			t.Errorf("%s: got %d %s, want 400 %s", q, code, body, msg)
		}
	}
}
