package http

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
)

func TestLabelsLifecycle(t *testing.T) {
	ev := newEnv(t)
	u := newUser()

	r := ev.do(t, u, "GET", "/user/labels", nil)
	expect(t, r, 200, `[]`)
	if r.Header.Get(httpx.HeaderRows) != "0" {
		t.Fatalf("rows header %q", r.Header.Get(httpx.HeaderRows))
	}

	// Created in any form, stored and answered canonically.
	r = ev.do(t, u, "POST", "/user/labels", `[
		{"name":"Hot wallet","note":"seen on a CEX","address":"0x00000000000000000000000000000000000000AB","chainType":"evm"},
		{"name":"Segwit","note":"","address":"`+btcUpper+`","chainType":"bitcoin"},
		{"name":"USDT","note":"contract","address":"`+tronHex+`","chainType":"tron"},
		{"name":"Foundation","note":"raw form","address":"`+tonRaw+`","chainType":"ton"}
	]`)
	expect(t, r, 200, `[
		{"name":"Hot wallet","note":"seen on a CEX","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"},
		{"name":"Segwit","note":"","address":"`+btcLower+`","chainType":"bitcoin"},
		{"name":"USDT","note":"contract","address":"`+tronAddr+`","chainType":"tron"},
		{"name":"Foundation","note":"raw form","address":"`+tonRaw+`","chainType":"ton"}
	]`)

	// Listed by chain type, then address.
	r = ev.do(t, u, "GET", "/user/labels", nil)
	expect(t, r, 200, `[
		{"name":"Segwit","note":"","address":"`+btcLower+`","chainType":"bitcoin"},
		{"name":"Hot wallet","note":"seen on a CEX","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"},
		{"name":"Foundation","note":"raw form","address":"`+tonRaw+`","chainType":"ton"},
		{"name":"USDT","note":"contract","address":"`+tronAddr+`","chainType":"tron"}
	]`)
	if r.Header.Get(httpx.HeaderRows) != "4" {
		t.Fatalf("rows header %q", r.Header.Get(httpx.HeaderRows))
	}

	// POST replaces a label with the same address and chain type.
	r = ev.do(t, u, "POST", "/user/labels", `[{"name":"Renamed","note":"n2","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"}]`)
	expect(t, r, 200, `[{"name":"Renamed","note":"n2","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"}]`)

	// PUT by id, in any case; the body's address and chainType are optional.
	r = ev.do(t, u, "PUT", "/user/labels/0x00000000000000000000000000000000000000AB:evm", `{"name":"Put","note":"p"}`)
	expect(t, r, 200, `{"name":"Put","note":"p","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"}`)
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"name":"Put2","note":"","address":"`+btcUpper+`","chainType":"bitcoin"}`)
	expect(t, r, 200, `{"name":"Put2","note":"","address":"`+btcLower+`","chainType":"bitcoin"}`)
	// A TON raw address holds a colon; the chain type follows the last one.
	r = ev.do(t, u, "PUT", "/user/labels/"+tonRaw+":ton", `{"name":"Raw","note":""}`)
	expect(t, r, 200, `{"name":"Raw","note":"","address":"`+tonRaw+`","chainType":"ton"}`)
	// The body may not move the label.
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"name":"x","note":"","address":"`+btcAddr+`"}`)
	expectError(t, r, 400, "address, chainType: must name the label in the path ("+btcLower+":bitcoin)")
	// Absent label.
	r = ev.do(t, u, "PUT", "/user/labels/"+evmAddr(999)+":evm", `{"name":"x","note":""}`)
	expectError(t, r, 404, "no label "+evmAddr(999)+":evm")
	// Bad ids and bodies.
	r = ev.do(t, u, "PUT", "/user/labels/"+evmAddr(1), `{"name":"x","note":""}`)
	expectError(t, r, 400, `label: "`+evmAddr(1)+`" is not <address>:<chainType>`)
	r = ev.do(t, u, "PUT", "/user/labels/0x12:evm", `{"name":"x","note":""}`)
	expectError(t, r, 400, `label: invalid evm address "0x12": want 0x followed by 40 hex digits`)
	r = ev.do(t, u, "PUT", "/user/labels/"+evmAddr(1)+":eth", `{"name":"x","note":""}`)
	expectError(t, r, 400, `label: unknown chain type "eth" (want one of evm, bitcoin, tron, solana, dogecoin, ton)`)
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"note":""}`)
	expectError(t, r, 400, "name: required")
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"name":"a"}`)
	expectError(t, r, 400, "note: required")
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"name":"a","note":"","colour":"red"}`)
	expectError(t, r, 400, `body: unknown field "colour"`)
	r = ev.do(t, u, "PUT", "/user/labels/"+btcLower+":bitcoin", `{"name":1,"note":""}`)
	expectError(t, r, 400, `body: field "name" must be a string, not a number`)

	// DELETE one by path: 1, then 0.
	r = ev.do(t, u, "DELETE", "/user/labels/"+tronAddr+":tron", nil)
	expect(t, r, 200, `{"deleted":1}`)
	r = ev.do(t, u, "DELETE", "/user/labels/"+tronAddr+":tron", nil)
	expect(t, r, 200, `{"deleted":0}`)

	// DELETE a list: comma-separated and repeated keys, unknown ones not counted.
	q := url.Values{"labels": {
		"0x00000000000000000000000000000000000000AB:evm," + btcUpper + ":bitcoin",
		tonRaw + ":ton", evmAddr(12345) + ":evm",
	}}
	r = ev.do(t, u, "DELETE", "/user/labels?"+q.Encode(), nil)
	expect(t, r, 200, `{"deleted":3}`)
	expect(t, ev.do(t, u, "GET", "/user/labels", nil), 200, `[]`)

	r = ev.do(t, u, "DELETE", "/user/labels", nil)
	expectError(t, r, 400, "labels: required (comma-separated <address>:<chainType> values)")
	r = ev.do(t, u, "DELETE", "/user/labels?labels="+evmAddr(1)+":evm,nocolon", nil)
	expectError(t, r, 400, `labels[1]: "nocolon" is not <address>:<chainType>`)
}

// A label id whose address holds "/" (standard base64 TON) works when the slash is escaped.
func TestLabelIDWithEscapedSlash(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	ton := tonWithSlash(t)
	expect(t, ev.do(t, u, "POST", "/user/labels", `[{"name":"slash","note":"","address":"`+ton+`","chainType":"ton"}]`),
		200, `[{"name":"slash","note":"","address":"`+ton+`","chainType":"ton"}]`)
	path := "/user/labels/" + url.PathEscape(ton+":ton")
	if !strings.Contains(path, "%2F") {
		t.Fatalf("path %s does not escape the slash", path)
	}
	expect(t, ev.do(t, u, "PUT", path, `{"name":"renamed","note":""}`),
		200, `{"name":"renamed","note":"","address":"`+ton+`","chainType":"ton"}`)
	expect(t, ev.do(t, u, "DELETE", "/user/labels?labels="+url.QueryEscape(ton+":ton"), nil), 200, `{"deleted":1}`)
}

func TestLabelBatchIsValidatedAsAWhole(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	good := func(n int) string {
		return fmt.Sprintf(`{"name":"l%d","note":"","address":"%s","chainType":"evm"}`, n, evmAddr(n))
	}
	expect(t, ev.do(t, u, "POST", "/user/labels", "["+good(0)+"]"), 200,
		`[{"name":"l0","note":"","address":"`+evmAddr(0)+`","chainType":"evm"}]`)
	before := ev.kicks.Load()

	cases := []struct {
		name, body, err string
	}{
		{"bad address", "[" + good(1) + "," + good(2) + `,{"name":"x","note":"","address":"0xzz","chainType":"evm"}]`,
			`labels[2].address: invalid evm address "0xzz": want 0x followed by 40 hex digits`},
		{"address of another chain type", "[" + good(1) + `,{"name":"x","note":"","address":"` + btcAddr + `","chainType":"evm"}]`,
			`labels[1].address: invalid evm address "` + btcAddr + `": want 0x followed by 40 hex digits`},
		{"unknown chain type", "[" + good(1) + `,{"name":"x","note":"","address":"` + btcAddr + `","chainType":"btc"}]`,
			`labels[1].chainType: unknown chain type "btc" (want one of evm, bitcoin, tron, solana, dogecoin, ton)`},
		{"missing note", "[" + good(1) + `,{"name":"x","address":"` + evmAddr(5) + `","chainType":"evm"}]`,
			`labels[1].note: required`},
		{"missing chainType", `[{"name":"x","note":"","address":"` + evmAddr(5) + `"}]`,
			`labels[0].chainType: required`},
		{"empty name", "[" + good(1) + `,{"name":"","note":"","address":"` + evmAddr(5) + `","chainType":"evm"}]`,
			`labels[1].name: must not be empty`},
		{"unknown field", "[" + good(1) + `,{"name":"x","note":"","address":"` + evmAddr(5) + `","chainType":"evm","tags":[]}]`,
			`labels[1]: unknown field "tags"`},
		{"wrong type", `[{"name":"x","note":7,"address":"` + evmAddr(5) + `","chainType":"evm"}]`,
			`labels[0]: field "note" must be a string, not a number`},
		{"not an object", "[" + good(1) + `,"x"]`, `labels[1]: want a JSON object`},
		{"duplicate once normalised", `[{"name":"a","note":"","address":"0x00000000000000000000000000000000000000ab","chainType":"evm"},` +
			good(2) + `,{"name":"b","note":"","address":"0x00000000000000000000000000000000000000AB","chainType":"evm"}]`,
			"labels[2]: same address and chainType as labels[0]"},
		{"not an array", good(1), "body: want an array of labels"},
		{"empty array", `[]`, "body: want an array of at least one label"},
		{"not JSON", `[{"name":`, "request body is truncated JSON"},
		{"empty body", ``, "request body is empty; want JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ev.do(t, u, "POST", "/user/labels", c.body)
			expectError(t, r, 400, c.err)
		})
	}
	// Nothing of any rejected batch was written, and no event was queued.
	expect(t, ev.do(t, u, "GET", "/user/labels", nil), 200,
		`[{"name":"l0","note":"","address":"`+evmAddr(0)+`","chainType":"evm"}]`)
	if ev.kicks.Load() != before {
		t.Fatal("a rejected batch signalled the outbox relay")
	}
}

func TestLabelLimits(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	label := func(name, note string) string {
		return fmt.Sprintf(`[{"name":%q,"note":%q,"address":%q,"chainType":"evm"}]`, name, note, evmAddr(7))
	}
	// Characters, not bytes: "é" is two bytes.
	name256, name257 := strings.Repeat("é", 256), strings.Repeat("é", 257)
	note1024, note1025 := strings.Repeat("ñ", 1024), strings.Repeat("ñ", 1025)

	expect(t, ev.do(t, u, "POST", "/user/labels", label(name256, note1024)), 200,
		fmt.Sprintf(`[{"name":%q,"note":%q,"address":%q,"chainType":"evm"}]`, name256, note1024, evmAddr(7)))
	expectError(t, ev.do(t, u, "POST", "/user/labels", label(name257, "")), 400, "labels[0].name: at most 256 characters (got 257)")
	expectError(t, ev.do(t, u, "POST", "/user/labels", label("n", note1025)), 400, "labels[0].note: at most 1024 characters (got 1025)")

	id := "/user/labels/" + evmAddr(7) + ":evm"
	expect(t, ev.do(t, u, "PUT", id, fmt.Sprintf(`{"name":%q,"note":%q}`, name256, note1024)), 200,
		fmt.Sprintf(`{"name":%q,"note":%q,"address":%q,"chainType":"evm"}`, name256, note1024, evmAddr(7)))
	expectError(t, ev.do(t, u, "PUT", id, fmt.Sprintf(`{"name":%q,"note":""}`, name257)), 400, "name: at most 256 characters (got 257)")
	expectError(t, ev.do(t, u, "PUT", id, fmt.Sprintf(`{"name":"n","note":%q}`, note1025)), 400, "note: at most 1024 characters (got 1025)")
}

// bodyOfSize returns a valid POST /user/labels body of exactly size bytes (padded with spaces).
func bodyOfSize(t testing.TB, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[")
	note := strings.Repeat("x", 1000)
	for i := 0; b.Len() < size-1200; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"n%d","note":%q,"address":%q,"chainType":"evm"}`, i, note, evmAddr(100000+i))
	}
	b.WriteString("]")
	if b.Len() > size {
		t.Fatal("body too long")
	}
	b.WriteString(strings.Repeat(" ", size-b.Len()))
	return b.String()
}

