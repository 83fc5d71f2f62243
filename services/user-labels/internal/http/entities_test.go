package http

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// entityJSON renders the expected UserEntity for e's id and times with the given fields.
func entityJSON(e app.Entity, name, note string, shareable bool, addresses string) string {
	s := fmt.Sprintf(`{"id":%q,"name":%q,"note":%q,"type":"user","shareable":%t,"linkShareable":%t,"service":null,"createdAt":%q,"updatedAt":%q`,
		e.ID, name, note, shareable, shareable, e.CreatedAt.Format(time.RFC3339Nano), e.UpdatedAt.Format(time.RFC3339Nano))
	if addresses != "" {
		s += `,"addresses":` + addresses
	}
	return s + "}"
}

func TestEntitiesLifecycle(t *testing.T) {
	ev := newEnv(t)
	u := newUser()

	expect(t, ev.do(t, u, "GET", "/user/entities", nil), 200, `[]`)

	// One object: answered as an array of one, addresses canonical, sorted and deduplicated.
	r := ev.do(t, u, "POST", "/user/entities", `{"name":"Desk","note":"OTC desk","addresses":{
		"evm":["0x00000000000000000000000000000000000000AB","`+evmAddr(1)+`","0x00000000000000000000000000000000000000ab"],
		"bitcoin":["`+btcUpper+`"],"tron":["`+tronHex+`"]}}`)
	created := decode[[]app.Entity](t, r)
	if len(created) != 1 || !created[0].CreatedAt.Equal(created[0].UpdatedAt) || created[0].CreatedAt.Location() != time.UTC {
		t.Fatalf("created %+v", created)
	}
	desk := created[0]
	deskAddrs := `{"bitcoin":["` + btcLower + `"],"evm":["` + evmAddr(1) + `","0x00000000000000000000000000000000000000ab"],"tron":["` + tronAddr + `"]}`
	expect(t, r, 200, "["+entityJSON(desk, "Desk", "OTC desk", false, deskAddrs)+"]")
	if !strings.Contains(r.Body, `"createdAt":"`) || !strings.HasSuffix(desk.CreatedAt.Format(time.RFC3339Nano), "Z") {
		t.Fatalf("times are not RFC 3339 UTC: %s", r.Body)
	}

	// An array: name, note and addresses may be empty; shareable as given.
	r = ev.do(t, u, "POST", "/user/entities", `[{"addresses":{}},{"name":"Fund","addresses":{"solana":["`+solAddr+`"]},"shareable":true}]`)
	two := decode[[]app.Entity](t, r)
	if len(two) != 2 {
		t.Fatalf("created %s", r.Body)
	}
	empty, fund := two[0], two[1]
	expect(t, r, 200, "["+entityJSON(empty, "", "", false, `{}`)+","+entityJSON(fund, "Fund", "", true, `{"solana":["`+solAddr+`"]}`)+"]")

	// Listed oldest first; addresses only when asked for.
	expect(t, ev.do(t, u, "GET", "/user/entities", nil), 200,
		"["+entityJSON(desk, "Desk", "OTC desk", false, "")+","+entityJSON(empty, "", "", false, "")+","+entityJSON(fund, "Fund", "", true, "")+"]")
	expect(t, ev.do(t, u, "GET", "/user/entities?includeAddresses=false", nil), 200,
		"["+entityJSON(desk, "Desk", "OTC desk", false, "")+","+entityJSON(empty, "", "", false, "")+","+entityJSON(fund, "Fund", "", true, "")+"]")
	expect(t, ev.do(t, u, "GET", "/user/entities?includeAddresses=true", nil), 200,
		"["+entityJSON(desk, "Desk", "OTC desk", false, deskAddrs)+","+entityJSON(empty, "", "", false, `{}`)+","+entityJSON(fund, "Fund", "", true, `{"solana":["`+solAddr+`"]}`)+"]")
	expectError(t, ev.do(t, u, "GET", "/user/entities?includeAddresses=yes", nil), 400, `includeAddresses: must be true or false, got "yes"`)

	// One entity, always with addresses (an empty set is {}).
	expect(t, ev.do(t, u, "GET", "/user/entities/"+desk.ID, nil), 200, entityJSON(desk, "Desk", "OTC desk", false, deskAddrs))
	expect(t, ev.do(t, u, "GET", "/user/entities/"+strings.ToUpper(desk.ID), nil), 200, entityJSON(desk, "Desk", "OTC desk", false, deskAddrs))
	expect(t, ev.do(t, u, "GET", "/user/entities/"+empty.ID, nil), 200, entityJSON(empty, "", "", false, `{}`))

	// PUT overwrites name, note and the whole address set; shareable only when given.
	r = ev.do(t, u, "PUT", "/user/entities/"+desk.ID, `{"name":"Desk 2","addresses":{"dogecoin":["`+dogeAddr+`"],"ton":["`+tonRaw+`"]}}`)
	put := decode[app.Entity](t, r)
	if !put.CreatedAt.Equal(desk.CreatedAt) || !put.UpdatedAt.After(desk.UpdatedAt) {
		t.Fatalf("times after PUT: %+v (was %+v)", put, desk)
	}
	deskAddrs = `{"dogecoin":["` + dogeAddr + `"],"ton":["` + tonRaw + `"]}`
	expect(t, r, 200, entityJSON(put, "Desk 2", "", false, deskAddrs))
	r = ev.do(t, u, "PUT", "/user/entities/"+desk.ID, `{"name":"Desk 3","note":"n","addresses":{"dogecoin":["`+dogeAddr+`"]},"shareable":true}`)
	put = decode[app.Entity](t, r)
	expect(t, r, 200, entityJSON(put, "Desk 3", "n", true, `{"dogecoin":["`+dogeAddr+`"]}`))
	r = ev.do(t, u, "PUT", "/user/entities/"+desk.ID, `{"name":"Desk 3","note":"n","addresses":{"dogecoin":["`+dogeAddr+`"]}}`)
	put = decode[app.Entity](t, r)
	expect(t, r, 200, entityJSON(put, "Desk 3", "n", true, `{"dogecoin":["`+dogeAddr+`"]}`))

	// only_add adds; addresses already there are not added twice.
	r = ev.do(t, u, "PUT", "/user/entities/only_add/"+desk.ID, `{"addresses":{"dogecoin":["`+dogeAddr+`"],"evm":["`+evmAddr(3)+`"]}}`)
	added := decode[app.Entity](t, r)
	expect(t, r, 200, entityJSON(added, "Desk 3", "n", true, `{"dogecoin":["`+dogeAddr+`"],"evm":["`+evmAddr(3)+`"]}`))
	expect(t, ev.do(t, u, "GET", "/user/entities/"+desk.ID, nil), 200, entityJSON(added, "Desk 3", "n", true, `{"dogecoin":["`+dogeAddr+`"],"evm":["`+evmAddr(3)+`"]}`))

	// DELETE: 1, then 404.
	expect(t, ev.do(t, u, "DELETE", "/user/entities/"+desk.ID, nil), 200, `{"deleted":1}`)
	expectError(t, ev.do(t, u, "GET", "/user/entities/"+desk.ID, nil), 404, `no user entity "`+desk.ID+`"`)
	expectError(t, ev.do(t, u, "DELETE", "/user/entities/"+desk.ID, nil), 404, `no user entity "`+desk.ID+`"`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/"+desk.ID, `{"addresses":{}}`), 404, `no user entity "`+desk.ID+`"`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+desk.ID, `{"addresses":{}}`), 404, `no user entity "`+desk.ID+`"`)

	// Ids that are not UUIDs are not user entities.
	expectError(t, ev.do(t, u, "GET", "/user/entities/binance", nil), 404, `no user entity "binance"`)
	expectError(t, ev.do(t, u, "GET", "/user/entities/only_add", nil), 404, `no user entity "only_add"`)
	expectError(t, ev.do(t, u, "DELETE", "/user/entities/not-a-uuid", nil), 404, `no user entity "not-a-uuid"`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/not-a-uuid", `{"addresses":{}}`), 404, `no user entity "not-a-uuid"`)
}

func TestEntityValidation(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	cases := []struct{ name, body, err string }{
		{"bad address in an array item", `[{"addresses":{}},{"addresses":{"evm":["` + evmAddr(1) + `","0x1"]}}]`,
			`entities[1].addresses.evm[1]: invalid evm address "0x1": want 0x followed by 40 hex digits`},
		{"bad address in a single object", `{"addresses":{"bitcoin":["` + tronAddr + `"]}}`,
			`addresses.bitcoin[0]: invalid bitcoin address "` + tronAddr + `": base58 version byte is not bitcoin mainnet P2PKH (0x00, 1...) or P2SH (0x05, 3...)`},
		{"unknown chain type", `{"addresses":{"ethereum":["` + evmAddr(1) + `"]}}`,
			`addresses: unknown chain type "ethereum" (want one of evm, bitcoin, tron, solana, dogecoin, ton)`},
		{"addresses missing", `{"name":"x"}`, `addresses: required (an object {chainType: [address, ...]})`},
		{"addresses missing in an item", `[{"addresses":{}},{"name":"x","addresses":null}]`, `entities[1].addresses: required (an object {chainType: [address, ...]})`},
		{"a chain type's list null", `{"addresses":{"evm":null}}`, `addresses.evm: must be an array of addresses, not null`},
		{"addresses wrong type", `{"addresses":["` + evmAddr(1) + `"]}`, `body: field "addresses" must be an object {chainType: [address, ...]}, not an array`},
		{"unknown field", `[{"addresses":{},"type":"cex"}]`, `entities[0]: unknown field "type"`},
		{"shareable wrong type", `{"addresses":{},"shareable":"yes"}`, `body: field "shareable" must be a boolean, not a string`},
		{"empty array", `[]`, "body: want an entity or an array of at least one entity"},
		{"a string", `"x"`, "body: want an entity object or an array of entity objects"},
		{"null", `null`, "body: want an entity object or an array of entity objects"},
		{"array of non-objects", `[1]`, "entities[0]: want a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, ev.do(t, u, "POST", "/user/entities", c.body), 400, c.err)
		})
	}
	// A batch with one bad item creates nothing.
	expectError(t, ev.do(t, u, "POST", "/user/entities", `[{"name":"ok","addresses":{}},{"name":"`+strings.Repeat("a", 257)+`","addresses":{}}]`),
		400, "entities[1].name: at most 256 characters (got 257)")
	expect(t, ev.do(t, u, "GET", "/user/entities", nil), 200, `[]`)

	// only_add bodies.
	e := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", `{"addresses":{}}`))[0]
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+e.ID, `{}`), 400, `addresses: required (an object {chainType: [address, ...]})`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+e.ID, `{"addresses":{},"name":"x"}`), 400, `body: unknown field "name"`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+e.ID, `{"addresses":{"evm":["nope"]}}`), 400,
		`addresses.evm[0]: invalid evm address "nope": want 0x followed by 40 hex digits`)
}

