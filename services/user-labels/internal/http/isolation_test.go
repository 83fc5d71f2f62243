package http

import (
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// Two users of one org: neither reads, changes or learns of the other's labels and entities.
func TestIsolationBetweenCallers(t *testing.T) {
	ev := newEnv(t)
	alice, bob := newUser(), newUser()

	aliceLabels := `[{"name":"mine","note":"private","address":"` + evmAddr(1) + `","chainType":"evm"}]`
	expect(t, ev.do(t, alice, "POST", "/user/labels", aliceLabels), 200, aliceLabels)
	priv := decode[[]app.Entity](t, ev.do(t, alice, "POST", "/user/entities", `{"name":"private","addresses":{"evm":["`+evmAddr(1)+`"]}}`))[0]
	shared := decode[[]app.Entity](t, ev.do(t, alice, "POST", "/user/entities", `{"name":"shared","addresses":{"evm":["`+evmAddr(2)+`"]},"shareable":true}`))[0]
	expect(t, ev.do(t, alice, "PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["`+evmAddr(3)+`"]}}`), 200,
		`{"id":"binance","addresses":{"evm":["`+evmAddr(3)+`"]}}`)

	// Lists only ever hold the caller's rows.
	expect(t, ev.do(t, bob, "GET", "/user/labels", nil), 200, `[]`)
	expect(t, ev.do(t, bob, "GET", "/user/entities?includeAddresses=true", nil), 200, `[]`)
	expect(t, ev.do(t, bob, "GET", "/internal/additions/binance", nil), 200, `{"addresses":{}}`)
	expect(t, ev.do(t, bob, "POST", "/internal/lookup", `{"addresses":[{"chainType":"evm","address":"`+evmAddr(1)+`"},{"chainType":"evm","address":"`+evmAddr(2)+`"}]}`),
		200, `{"labels":{},"entities":{}}`)

	// Someone else's id answers exactly like an id that does not exist: 404, never 403. Even a
	// shareable entity is only readable through the shared lookup, not as one's own.
	unknown := "00000000-0000-4000-8000-000000000000"
	for _, id := range []string{priv.ID, shared.ID, unknown} {
		nf := `no user entity "` + id + `"`
		expectError(t, ev.do(t, bob, "GET", "/user/entities/"+id, nil), 404, nf)
		expectError(t, ev.do(t, bob, "GET", "/internal/entities/"+id, nil), 404, nf)
		expectError(t, ev.do(t, bob, "PUT", "/user/entities/"+id, `{"name":"taken","addresses":{}}`), 404, nf)
		expectError(t, ev.do(t, bob, "PUT", "/user/entities/only_add/"+id, `{"addresses":{"evm":["`+evmAddr(9)+`"]}}`), 404, nf)
		expectError(t, ev.do(t, bob, "DELETE", "/user/entities/"+id, nil), 404, nf)
	}
	expectError(t, ev.do(t, bob, "PUT", "/user/labels/"+evmAddr(1)+":evm", `{"name":"taken","note":""}`), 404, "no label "+evmAddr(1)+":evm")
	expect(t, ev.do(t, bob, "DELETE", "/user/labels/"+evmAddr(1)+":evm", nil), 200, `{"deleted":0}`)
	expect(t, ev.do(t, bob, "DELETE", "/user/labels?labels="+evmAddr(1)+":evm", nil), 200, `{"deleted":0}`)

	// Bob's own label of the same address is his alone.
	bobLabels := `[{"name":"bob's","note":"","address":"` + evmAddr(1) + `","chainType":"evm"}]`
	expect(t, ev.do(t, bob, "POST", "/user/labels", bobLabels), 200, bobLabels)

	// Nothing of Alice's changed.
	expect(t, ev.do(t, alice, "GET", "/user/labels", nil), 200, aliceLabels)
	expect(t, ev.do(t, alice, "GET", "/user/entities/"+priv.ID, nil), 200, entityJSON(priv, "private", "", false, `{"evm":["`+evmAddr(1)+`"]}`))
	expect(t, ev.do(t, alice, "GET", "/internal/additions/binance", nil), 200, `{"addresses":{"evm":["`+evmAddr(3)+`"]}}`)
	expect(t, ev.do(t, alice, "POST", "/internal/lookup", `{"addresses":[{"chainType":"evm","address":"`+evmAddr(1)+`"}]}`),
		200, `{"labels":{"evm:`+evmAddr(1)+`":{"name":"mine","note":"private"}},"entities":{"evm:`+evmAddr(1)+`":[{"id":"`+priv.ID+`","name":"private","note":""}]}}`)

	// A second key of Alice's (another key id, another role) sees the same data: labels belong
	// to the user, not the key.
	other := httpx.Identity{KeyID: "second-key", UserID: alice, OrgID: "org-shared", Role: httpx.RoleOrgAdmin, Tier: "free"}
	expect(t, ev.doAs(t, &other, "GET", "/user/labels", nil), 200, aliceLabels)

	// The shareable entity is readable without a caller; the private one is not.
	expect(t, ev.do(t, "", "GET", "/internal/shared/entities/"+shared.ID, nil), 200, entityJSON(shared, "shared", "", true, `{"evm":["`+evmAddr(2)+`"]}`))
	expectError(t, ev.do(t, "", "GET", "/internal/shared/entities/"+priv.ID, nil), 404, `no user entity "`+priv.ID+`"`)
	expectError(t, ev.do(t, "", "GET", "/internal/shared/entities/binance", nil), 404, `no user entity "binance"`)
}

func TestInternalLookup(t *testing.T) {
	for name, opts := range map[string][]app.Option{
		"indexed":          {app.WithLookupCache(1 << 30)},
		"uncached":         nil,
		"too big to index": {app.WithLookupCache(1 << 30), app.WithMaxIndexedLabels(1)},
	} {
		t.Run(name, func(t *testing.T) { testInternalLookup(t, newEnvWith(t, opts...)) })
	}
}

func testInternalLookup(t *testing.T, ev *env) {
	u := newUser()
	expect(t, ev.do(t, u, "POST", "/user/labels", `[
		{"name":"a","note":"na","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"},
		{"name":"b","note":"","address":"`+btcLower+`","chainType":"bitcoin"}]`), 200, `[
		{"name":"a","note":"na","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"},
		{"name":"b","note":"","address":"`+btcLower+`","chainType":"bitcoin"}]`)
	e1 := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", `[
		{"name":"one","note":"n1","addresses":{"evm":["0x00000000000000000000000000000000000000ab","`+evmAddr(5)+`"]}},
		{"name":"two","addresses":{"evm":["0x00000000000000000000000000000000000000ab"]}}]`))

	// Answers are keyed by each address as sent; addresses with nothing, invalid ones and
	// unknown chain types are simply absent.
	r := ev.do(t, u, "POST", "/internal/lookup", `{"addresses":[
		{"chainType":"evm","address":"0x00000000000000000000000000000000000000AB"},
		{"chainType":"evm","address":"0x00000000000000000000000000000000000000ab"},
		{"chainType":"bitcoin","address":"`+btcUpper+`"},
		{"chainType":"evm","address":"`+evmAddr(5)+`"},
		{"chainType":"evm","address":"`+evmAddr(6)+`"},
		{"chainType":"evm","address":"garbage"},
		{"chainType":"cosmos","address":"x"}]}`)
	ents := `[{"id":"` + e1[0].ID + `","name":"one","note":"n1"},{"id":"` + e1[1].ID + `","name":"two","note":""}]`
	expect(t, r, 200, `{
		"labels":{
			"evm:0x00000000000000000000000000000000000000AB":{"name":"a","note":"na"},
			"evm:0x00000000000000000000000000000000000000ab":{"name":"a","note":"na"},
			"bitcoin:`+btcUpper+`":{"name":"b","note":""}},
		"entities":{
			"evm:0x00000000000000000000000000000000000000AB":`+ents+`,
			"evm:0x00000000000000000000000000000000000000ab":`+ents+`,
			"evm:`+evmAddr(5)+`":[{"id":"`+e1[0].ID+`","name":"one","note":"n1"}]}}`)

	expect(t, ev.do(t, u, "POST", "/internal/lookup", `{"addresses":[]}`), 200, `{"labels":{},"entities":{}}`)
	expectError(t, ev.do(t, u, "POST", "/internal/lookup", `{"addresses":[{"chain":"evm"}]}`), 400, `request body has an unknown field "chain"`)

	// At most 10,000 addresses.
	var b strings.Builder
	b.WriteString(`{"addresses":[`)
	for i := range app.MaxLookupAddresses + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"chainType":"evm","address":"` + evmAddr(i) + `"}`)
	}
	b.WriteString(`]}`)
	expectError(t, ev.do(t, u, "POST", "/internal/lookup", b.String()), 400, "addresses: at most 10000 per lookup (got 10001)")
	at := strings.Replace(b.String(), `{"chainType":"evm","address":"`+evmAddr(0)+`"},`, "", 1)
	if r := ev.do(t, u, "POST", "/internal/lookup", at); r.Status != 200 {
		t.Fatalf("10,000 addresses: %d %s", r.Status, r.Body)
	}
}

// Two replicas over one database: a lookup index built by one is never used after the other
// changed the user's labels or entities.
func TestLookupIndexAcrossReplicas(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	u := newUser()
	look := `{"addresses":[{"chainType":"evm","address":"` + evmAddr(1) + `"},{"chainType":"evm","address":"` + evmAddr(2) + `"}]}`
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, `{"labels":{},"entities":{}}`)

	one := `[{"name":"one","note":"","address":"` + evmAddr(1) + `","chainType":"evm"}]`
	expect(t, b.do(t, u, "POST", "/user/labels", one), 200, one)
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, `{"labels":{"evm:`+evmAddr(1)+`":{"name":"one","note":""}},"entities":{}}`)
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, `{"labels":{"evm:`+evmAddr(1)+`":{"name":"one","note":""}},"entities":{}}`)

	e := decode[[]app.Entity](t, b.do(t, u, "POST", "/user/entities", `{"name":"desk","addresses":{"evm":["`+evmAddr(2)+`"]}}`))[0]
	withDesk := func(name string, addrs ...int) string {
		var parts []string
		for _, n := range addrs {
			parts = append(parts, `"evm:`+evmAddr(n)+`":[{"id":"`+e.ID+`","name":"`+name+`","note":""}]`)
		}
		return `{"labels":{"evm:` + evmAddr(1) + `":{"name":"one","note":""}},"entities":{` + strings.Join(parts, ",") + `}}`
	}
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, withDesk("desk", 2))
	if r := b.do(t, u, "PUT", "/user/entities/"+e.ID, `{"name":"renamed","addresses":{"evm":["`+evmAddr(2)+`"]}}`); r.Status != 200 {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, withDesk("renamed", 2))
	if r := b.do(t, u, "PUT", "/user/entities/only_add/"+e.ID, `{"addresses":{"evm":["`+evmAddr(1)+`"]}}`); r.Status != 200 {
		t.Fatalf("only_add: %d %s", r.Status, r.Body)
	}
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, withDesk("renamed", 1, 2))
	expect(t, b.do(t, u, "DELETE", "/user/labels/"+evmAddr(1)+":evm", nil), 200, `{"deleted":1}`)
	expect(t, b.do(t, u, "DELETE", "/user/entities/"+e.ID, nil), 200, `{"deleted":1}`)
	expect(t, a.do(t, u, "POST", "/internal/lookup", look), 200, `{"labels":{},"entities":{}}`)
}
