package http

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"google.golang.org/protobuf/proto"
)

// createdMethod is a POST /user/alert_methods answer.
type createdMethod struct {
	ID        int64     `json:"id"`
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"createdAt"`
}

// newMethod creates a webhook method for user and returns it.
func (ev *env) newMethod(t *testing.T, user, url string) createdMethod {
	t.Helper()
	r := ev.do(t, user, "POST", "/user/alert_methods", `{"url":"`+url+`","description":"desk hook"}`)
	m := decode[createdMethod](t, r)
	expect(t, r, 200, fmt.Sprintf(`{"id":%d,"kind":"webhook","url":%q,"description":"desk hook","createdAt":%q,"secret":%q}`,
		m.ID, url, m.CreatedAt.Format(time.RFC3339Nano), m.Secret))
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(m.Secret) || m.CreatedAt.Location() != time.UTC {
		t.Fatalf("method %+v", m)
	}
	return m
}

// newAlert creates an alert from body and returns its id.
func (ev *env) newAlert(t *testing.T, user, body string) int64 {
	t.Helper()
	r := ev.do(t, user, "POST", "/user/alerts", body)
	if r.Status != 200 {
		t.Fatalf("create alert: %d %s", r.Status, r.Body)
	}
	var id int64
	if err := json.Unmarshal([]byte(r.Body), &id); err != nil {
		t.Fatalf("create alert answered %s, not a bare integer", r.Body)
	}
	return id
}

// createdAt reads alert id's creation time through GET /user/alerts/{id}.
func (ev *env) createdAt(t *testing.T, user string, id int64) string {
	t.Helper()
	a := decode[struct {
		CreatedAt time.Time `json:"createdAt"`
	}](t, ev.do(t, user, "GET", fmt.Sprintf("/user/alerts/%d", id), nil))
	return a.CreatedAt.Format(time.RFC3339Nano)
}

const wallet = "0x28c6c06298d514db089934071355e5743bf21d60"

func TestAlertsLifecycle(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	expect(t, ev.do(t, u, "GET", "/user/alerts", nil), 200, `[]`)
	expect(t, ev.do(t, u, "GET", "/user/alert_methods", nil), 200, `[]`)

	m := ev.newMethod(t, u, "https://hooks.example.com/chainintel?team=1")
	expect(t, ev.do(t, u, "GET", "/user/alert_methods", nil), 200, fmt.Sprintf(
		`[{"id":%d,"kind":"webhook","url":"https://hooks.example.com/chainintel?team=1","description":"desk hook","createdAt":%q}]`,
		m.ID, m.CreatedAt.Format(time.RFC3339Nano)))

	// The least body: base null, everything else absent. Lists are [] and bounds null.
	id := ev.newAlert(t, u, fmt.Sprintf(`{"name":"hot wallet","enabled":true,"base":null,"from":["%s"],"alertMethodId":%d}`, wallet, m.ID))
	at := ev.createdAt(t, u, id)
	least := fmt.Sprintf(`{"id":%d,"name":"hot wallet","enabled":true,"base":null,"from":["%s"],"to":[],"tokens":[],"chains":null,
		"usdGte":null,"usdLte":null,"valueGte":null,"valueLte":null,"description":null,"alertMethodId":%d,"createdAt":%q,
		"shareable":false,"ownerUID":%q,"activelyFeatured":false}`, id, wallet, m.ID, at, u)
	expect(t, ev.do(t, u, "GET", fmt.Sprintf("/user/alerts/%d", id), nil), 200, least)

	// Every field: lists split on commas, trimmed and distinct; an exclusion kept as !value.
	full := fmt.Sprintf(`{"name":"desk","enabled":false,"base":["binance"],"from":["type:cex, ! deposit:binance","type:cex"],
		"to":["!0x0000000000000000000000000000000000000001"],"tokens":["usd-coin","0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"],
		"chains":["ethereum","base"],"usdGte":1000.5,"usdLte":2e6,"valueGte":0,"valueLte":null,"description":"big flows",
		"alertMethodId":%d}`, m.ID)
	id2 := ev.newAlert(t, u, full)
	if id2 <= id {
		t.Fatalf("ids %d then %d", id, id2)
	}
	at2 := ev.createdAt(t, u, id2)
	fullParam := fmt.Sprintf(`{"id":%d,"name":"desk","enabled":false,"base":["binance"],"from":["type:cex","!deposit:binance"],
		"to":["!0x0000000000000000000000000000000000000001"],"tokens":["usd-coin","0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"],
		"chains":["ethereum","base"],"usdGte":1000.5,"usdLte":2000000,"valueGte":0,"valueLte":null,"description":"big flows",
		"alertMethodId":%d,"createdAt":%q,"shareable":false,"ownerUID":%q,"activelyFeatured":false}`, id2, m.ID, at2, u)
	r := ev.do(t, u, "GET", "/user/alerts", nil)
	expect(t, r, 200, "["+least+","+fullParam+"]")
	if r.Header.Get(httpx.HeaderRows) != "2" {
		t.Fatalf("rows header %q", r.Header.Get(httpx.HeaderRows))
	}

	// PUT replaces the whole alert (absent fields become empty) and answers 204 without a body.
	expectNoContent(t, ev.do(t, u, "PUT", fmt.Sprintf("/user/alerts/%d", id), fmt.Sprintf(`{"name":"renamed","enabled":false,"base":[],"tokens":["ethereum"],"chains":[],"alertMethodId":%d}`, m.ID)))
	expect(t, ev.do(t, u, "GET", fmt.Sprintf("/user/alerts/%d", id), nil), 200, fmt.Sprintf(`{"id":%d,"name":"renamed","enabled":false,"base":[],"from":[],"to":[],
		"tokens":["ethereum"],"chains":[],"usdGte":null,"usdLte":null,"valueGte":null,"valueLte":null,"description":null,"alertMethodId":%d,
		"createdAt":%q,"shareable":false,"ownerUID":%q,"activelyFeatured":false}`, id, m.ID, at, u))

	expectNoContent(t, ev.do(t, u, "DELETE", fmt.Sprintf("/user/alerts/%d", id), nil))
	msg := fmt.Sprintf("no alert %d", id)
	expectError(t, ev.do(t, u, "GET", fmt.Sprintf("/user/alerts/%d", id), nil), 404, msg)
	expectError(t, ev.do(t, u, "DELETE", fmt.Sprintf("/user/alerts/%d", id), nil), 404, msg)
	expectError(t, ev.do(t, u, "PUT", fmt.Sprintf("/user/alerts/%d", id), fmt.Sprintf(`{"name":"x","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID)), 404, msg)
	expect(t, ev.do(t, u, "GET", "/user/alerts", nil), 200, "["+fullParam+"]")

	// Each write published its change, in order; a method's creation publishes none.
	want := []*eventsv1.UserChange{
		{UserId: u, Kind: eventsv1.UserChange_KIND_ALERT, Op: eventsv1.UserChange_OP_UPSERT, AlertId: id},
		{UserId: u, Kind: eventsv1.UserChange_KIND_ALERT, Op: eventsv1.UserChange_OP_UPSERT, AlertId: id2},
		{UserId: u, Kind: eventsv1.UserChange_KIND_ALERT, Op: eventsv1.UserChange_OP_UPSERT, AlertId: id},
		{UserId: u, Kind: eventsv1.UserChange_KIND_ALERT, Op: eventsv1.UserChange_OP_DELETE, AlertId: id},
	}
	got := ev.outboxChanges(t, u)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("event %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// Two callers of one org: neither sees, changes, deletes or uses the other's alerts and methods,
// each answered as if they did not exist.
func TestAlertsIsolation(t *testing.T) {
	ev := newEnv(t)
	u, other := newUser(), newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	id := ev.newAlert(t, u, fmt.Sprintf(`{"name":"mine","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID))
	path := fmt.Sprintf("/user/alerts/%d", id)
	body := fmt.Sprintf(`{"name":"theirs","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID)

	expect(t, ev.do(t, other, "GET", "/user/alerts", nil), 200, `[]`)
	expect(t, ev.do(t, other, "GET", "/user/alert_methods", nil), 200, `[]`)
	expectError(t, ev.do(t, other, "GET", path, nil), 404, fmt.Sprintf("no alert %d", id))
	expectError(t, ev.do(t, other, "DELETE", path, nil), 404, fmt.Sprintf("no alert %d", id))
	// The other caller's PUT names u's method, which is not theirs: refused before the alert is
	// even looked for.
	expectError(t, ev.do(t, other, "PUT", path, body), 400,
		fmt.Sprintf("alertMethodId: %d is not one of your alert methods (GET /user/alert_methods lists them)", m.ID))
	om := ev.newMethod(t, other, "https://b.example.com/hook")
	expectError(t, ev.do(t, other, "PUT", path, fmt.Sprintf(`{"name":"theirs","enabled":true,"base":["binance"],"alertMethodId":%d}`, om.ID)),
		404, fmt.Sprintf("no alert %d", id))
	expectError(t, ev.do(t, other, "POST", "/user/alerts", body), 400,
		fmt.Sprintf("alertMethodId: %d is not one of your alert methods (GET /user/alert_methods lists them)", m.ID))
	expectError(t, ev.do(t, other, "DELETE", fmt.Sprintf("/user/alert_methods/%d", m.ID), nil), 404, fmt.Sprintf("no alert method %d", m.ID))

	// u's alert is untouched; no event was written for the other caller.
	r := ev.do(t, u, "GET", path, nil)
	if r.Status != 200 || !strings.Contains(r.Body, `"name":"mine"`) {
		t.Fatalf("after the other caller: %d %s", r.Status, r.Body)
	}
	if evs := ev.outboxChanges(t, other); len(evs) != 0 {
		t.Fatalf("events for the other caller: %v", evs)
	}
	// Without an identity: 401.
	expectError(t, ev.do(t, "", "GET", "/user/alerts", nil), 401, "error validating API key")
	expectError(t, ev.do(t, "", "POST", "/user/alert_methods", `{"url":"https://x.example"}`), 401, "error validating API key")
}

func TestAlertValidation(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	body := func(fields string) string {
		return fmt.Sprintf(`{"name":"n","enabled":true,"alertMethodId":%d,%s}`, m.ID, fields)
	}
	over := make([]string, 101)
	for i := range over {
		over[i] = fmt.Sprintf("0x%040x", i+1)
	}
	overList, _ := json.Marshal(over)
	cases := []struct{ name, body, err string }{
		{"not an object", `[]`, "body: want a JSON object"},
		{"unknown field", body(`"base":null,"from":["binance"],"flow":"in"`), `body: unknown field "flow"`},
		{"name missing", fmt.Sprintf(`{"enabled":true,"base":null,"alertMethodId":%d}`, m.ID), "name: required"},
		{"enabled missing", fmt.Sprintf(`{"name":"n","base":null,"alertMethodId":%d}`, m.ID), "enabled: required (true or false)"},
		{"base missing", body(`"from":["binance"]`), "base: required (an array of addresses or entity ids, or null)"},
		{"method missing", `{"name":"n","enabled":true,"base":["binance"]}`, "alertMethodId: required (the id of one of your alert methods)"},
		{"method not an integer", `{"name":"n","enabled":true,"base":["binance"],"alertMethodId":1.5}`, `body: field "alertMethodId" must be an integer, not a number`},
		{"unknown method", `{"name":"n","enabled":true,"base":["binance"],"alertMethodId":999999999}`,
			"alertMethodId: 999999999 is not one of your alert methods (GET /user/alert_methods lists them)"},
		{"empty name", `{"name":"","enabled":true,"base":["binance"],"alertMethodId":1}`, "name: must not be empty"},
		{"blank name", `{"name":" \t ","enabled":true,"base":["binance"],"alertMethodId":1}`, "name: must not be blank"},
		{"from a string", body(`"base":null,"from":"binance"`), `body: field "from" must be an array of strings, not a string`},
		{"bad address", body(`"base":null,"from":["0x12"]`), `from: invalid evm address "0x12": want 0x followed by 40 hex digits`},
		{"capital entity", body(`"base":null,"to":["Binance"]`),
			`to: "Binance" is not an address, an entity id, type:<entityType> or deposit:<entityId> (entity ids are lower case: letters, digits, '.', '_' and '-'); did you mean "binance"?`},
		{"exclusion in base", body(`"base":["!binance"]`), "base: a leading ! (exclusion) is only allowed in from and to"},
		{"type in base", body(`"base":["type:cex"]`), "base: type: references are only allowed in from and to"},
		{"bad type", body(`"base":null,"from":["type:C E X"]`), `from: type:"C E X" is not an entity type such as type:cex`},
		{"bad token", body(`"base":["binance"],"tokens":["USDC"]`), `tokens: "USDC" is neither a token contract address nor a pricing id`},
		{"unknown chain", body(`"base":["binance"],"chains":["ethereum","notachain"]`), `chains: unknown chain "notachain"`},
		{"101 values", body(`"base":null,"from":` + string(overList)), "from: more than 100 values"},
		{"negative bound", body(`"base":["binance"],"usdGte":-1`), "usdGte: must not be negative"},
		{"inverted bounds", body(`"base":["binance"],"valueGte":5,"valueLte":4`), "valueGte: is greater than valueLte"},
		{"infinite bound", body(`"base":["binance"],"usdLte":1e999`), "usdLte: must be a finite number, got 1e999"},
		{"bound a string", body(`"base":["binance"],"usdGte":"5"`), "usdGte: must be a number or null, not a string"},
		{"long description", body(`"base":["binance"],"description":"` + strings.Repeat("d", 2001) + `"`), "description: at most 2000 characters (got 2001)"},
		{"nothing named", body(`"base":null,"from":["!binance"],"usdGte":9999999`),
			"body: give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least 10000000"},
		{"nothing at all", body(`"base":[]`),
			"body: give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least 10000000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, ev.do(t, u, "POST", "/user/alerts", c.body), 400, c.err)
		})
	}
	expectError(t, ev.do(t, u, "POST", "/user/alerts", fmt.Sprintf(`{"name":"%s","enabled":true,"base":["binance"],"alertMethodId":%d}`, strings.Repeat("é", 201), m.ID)),
		400, "name: at most 200 characters (got 201)")
	expectError(t, ev.do(t, u, "POST", "/user/alerts", fmt.Sprintf(`{"name":"n","enabled":"yes","base":["binance"],"alertMethodId":%d}`, m.ID)),
		400, `body: field "enabled" must be a boolean, not a string`)
	// At the limits: 100 values, a 200-character name, a 2000-character description, usdGte of
	// 10,000,000 alone.
	ev.newAlert(t, u, body(`"base":null,"from":`+string(overList[:strings.LastIndex(string(overList), ",")])+`]`))
	ev.newAlert(t, u, fmt.Sprintf(`{"name":"%s","enabled":true,"base":["binance"],"description":"%s","alertMethodId":%d}`,
		strings.Repeat("é", 200), strings.Repeat("d", 2000), m.ID))
	ev.newAlert(t, u, body(`"base":null,"usdGte":10000000`))

	// A PUT checks the same rules, and the path id first.
	expectError(t, ev.do(t, u, "PUT", "/user/alerts/1", body(`"base":null`)), 400,
		"body: give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least 10000000")
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		expectError(t, ev.do(t, u, method, "/user/alerts/abc", body(`"base":["binance"]`)), 400, `id: must be an integer, got "abc"`)
	}
	expectError(t, ev.do(t, u, "GET", "/user/alerts/99999999999999999999", nil), 400, `id: must be an integer, got "99999999999999999999"`)
	expectError(t, ev.do(t, u, "DELETE", "/user/alert_methods/x", nil), 400, `id: must be an integer, got "x"`)

	// Bodies over 64 KiB: 413.
	big := body(`"base":["binance"],"description":"` + strings.Repeat("d", 64<<10) + `"`)
	expectError(t, ev.do(t, u, "POST", "/user/alerts", big), 413, "request body over 65536 bytes")
	expectError(t, ev.do(t, u, "PUT", "/user/alerts/1", big), 413, "request body over 65536 bytes")
	expectError(t, ev.do(t, u, "POST", "/user/alert_methods", `{"url":"https://x.example/`+strings.Repeat("a", 64<<10)+`"}`), 413, "request body over 65536 bytes")
}

// At most USERLABELS_MAX_ALERTS alerts and 10 methods per caller, counted per caller; deleting
// makes room.
func TestAlertLimits(t *testing.T) {
	ev := newEnvWith(t, app.WithAlerts(app.AlertOptions{MaxPerUser: 2}))
	u, other := newUser(), newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	body := fmt.Sprintf(`{"name":"n","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID)
	first := ev.newAlert(t, u, body)
	ev.newAlert(t, u, body)
	expectError(t, ev.do(t, u, "POST", "/user/alerts", body), 400, "alerts: at most 2 alerts per user; you have 2 and this request adds 1")
	expectNoContent(t, ev.do(t, u, "DELETE", fmt.Sprintf("/user/alerts/%d", first), nil))
	ev.newAlert(t, u, body)
	om := ev.newMethod(t, other, "https://b.example.com/hook")
	ev.newAlert(t, other, fmt.Sprintf(`{"name":"n","enabled":true,"base":["binance"],"alertMethodId":%d}`, om.ID))

	for range app.MaxAlertMethodsPerUser - 1 {
		ev.newMethod(t, u, "https://a.example.com/more")
	}
	expectError(t, ev.do(t, u, "POST", "/user/alert_methods", `{"url":"https://a.example.com/one-too-many"}`), 400,
		"alert methods: at most 10 alert methods per user; you have 10 and this request adds 1")
}

func TestAlertMethodRules(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	long := "https://a.example.com/" + strings.Repeat("p", app.MaxWebhookURLBytes-len("https://a.example.com/"))
	for _, c := range []struct{ body, err string }{
		{`{}`, "url: required (the webhook's https:// URL)"},
		{`{"url":""}`, "url: required (the webhook's https:// URL)"},
		{`{"url":1}`, `body: field "url" must be a string, not a number`},
		{`{"url":"https://a.example.com","secret":"x"}`, `body: unknown field "secret"`},
		{`{"url":"http://a.example.com/hook"}`, `url: "http://a.example.com/hook" is not an absolute https:// URL`},
		{`{"url":"ftp://a.example.com/hook"}`, `url: "ftp://a.example.com/hook" is not an absolute https:// URL`},
		{`{"url":"/hook"}`, `url: "/hook" is not an absolute https:// URL`},
		{`{"url":"https:///hook"}`, `url: "https:///hook" has no host`},
		{`{"url":"https://user:pw@a.example.com/hook"}`, "url: must not hold a user name or password"},
		{`{"url":"https://a.example.com/hook#x"}`, "url: must not hold a fragment (#...)"},
		{`{"url":"https://a.example.com:0/hook"}`, `url: port "0" is not 1 to 65535`},
		{`{"url":"https://a.example.com:99999/hook"}`, `url: port "99999" is not 1 to 65535`},
		{`{"url":"https://a .example.com/"}`, `url: "https://a .example.com/" is not a URL`},
		{`{"url":"` + long + `x"}`, fmt.Sprintf("url: at most 2048 bytes (got %d)", len(long)+1)},
		{`{"url":"https://a.example.com","description":"` + strings.Repeat("d", 2001) + `"}`, "description: at most 2000 characters (got 2001)"},
	} {
		expectError(t, ev.do(t, u, "POST", "/user/alert_methods", c.body), 400, c.err)
	}
	ev.newMethod(t, u, long[:len(long)-len(`?x`)]+"?x")
	// A method without a description answers it as null.
	r := ev.do(t, u, "POST", "/user/alert_methods", `{"url":"https://b.example.com"}`)
	m := decode[createdMethod](t, r)
	expect(t, r, 200, fmt.Sprintf(`{"id":%d,"kind":"webhook","url":"https://b.example.com","description":null,"createdAt":%q,"secret":%q}`,
		m.ID, m.CreatedAt.Format(time.RFC3339Nano), m.Secret))

	// http:// only where the deployment allows it (the local stack).
	dev := newEnvWith(t, app.WithAlerts(app.AlertOptions{AllowHTTP: true}))
	dev.newMethod(t, u, "http://127.0.0.1:9000/hook")
	expectError(t, dev.do(t, u, "POST", "/user/alert_methods", `{"url":"ws://a.example.com"}`), 400,
		`url: "ws://a.example.com" is not an absolute https:// or http:// URL`)
}

// A method an alert uses cannot be deleted (409 naming the alerts); once they are gone it can.
func TestAlertMethodInUse(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	m2 := ev.newMethod(t, u, "https://a.example.com/other")
	a1 := ev.newAlert(t, u, fmt.Sprintf(`{"name":"a","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID))
	a2 := ev.newAlert(t, u, fmt.Sprintf(`{"name":"b","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID))
	path := fmt.Sprintf("/user/alert_methods/%d", m.ID)
	expectError(t, ev.do(t, u, "DELETE", path, nil), 409,
		fmt.Sprintf("alert method %d is used by alerts %d, %d; delete them or move them to another method first", m.ID, a1, a2))
	expectNoContent(t, ev.do(t, u, "PUT", fmt.Sprintf("/user/alerts/%d", a2), fmt.Sprintf(`{"name":"b","enabled":true,"base":["binance"],"alertMethodId":%d}`, m2.ID)))
	expectError(t, ev.do(t, u, "DELETE", path, nil), 409,
		fmt.Sprintf("alert method %d is used by alert %d; delete it or move it to another method first", m.ID, a1))
	expectNoContent(t, ev.do(t, u, "DELETE", fmt.Sprintf("/user/alerts/%d", a1), nil))
	expectNoContent(t, ev.do(t, u, "DELETE", path, nil))
	expectError(t, ev.do(t, u, "DELETE", path, nil), 404, fmt.Sprintf("no alert method %d", m.ID))
	expect(t, ev.do(t, u, "GET", "/user/alert_methods", nil), 200, fmt.Sprintf(
		`[{"id":%d,"kind":"webhook","url":"https://a.example.com/other","description":"desk hook","createdAt":%q}]`,
		m2.ID, m2.CreatedAt.Format(time.RFC3339Nano)))
}

// expectNoContent checks for a 204 without a body.
func expectNoContent(t *testing.T, r resp) {
	t.Helper()
	if r.Status != 204 || r.Body != "" {
		t.Fatalf("status %d body %q, want 204 without a body", r.Status, r.Body)
	}
}

// doService sends a request signed for the service role, as the client's alert calls are.
func (ev *env) doService(t *testing.T, method, path string) resp {
	t.Helper()
	id := httpx.Identity{KeyID: "service", UserID: "service", Role: client.ServiceRole}
	return ev.doAs(t, &id, method, path, nil)
}

func TestInternalAlerts(t *testing.T) {
	ev := newEnv(t)
	u, other := newUser(), newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	om := ev.newMethod(t, other, "https://b.example.com/hook")
	a1 := ev.newAlert(t, u, fmt.Sprintf(`{"name":"one","enabled":true,"base":null,"from":["%s","!binance"],"tokens":["usd-coin"],"usdGte":1000.25,"alertMethodId":%d}`, wallet, m.ID))
	a2 := ev.newAlert(t, other, fmt.Sprintf(`{"name":"two","enabled":false,"base":["binance"],"chains":["ethereum"],"valueLte":1e21,"alertMethodId":%d}`, om.ID))
	updated := func(id int64) string {
		var at time.Time
		if err := ev.store.Pool().QueryRow(t.Context(), `SELECT updated_at FROM userdata.alerts WHERE id = $1`, id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.UTC().Format(time.RFC3339Nano)
	}
	one := fmt.Sprintf(`{"id":%d,"owner":%q,"name":"one","enabled":true,"base":[],"from":["%s","!binance"],"to":[],"tokens":["usd-coin"],
		"chains":[],"usdGte":"1000.25","method":{"id":%d,"kind":"webhook","url":"https://a.example.com/hook","secret":%q},"orgId":"org-shared","tier":"api","updatedAt":%q}`,
		a1, u, wallet, m.ID, m.Secret, updated(a1))
	two := fmt.Sprintf(`{"id":%d,"owner":%q,"name":"two","enabled":false,"base":["binance"],"from":[],"to":[],"tokens":[],
		"chains":["ethereum"],"valueLte":"1000000000000000000000","method":{"id":%d,"kind":"webhook","url":"https://b.example.com/hook","secret":%q},"orgId":"org-shared","tier":"api","updatedAt":%q}`,
		a2, other, om.ID, om.Secret, updated(a2))

	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts?after=%d", a1-1)), 200, `{"alerts":[`+one+`,`+two+`]}`)
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts?after=%d&limit=1", a1-1)), 200, `{"alerts":[`+one+`]}`)
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts?after=%d&limit=1000", a1)), 200, `{"alerts":[`+two+`]}`)
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts?after=%d", a2)), 200, `{"alerts":[]}`)
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts/%d", a2)), 200, two)
	expectError(t, ev.doService(t, "GET", "/internal/alerts?limit=0"), 400, "limit: must be between 1 and 1000, got 0")
	expectError(t, ev.doService(t, "GET", "/internal/alerts?limit=1001"), 400, "limit: must be between 1 and 1000, got 1001")
	expectError(t, ev.doService(t, "GET", "/internal/alerts?after=x"), 400, `after: must be an integer, got "x"`)
	expectError(t, ev.doService(t, "GET", "/internal/alerts/x"), 400, `id: must be an integer, got "x"`)

	// Only the service role: a caller's identity (what the edge signs) or none is a 401.
	expectError(t, ev.do(t, u, "GET", "/internal/alerts", nil), 401, "a service identity is required")
	expectError(t, ev.do(t, u, "GET", fmt.Sprintf("/internal/alerts/%d", a1), nil), 401, "a service identity is required")
	expectError(t, ev.do(t, "", "GET", "/internal/alerts", nil), 401, "a service identity is required")

	// Who pays follows the caller of the last PUT: the same user through an individual key (no
	// org) pays alone, so the feed omits orgId and tier is that key's; a row from before the
	// payer was kept (NULL) reads as no org.
	solo := httpx.Identity{KeyID: "solo-" + other, UserID: other, Role: httpx.RoleIndividual, Tier: "free"}
	put := fmt.Sprintf(`{"name":"two","enabled":false,"base":["binance"],"chains":["ethereum"],"valueLte":1e21,"alertMethodId":%d}`, om.ID)
	expectNoContent(t, ev.doAs(t, &solo, "PUT", fmt.Sprintf("/user/alerts/%d", a2), strings.NewReader(put)))
	two = fmt.Sprintf(`{"id":%d,"owner":%q,"name":"two","enabled":false,"base":["binance"],"from":[],"to":[],"tokens":[],
		"chains":["ethereum"],"valueLte":"1000000000000000000000","method":{"id":%d,"kind":"webhook","url":"https://b.example.com/hook","secret":%q},"tier":"free","updatedAt":%q}`,
		a2, other, om.ID, om.Secret, updated(a2))
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts/%d", a2)), 200, two)
	if _, err := ev.store.Pool().Exec(t.Context(), `UPDATE userdata.alerts SET org_id = NULL, tier = NULL WHERE id = $1`, a2); err != nil {
		t.Fatal(err)
	}
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts/%d", a2)), 200, strings.Replace(two, `"tier":"free",`, "", 1))
	// The public answer has no payer.
	if r := ev.do(t, u, "GET", fmt.Sprintf("/user/alerts/%d", a1), nil); r.Status != 200 || strings.Contains(r.Body, "org") || strings.Contains(r.Body, "tier") {
		t.Fatalf("public alert: %d %s", r.Status, r.Body)
	}

	// Deleted: 404, and gone from the feed.
	expectNoContent(t, ev.do(t, other, "DELETE", fmt.Sprintf("/user/alerts/%d", a2), nil))
	expectError(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts/%d", a2)), 404, fmt.Sprintf("no alert %d", a2))
	expect(t, ev.doService(t, "GET", fmt.Sprintf("/internal/alerts?after=%d", a1-1)), 200, `{"alerts":[`+one+`]}`)
}

// Concurrent creations cannot pass the cap together: each counts with the user's row locked.
func TestConcurrentAlertCreationsStayUnderTheCap(t *testing.T) {
	ev := newEnvWith(t, app.WithAlerts(app.AlertOptions{MaxPerUser: 5}))
	u := newUser()
	m := ev.newMethod(t, u, "https://a.example.com/hook")
	body := fmt.Sprintf(`{"name":"n","enabled":true,"base":["binance"],"alertMethodId":%d}`, m.ID)
	statuses := make(chan int, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { statuses <- ev.do(t, u, "POST", "/user/alerts", body).Status })
	}
	wg.Wait()
	close(statuses)
	created := 0
	for s := range statuses {
		switch s {
		case 200:
			created++
		case 400:
		default:
			t.Fatalf("status %d", s)
		}
	}
	var n int
	if err := ev.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM userdata.alerts WHERE user_id = $1`, u).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if created != 5 || n != 5 {
		t.Fatalf("%d created, %d stored; want 5", created, n)
	}
}