func TestEntityLimits(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	name256, name257 := strings.Repeat("名", 256), strings.Repeat("名", 257)
	note1024, note1025 := strings.Repeat("ü", 1024), strings.Repeat("ü", 1025)

	// Name and note, on POST and PUT.
	r := ev.do(t, u, "POST", "/user/entities", fmt.Sprintf(`{"name":%q,"note":%q,"addresses":{}}`, name256, note1024))
	e := decode[[]app.Entity](t, r)[0]
	expect(t, r, 200, "["+entityJSON(e, name256, note1024, false, `{}`)+"]")
	expectError(t, ev.do(t, u, "POST", "/user/entities", fmt.Sprintf(`{"name":%q,"addresses":{}}`, name257)), 400, "name: at most 256 characters (got 257)")
	expectError(t, ev.do(t, u, "POST", "/user/entities", fmt.Sprintf(`{"note":%q,"addresses":{}}`, note1025)), 400, "note: at most 1024 characters (got 1025)")
	expectError(t, ev.do(t, u, "PUT", "/user/entities/"+e.ID, fmt.Sprintf(`{"name":%q,"addresses":{}}`, name257)), 400, "name: at most 256 characters (got 257)")
	expectError(t, ev.do(t, u, "PUT", "/user/entities/"+e.ID, fmt.Sprintf(`{"note":%q,"addresses":{}}`, note1025)), 400, "note: at most 1024 characters (got 1025)")

	// 100 addresses in all chain types together; 101 is refused. Duplicates count once.
	hundred := `{"evm":` + jsonList(evmAddrs(0, 99)) + `,"bitcoin":["` + btcAddr + `"]}`
	r = ev.do(t, u, "POST", "/user/entities", `{"addresses":`+hundred+`}`)
	full := decode[[]app.Entity](t, r)[0]
	if n := len(full.Addresses["evm"]) + len(full.Addresses["bitcoin"]); r.Status != 200 || n != 100 {
		t.Fatalf("100 addresses: %d, %d stored", r.Status, n)
	}
	withDup := `{"evm":` + jsonList(append(evmAddrs(0, 100), evmAddr(0))) + `}`
	if r := ev.do(t, u, "POST", "/user/entities", `{"addresses":`+withDup+`}`); r.Status != 200 {
		t.Fatalf("100 distinct addresses and a duplicate: %d %s", r.Status, r.Body)
	}
	over := `{"evm":` + jsonList(evmAddrs(0, 100)) + `,"bitcoin":["` + btcAddr + `"]}`
	expectError(t, ev.do(t, u, "POST", "/user/entities", `{"addresses":`+over+`}`), 400, "addresses: at most 100 addresses per entity (got 101 distinct)")
	expectError(t, ev.do(t, u, "POST", "/user/entities", `[{"addresses":{}},{"addresses":`+over+`}]`), 400, "entities[1].addresses: at most 100 addresses per entity (got 101 distinct)")
	expectError(t, ev.do(t, u, "PUT", "/user/entities/"+e.ID, `{"addresses":`+over+`}`), 400, "addresses: at most 100 addresses per entity (got 101 distinct)")
	if r := ev.do(t, u, "PUT", "/user/entities/"+e.ID, `{"addresses":`+hundred+`}`); r.Status != 200 {
		t.Fatalf("PUT 100 addresses: %d %s", r.Status, r.Body)
	}

	// only_add up to the limit, counting what the entity holds.
	r = ev.do(t, u, "POST", "/user/entities", `{"addresses":{"evm":`+jsonList(evmAddrs(0, 99))+`}}`)
	ninetyNine := decode[[]app.Entity](t, r)[0]
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+ninetyNine.ID, `{"addresses":{"evm":`+jsonList(evmAddrs(99, 2))+`}}`),
		400, "addresses: at most 100 addresses per entity; it has 99 and 2 more were given")
	if r := ev.do(t, u, "PUT", "/user/entities/only_add/"+ninetyNine.ID, `{"addresses":{"evm":`+jsonList(evmAddrs(98, 2))+`}}`); r.Status != 200 {
		t.Fatalf("only_add of one new and one held address at 99: %d %s", r.Status, r.Body)
	}
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/"+ninetyNine.ID, `{"addresses":{"tron":["`+tronAddr+`"]}}`),
		400, "addresses: at most 100 addresses per entity; it has 100 and 1 more were given")
	// Adding addresses it already holds is fine at the limit.
	if r := ev.do(t, u, "PUT", "/user/entities/only_add/"+ninetyNine.ID, `{"addresses":{"evm":["`+evmAddr(0)+`"]}}`); r.Status != 200 {
		t.Fatalf("only_add of a held address at 100: %d %s", r.Status, r.Body)
	}
	got := decode[app.Entity](t, ev.do(t, u, "GET", "/user/entities/"+ninetyNine.ID, nil))
	if len(got.Addresses["evm"]) != 100 || len(got.Addresses) != 1 {
		t.Fatalf("after only_add: %v", got.Addresses)
	}
}

