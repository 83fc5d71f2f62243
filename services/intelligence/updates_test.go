package intelligence

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// feed GETs a change feed page and returns it with diff_seq and diff_ts checked (growing, within
// the test's time) and removed, so the rest compares as a whole body.
func feed(t *testing.T, api *testAPI, path string, start time.Time) (string, map[string]any) {
	t.Helper()
	id := httpx.Identity{KeyID: "k-u", UserID: "u-u", Role: httpx.RoleIndividual, Tier: "api"}
	code, body := api.do(t, "GET", path, "", &id)
	if code != 200 {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	var page map[string]any
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	last := 0.0
	for _, it := range page["items"].([]any) {
		m := it.(map[string]any)
		seq := m["diff_seq"].(float64)
		ts, err := time.Parse(time.RFC3339Nano, m["diff_ts"].(string))
		if seq <= last || err != nil || ts.Before(start.Add(-time.Second)) {
			t.Fatalf("%s: diff_seq %v after %v, diff_ts %v: %s", path, seq, last, m["diff_ts"], body)
		}
		last = seq
		delete(m, "diff_seq")
		delete(m, "diff_ts")
	}
	if page["latest_diff_ts"] == nil && len(page["items"].([]any)) > 0 {
		t.Fatalf("%s: no latest_diff_ts: %s", path, body)
	}
	delete(page, "latest_diff_ts")
	// A last page of an oldest-first feed carries the position after it, to poll on with: the
	// last item's diff_seq (checked, then removed with it).
	if page["hasMore"] == false && page["pageToken"] != nil {
		// An empty page's is the feed's head, past every item of earlier pages.
		if tok, _ := page["pageToken"].(string); last != 0 && tok != strconv.FormatFloat(last, 'f', 0, 64) ||
			last == 0 && strings.TrimLeft(tok, "0123456789") != "" {
			t.Fatalf("%s: last page's pageToken %v, last diff_seq %v: %s", path, page["pageToken"], last, body)
		}
		delete(page, "pageToken")
	}
	out, _ := json.Marshal(page)
	return string(out), page
}

// TestChangeFeeds: imports, a relabel and a tag taken off show in the four feeds, in order,
// paged with pageToken, filtered by status and time; bad parameters named.
func TestChangeFeeds(t *testing.T) {
	resetDB(t)
	start := time.Now()
	ctx := context.Background()
	doc := `{"entities":[{"id":"acme","name":"Acme","type":"cex","website":"https://acme.example"}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme","label":"Hot 1","tags":[{"id":"hot","params":""}]}],
		"tags":[{"id":"hot","label":"Hot wallet","rank":3}]}`
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	relabel := strings.Replace(strings.Replace(doc, `"Hot 1","tags":[{"id":"hot","params":""}]`, `"Hot 2","tags":[]`, 1), `"Acme"`, `"Acme Exchange"`, 1)
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(relabel)); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)

	acmeNow := `"id":"acme","name":"Acme Exchange","type":"cex","website_url":"https://acme.example","twitter_url":"","linkedin_url":""`
	got, _ := feed(t, api, "/intelligence/entities/updates", start)
	assertJSON(t, "entities", got, `{"items":[{`+acmeNow+`,"status":"new"},{`+acmeNow+`,"status":"updated"}],"hasMore":false}`)

	addrNow := `"address":"` + hot1 + `","chain":"ethereum","entity_id":"acme","entity_name":"Acme Exchange","entity_type":"cex","label":"Hot 2","deposit_exchange_id":null,"service":true,"cluster_ids":[]`
	got, _ = feed(t, api, "/intelligence/addresses/updates", start)
	assertJSON(t, "addresses", got, `{"items":[{`+addrNow+`,"status":"new"},{`+addrNow+`,"status":"updated"}],"hasMore":false}`)

	// Paged one at a time: the first page says more follow and gives the token.
	got, page := feed(t, api, "/intelligence/addresses/updates?limit=1", start)
	tok, _ := page["pageToken"].(string)
	assertJSON(t, "addresses page 1", got, `{"items":[{`+addrNow+`,"status":"new"}],"hasMore":true,"pageToken":"`+tok+`"}`)
	got, _ = feed(t, api, "/intelligence/addresses/updates?limit=1&pageToken="+tok, start)
	assertJSON(t, "addresses page 2", got, `{"items":[{`+addrNow+`,"status":"updated"}],"hasMore":false}`)

	// Caught up, a client polls on with the last page's token: nothing repeated, the token kept
	// while nothing is new, then exactly what was logged since.
	id := httpx.Identity{KeyID: "k-u", UserID: "u-u", Role: httpx.RoleIndividual, Tier: "api"}
	poll := func(tok string) map[string]any {
		code, body := api.do(t, "GET", "/intelligence/entities/updates?pageToken="+tok, "", &id)
		var p map[string]any
		if code != 200 || json.Unmarshal([]byte(body), &p) != nil {
			t.Fatalf("poll %s: %d %s", tok, code, body)
		}
		return p
	}
	first := poll("0")
	caught, _ := first["pageToken"].(string)
	if again := poll(caught); len(again["items"].([]any)) != 0 || again["pageToken"] != caught {
		t.Fatalf("polled on from %s: %v", caught, again)
	}
	rename := strings.Replace(relabel, `"Acme Exchange"`, `"Acme Global"`, 1)
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(rename)); err != nil {
		t.Fatal(err)
	}
	if next := poll(caught); len(next["items"].([]any)) != 1 || next["items"].([]any)[0].(map[string]any)["name"] != "Acme Global" {
		t.Fatalf("polled on from %s after a rename: %v", caught, next)
	}
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(relabel)); err != nil {
		t.Fatal(err)
	}

	got, _ = feed(t, api, "/intelligence/tags/updates", start)
	assertJSON(t, "tags", got, `{"items":[{"id":"hot","tag_name":"Hot wallet","rank":3,"category":null,"address_count":0,"entity_count":0,"status":"new"}],"hasMore":false}`)

	tagNow := `"address":"` + hot1 + `","chain":"ethereum","tag_id":"hot","tag_params":"","tag_name":"Hot wallet","rank":3,"entity_id":"acme","entity_name":"Acme Exchange","entity_type":"cex","label":"Hot 2"`
	got, _ = feed(t, api, "/intelligence/address_tags/updates", start)
	assertJSON(t, "address_tags", got, `{"items":[{`+tagNow+`,"status":"new"},{`+tagNow+`,"status":"deleted"}],"hasMore":false}`)
	got, _ = feed(t, api, "/intelligence/address_tags/updates?status=deleted", start)
	assertJSON(t, "address_tags deleted", got, `{"items":[{`+tagNow+`,"status":"deleted"}],"hasMore":false}`)

	// Nothing changed after now.
	later := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	// An empty first page carries the feed's position (its head), to poll on from; a token past
	// the head is none a page gave.
	var head int64
	if err := pgtest.Pool(t).QueryRow(ctx, "SELECT max(seq) FROM intel.change_log").Scan(&head); err != nil {
		t.Fatal(err)
	}
	code, body := api.do(t, "GET", "/intelligence/entities/updates?since="+later, "", nil)
	if want := fmt.Sprintf(`{"items":[],"hasMore":false,"pageToken":"%d","latest_diff_ts":null}`, head); code != 200 || body != want {
		t.Fatalf("empty feed: %d %s, want %s", code, body, want)
	}
	code, body = api.do(t, "GET", fmt.Sprintf("/intelligence/entities/updates?pageToken=%d", head+1), "", nil)
	if code != 400 || body != `{"error":"pageToken: not a token this API returned"}` {
		t.Fatalf("token past the head: %d %s", code, body)
	}
	for q, msg := range map[string]string{
		"since=yesterday":   `since: time \"yesterday\" must be Unix milliseconds or RFC 3339`,
		"since=1&from=1":    "since: give since or from, not both (they are the same)",
		"from=2000&to=1000": "to: must not be before from",
		"status=changed":    `status: must be one of new, updated, deleted, all, got \"changed\"`,
		"limit=0":           "limit: must be between 1 and 1000, got 0",
		"pageToken=abc":     "pageToken: not a token this API returned",
	} {
		code, body := api.do(t, "GET", "/intelligence/tags/updates?"+q, "", nil)
		if code != 400 || strings.TrimSpace(body) != `{"error":"`+msg+`"}` {
			t.Errorf("%s: got %d %s, want 400 %s", q, code, body, msg)
		}
	}
}