func TestBodyLimit(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	at := bodyOfSize(t, httpx.MaxBodyBytes)
	r := ev.do(t, u, "POST", "/user/labels", at)
	if r.Status != 200 {
		t.Fatalf("body of exactly 1 MiB: %d %s", r.Status, r.Body[:min(len(r.Body), 300)])
	}
	over := at + " "
	expectError(t, ev.do(t, u, "POST", "/user/labels", over), 413, "request body over 1048576 bytes")

	// Without a Content-Length the limit applies while reading.
	req := httptest.NewRequest("POST", "/user/labels", strings.NewReader(over))
	req.ContentLength = -1
	ev.signer.Sign(req.Header, identity(u), nowFn())
	w := httptest.NewRecorder()
	ev.h.ServeHTTP(w, req)
	expectError(t, resp{Status: w.Code, Body: w.Body.String()}, 413, "request body over 1048576 bytes")

	// The same limit on entity bodies.
	expectError(t, ev.do(t, u, "POST", "/user/entities", `{"addresses":{}, "note":"`+strings.Repeat("x", httpx.MaxBodyBytes)+`"}`),
		413, "request body over 1048576 bytes")
}

func TestEveryRouteNeedsTheCaller(t *testing.T) {
	ev := newEnv(t)
	id := "11111111-2222-3333-4444-555555555555"
	for _, rt := range [][2]string{
		{"GET", "/user/labels"}, {"POST", "/user/labels"}, {"DELETE", "/user/labels?labels=a:evm"},
		{"PUT", "/user/labels/a:evm"}, {"DELETE", "/user/labels/a:evm"},
		{"GET", "/user/entities"}, {"POST", "/user/entities"}, {"GET", "/user/entities/" + id},
		{"PUT", "/user/entities/" + id}, {"DELETE", "/user/entities/" + id}, {"PUT", "/user/entities/only_add/" + id},
		{"POST", "/internal/lookup"}, {"GET", "/internal/entities/" + id}, {"GET", "/internal/additions/binance"},
	} {
		r := ev.do(t, "", rt[0], rt[1], "{}")
		expectError(t, r, http.StatusUnauthorized, "error validating API key")
	}
	// A forged identity is refused too.
	req := httptest.NewRequest("GET", "/user/labels", nil)
	httpx.NewSigner("another-secret-0123456").Sign(req.Header, identity("u"), nowFn())
	w := httptest.NewRecorder()
	ev.h.ServeHTTP(w, req)
	expectError(t, resp{Status: w.Code, Body: w.Body.String()}, 401, "invalid caller identity")
}