// 50 parallel only_add calls of 3 new addresses each on an empty entity: the row lock serialises
// them, so exactly 33 succeed (99 addresses) and the other 17 are refused with the limit.
func TestConcurrentOnlyAddNeverPassesTheLimit(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	e := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", `{"addresses":{}}`))[0]

	const calls, per = 50, 3
	var wg sync.WaitGroup
	results := make([]resp, calls)
	for i := range calls {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = ev.do(t, u, "PUT", "/user/entities/only_add/"+e.ID,
				`{"addresses":{"evm":`+jsonList(evmAddrs(1000+i*per, per))+`}}`)
		}(i)
	}
	wg.Wait()
	ok := 0
	for i, r := range results {
		switch r.Status {
		case 200:
			ok++
		case 400:
			if !strings.Contains(r.Body, "at most 100 addresses per entity") {
				t.Fatalf("call %d refused with %s", i, r.Body)
			}
		default:
			t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
		}
	}
	got := decode[app.Entity](t, ev.do(t, u, "GET", "/user/entities/"+e.ID, nil))
	if n := len(got.Addresses["evm"]); ok != 33 || n != ok*per {
		t.Fatalf("%d calls succeeded and the entity holds %d addresses; want 33 and 99", ok, n)
	}

	// The same against an operator entity's additions.
	for i := range results {
		results[i] = resp{}
	}
	for i := range calls {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = ev.do(t, u, "PUT", "/user/entities/only_add/binance",
				`{"addresses":{"evm":`+jsonList(evmAddrs(5000+i*per, per))+`}}`)
		}(i)
	}
	wg.Wait()
	ok = 0
	for _, r := range results {
		if r.Status == 200 {
			ok++
		}
	}
	add := decode[map[string]map[string][]string](t, ev.do(t, u, "GET", "/internal/additions/binance", nil))
	if n := len(add["addresses"]["evm"]); ok != 33 || n != 99 {
		t.Fatalf("operator additions: %d calls succeeded, %d addresses; want 33 and 99", ok, n)
	}
}

func TestOnlyAddToOperatorEntity(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	expect(t, ev.do(t, u, "GET", "/internal/additions/tornado-cash", nil), 200, `{"addresses":{}}`)
	r := ev.do(t, u, "PUT", "/user/entities/only_add/tornado-cash", `{"addresses":{"evm":["0x00000000000000000000000000000000000000AB"],"bitcoin":["`+btcAddr+`"]}}`)
	expect(t, r, 200, `{"id":"tornado-cash","addresses":{"bitcoin":["`+btcAddr+`"],"evm":["0x00000000000000000000000000000000000000ab"]}}`)
	r = ev.do(t, u, "PUT", "/user/entities/only_add/tornado-cash", `{"addresses":{"evm":["`+evmAddr(0)+`","0x00000000000000000000000000000000000000ab"]}}`)
	want := `{"bitcoin":["` + btcAddr + `"],"evm":["` + evmAddr(0) + `","0x00000000000000000000000000000000000000ab"]}`
	expect(t, r, 200, `{"id":"tornado-cash","addresses":`+want+`}`)
	expect(t, ev.do(t, u, "GET", "/internal/additions/tornado-cash", nil), 200, `{"addresses":`+want+`}`)

	// Limit.
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/tornado-cash", `{"addresses":{"evm":`+jsonList(evmAddrs(10, 98))+`}}`),
		400, "addresses: at most 100 addresses per entity; it has 3 and 98 more were given")
	// Not a slug and not a UUID.
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/Binance", `{"addresses":{}}`), 404, `no user entity "Binance"`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/-x", `{"addresses":{}}`), 404, `no user entity "-x"`)
	expectError(t, ev.do(t, u, "GET", "/internal/additions/Not%20a%20slug", nil), 404, `"Not a slug" is not an operator entity id`)
	// Another user sees none of them.
	expect(t, ev.do(t, newUser(), "GET", "/internal/additions/tornado-cash", nil), 200, `{"addresses":{}}`)

	// A lookup asking for additions carries them for every operator entity (none: absent).
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/kraken", `{"addresses":{"evm":["`+evmAddr(5)+`"]}}`), 200,
		`{"id":"kraken","addresses":{"evm":["`+evmAddr(5)+`"]}}`)
	lookup := `{"addresses":[{"chainType":"evm","address":"` + evmAddr(5) + `"}]}`
	expect(t, ev.do(t, u, "POST", "/internal/lookup?additions=true", lookup), 200, `{"labels":{},"entities":{},
		"additions":{"tornado-cash":`+want+`,"kraken":{"evm":["`+evmAddr(5)+`"]}}}`)
	expect(t, ev.do(t, u, "POST", "/internal/lookup", lookup), 200, `{"labels":{},"entities":{}}`)
	expect(t, ev.do(t, newUser(), "POST", "/internal/lookup?additions=1", lookup), 200, `{"labels":{},"entities":{}}`)
	expectError(t, ev.do(t, u, "POST", "/internal/lookup?additions=maybe", lookup), 400, `additions: must be true or false, got "maybe"`)
}