// Two replicas over one database: a label list cached by one is never served after the other
// changed the labels.
func TestLabelListCacheAcrossReplicas(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	u := newUser()
	one := `[{"name":"one","note":"","address":"` + evmAddr(1) + `","chainType":"evm"}]`
	expect(t, a.do(t, u, "POST", "/user/labels", one), 200, one)
	expect(t, a.do(t, u, "GET", "/user/labels", nil), 200, one)
	expect(t, a.do(t, u, "GET", "/user/labels", nil), 200, one) // from a's cache

	renamed := `{"name":"renamed","note":"","address":"` + evmAddr(1) + `","chainType":"evm"}`
	expect(t, b.do(t, u, "PUT", "/user/labels/"+evmAddr(1)+":evm", `{"name":"renamed","note":""}`), 200, renamed)
	expect(t, a.do(t, u, "GET", "/user/labels", nil), 200, "["+renamed+"]")

	expect(t, b.do(t, u, "DELETE", "/user/labels/"+evmAddr(1)+":evm", nil), 200, `{"deleted":1}`)
	expect(t, a.do(t, u, "GET", "/user/labels", nil), 200, `[]`)
	r := a.do(t, u, "GET", "/user/labels", nil)
	if r.Header.Get(httpx.HeaderRows) != "0" {
		t.Fatalf("rows %q", r.Header.Get(httpx.HeaderRows))
	}
}

func TestLabelBatchSizeLimit(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	batch := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":"n","note":"","address":%q,"chainType":"evm"}`, evmAddr(i))
		}
		return b.String() + "]"
	}
	expectError(t, ev.do(t, u, "POST", "/user/labels", batch(10001)), 400, "body: at most 10000 labels per request (got 10001)")
	expect(t, ev.do(t, u, "GET", "/user/labels", nil), 200, `[]`)
	r := ev.do(t, u, "POST", "/user/labels", batch(10000))
	if r.Status != 200 || len(decode[[]map[string]string](t, r)) != 10000 {
		t.Fatalf("10,000 labels: %d %s", r.Status, r.Body[:min(300, len(r.Body))])
	}
	if r := ev.do(t, u, "GET", "/user/labels", nil); r.Header.Get(httpx.HeaderRows) != "10000" {
		t.Fatalf("rows after 10,000: %q", r.Header.Get(httpx.HeaderRows))
	}
}