// TestInternalEntitiesBatch: POST /internal/entities answers the caller's entities among the ids
// in one call, in the order asked, each once; ids of no entity of the caller (someone else's,
// unknown, not a uuid) are left out, and more than app.MaxEntityBatch distinct ids is a 400.
func TestInternalEntitiesBatch(t *testing.T) {
	ev := newEnv(t)
	u, other := newUser(), newUser()
	es := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities",
		`[{"name":"A","addresses":{"evm":["`+evmAddr(2)+`","`+evmAddr(1)+`"]}},{"name":"B","addresses":{}}]`))
	theirs := decode[[]app.Entity](t, ev.do(t, other, "POST", "/user/entities", `{"name":"T","addresses":{}}`))
	a, b := es[0], es[1]
	unknown := "8f0e2c55-1111-4222-8333-944455556666"

	body := fmt.Sprintf(`{"ids":[%q,%q,%q,%q,"binance",%q]}`, b.ID, unknown, strings.ToUpper(a.ID), theirs[0].ID, b.ID)
	expect(t, ev.do(t, u, "POST", "/internal/entities", body), 200,
		`{"entities":[`+entityJSON(b, "B", "", false, `{}`)+","+
			entityJSON(a, "A", "", false, `{"evm":["`+evmAddr(1)+`","`+evmAddr(2)+`"]}`)+`]}`)
	expect(t, ev.do(t, u, "POST", "/internal/entities", `{"ids":[]}`), 200, `{"entities":[]}`)
	expect(t, ev.do(t, other, "POST", "/internal/entities", body), 200,
		`{"entities":[`+entityJSON(theirs[0], "T", "", false, `{}`)+`]}`)

	ids := make([]string, app.MaxEntityBatch+1)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"%08x-0000-4000-8000-000000000000"`, i)
	}
	expectError(t, ev.do(t, u, "POST", "/internal/entities", `{"ids":[`+strings.Join(ids, ",")+`]}`), 400,
		fmt.Sprintf("ids: at most %d entity ids, got %d", app.MaxEntityBatch, app.MaxEntityBatch+1))
}

// TestInternalAdditionsBatch: POST /internal/additions answers the caller's additions to the
// operator entities among the ids in one call; entities with none, ids that are not operator
// entity ids and other callers' additions are absent; more than app.MaxEntityBatch distinct ids
// is a 400.
func TestInternalAdditionsBatch(t *testing.T) {
	ev := newEnv(t)
	u, other := newUser(), newUser()
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["`+evmAddr(2)+`","`+evmAddr(1)+`"]}}`), 200,
		`{"id":"binance","addresses":{"evm":["`+evmAddr(1)+`","`+evmAddr(2)+`"]}}`)
	ev.do(t, u, "PUT", "/user/entities/only_add/kraken", `{"addresses":{"evm":["`+evmAddr(3)+`"]}}`)
	ev.do(t, other, "PUT", "/user/entities/only_add/coinbase", `{"addresses":{"evm":["`+evmAddr(4)+`"]}}`)

	body := `{"ids":["binance","coinbase","Not a slug","8f0e2c55-1111-4222-8333-944455556666","binance","nobody"]}`
	expect(t, ev.do(t, u, "POST", "/internal/additions", body), 200,
		`{"additions":{"binance":{"evm":["`+evmAddr(1)+`","`+evmAddr(2)+`"]}}}`)
	expect(t, ev.do(t, other, "POST", "/internal/additions", body), 200, `{"additions":{"coinbase":{"evm":["`+evmAddr(4)+`"]}}}`)
	expect(t, ev.do(t, u, "POST", "/internal/additions", `{"ids":[]}`), 200, `{"additions":{}}`)

	ids := make([]string, app.MaxEntityBatch+1)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"e%d"`, i)
	}
	expectError(t, ev.do(t, u, "POST", "/internal/additions", `{"ids":[`+strings.Join(ids, ",")+`]}`), 400,
		fmt.Sprintf("ids: at most %d entity ids, got %d", app.MaxEntityBatch, app.MaxEntityBatch+1))
}
