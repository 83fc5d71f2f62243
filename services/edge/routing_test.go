package edge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge"
)

// The foundation's behaviour holds with limits and metering in the chain.
func TestEdgeOwnRoutesAndErrors(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "basic"})

	if r := e.get("/health", ""); r.Status != 200 || r.Body != "ok" {
		t.Fatalf("/health: %d %q", r.Status, r.Body)
	}
	r := e.get("/chains", k)
	if r.Status != 200 || !strings.HasPrefix(r.Body, `["ethereum",`) {
		t.Fatalf("/chains: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("X-Credits-Used") != "0" || r.Header.Get("X-RateLimit-Limit") != "20" {
		t.Fatalf("/chains headers: %v", r.Header)
	}
	for _, c := range []struct{ method, path, key string }{
		{"GET", "/chains", ""}, {"GET", "/chains", "ci_wrong"}, {"GET", "/transfers", ""},
	} {
		r := e.do(c.method, c.path, c.key)
		if r.Status != 401 || r.Body != `{"error":"error validating API key"}`+"\n" {
			t.Fatalf("%s %s key %q: %d %s", c.method, c.path, c.key, r.Status, r.Body)
		}
	}
	if r := e.get("/openapi.json", ""); r.Status != 200 || !strings.Contains(r.Body, `"openapi": "3.1`) {
		t.Fatalf("/openapi.json: %d", r.Status)
	}
	if r := e.get("/no/such/route", k); r.Status != 404 || r.Body != `{"error":"no route for /no/such/route"}`+"\n" {
		t.Fatalf("404: %d %s", r.Status, r.Body)
	}
	if r := e.do("POST", "/chains", k); r.Status != 405 || r.Header.Get("Allow") != "GET" {
		t.Fatalf("405: %d %v %s", r.Status, r.Header, r.Body)
	}
	for _, p := range []string{"/internal/lookup", "/INTERNAL/lookup", "/user/%2e%2e/internal/lookup", "/user/../internal/entities/x"} {
		if r := e.get(p, k); r.Status != 404 && r.Status != 400 {
			t.Fatalf("%s reachable: %d %s", p, r.Status, r.Body)
		}
	}
	// The key and client identity headers never reach a service; the signed identity does.
	r = e.do("GET", "/tx/0xabc", k, "X-Caller-User-Id", "someone-else", "X-Caller", "v1 k someone-else  individual api 1 sig")
	var echo map[string]string
	if err := json.Unmarshal([]byte(r.Body), &echo); err != nil || r.Status != 200 {
		t.Fatalf("proxied: %d %s", r.Status, r.Body)
	}
	if echo["apiKey"] != "" || echo["user"] == "" || echo["user"] == "someone-else" || echo["path"] != "/tx/0xabc" {
		t.Fatalf("upstream saw %v", echo)
	}
	// Key-optional summary: without a key it is public (per IP, not metered); with a bad key 401.
	if r := e.get("/intelligence/entity/x/summary", ""); r.Status != 200 || r.Header.Get("X-Credits-Used") != "" || r.Header.Get("X-RateLimit-Limit") != "20" {
		t.Fatalf("summary without key: %d %v", r.Status, r.Header)
	}
	if r := e.get("/intelligence/entity/x/summary", "ci_bad"); r.Status != 401 {
		t.Fatalf("summary with bad key: %d", r.Status)
	}
	if r := e.get("/intelligence/entity/x/summary", k); r.Status != 200 || r.Header.Get("X-Credits-Used") != "1" {
		t.Fatalf("summary with key: %d %v", r.Status, r.Header)
	}
	checkOneKey(t, e, k)
}

// checkOneKey: a call giving API-Key more than once is a 400 naming the header, whichever keys
// they are, before any key is looked up, limited or charged; a call with the key once then
// shows no credit spent on the refused ones.
func checkOneKey(t *testing.T, e *testEdge, k string) {
	t.Helper()
	k2, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	used := func() int64 {
		t.Helper()
		r := e.get("/tx/0xabc", k)
		n, err := strconv.ParseInt(r.Header.Get("X-Credits-Period-Used"), 10, 64)
		if r.Status != 200 || err != nil {
			t.Fatalf("/tx with one key: %d %v %s", r.Status, r.Header, r.Body)
		}
		return n
	}
	before := used()
	for _, path := range []string{"/tx/0xabc", "/intelligence/entity/x/summary", "/chains"} {
		for _, pair := range [][2]string{{k, k2}, {k, k}, {k, "ci_bad"}, {"ci_bad", k}} {
			r := httptest.NewRequest("GET", path, nil)
			r.RemoteAddr = "192.0.2.10:5555"
			r.Header.Add("API-Key", pair[0])
			r.Header.Add("API-Key", pair[1])
			// The same two keys in one header, as a proxy joining repeated headers sends them.
			joined := httptest.NewRequest("GET", path, nil)
			joined.RemoteAddr = "192.0.2.10:5555"
			joined.Header.Set("API-Key", pair[0]+", "+pair[1])
			for _, req := range []*http.Request{r, joined} {
				w := httptest.NewRecorder()
				e.Handler.ServeHTTP(w, req)
				if w.Code != 400 || w.Body.String() != `{"error":"API-Key: give one key, not 2"}`+"\n" ||
					w.Header().Get("X-RateLimit-Limit") != "" || w.Header().Get("X-Credits-Used") != "" {
					t.Fatalf("%s with API-Key %q: %d %v %s", path, req.Header.Values("API-Key"), w.Code, w.Header(), w.Body)
				}
			}
		}
	}
	if after := used(); after != before+2 {
		t.Fatalf("credits used %d then %d: the refused calls were charged", before, after)
	}
}

// The WebSocket upgrade is proxied to stream-fanout after authentication, and not metered by
// the edge.
func TestWebSocketUpgradeProxiedAfterAuth(t *testing.T) {
	upgraded := make(chan http.Header, 1)
	ws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upgraded <- r.Header.Clone()
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = brw.Flush()
		line, _ := brw.ReadString('\n')
		_, _ = brw.WriteString("echo " + line)
		_ = brw.Flush()
	}))
	defer ws.Close()
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.UpstreamStreamFanout = ws.URL }})
	k, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	srv := httptest.NewServer(e.Traced(e.svc)) // as Run serves it: the tracing wrapper must not hide the hijacker
	defer srv.Close()

	dial := func(key string) (string, *bufio.Reader, net.Conn) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /ws/transfers HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAPI-Key: %s\r\n\r\n", key)
		br := bufio.NewReader(conn)
		status, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return status, br, conn
	}
	status, _, conn := dial("ci_wrong")
	conn.Close()
	if !strings.Contains(status, "401") {
		t.Fatalf("bad key upgrade: %q", status)
	}
	status, br, conn := dial(k)
	defer conn.Close()
	if !strings.Contains(status, "101") {
		t.Fatalf("upgrade: %q", status)
	}
	h := <-upgraded
	if h.Get("API-Key") != "" || h.Get("X-Caller") == "" {
		t.Fatalf("stream-fanout saw %v", h)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
		if strings.HasPrefix(line, "X-Credits-Used") {
			t.Fatalf("the edge metered a stream: %q", line)
		}
	}
	fmt.Fprint(conn, "hello\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo hello\n" {
		t.Fatalf("stream: %q %v", line, err)
	}
}

// The edge's server span is the parent of the service's. A trusted proxy's trace context is
// followed: the service's span is in the trace the proxy named, with the caller's baggage. Any
// other caller's is not: the edge starts a trace of its own (linked, not parented) and drops the
// caller's baggage, so a caller cannot have itself traced through every service.
func TestTraceContextReachesServices(t *testing.T) {
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, c := range []struct {
		name    string
		trusted []string
		follow  bool
	}{
		{"from a proxy trusted with traces", []string{"192.0.2.0/24"}, true}, // httptest.NewRequest's peer is 192.0.2.1
		{"from anyone else", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEdge(t, edgeOpts{noConsume: true, tune: func(cfg *edge.Config) {
				cfg.TraceTrustedProxies = c.trusted
				cfg.TrustedProxies = []string{"192.0.2.0/24"} // trusted for addresses, not for traces
			}})
			k, _ := e.key(t, edge.KeySpec{Tier: "basic"})
			r := httptest.NewRequest("GET", "/tx/0xabc", nil)
			r.Header.Set("API-Key", k)
			r.Header.Set("traceparent", "00-"+clientTrace+"-00f067aa0ba902b7-01")
			r.Header.Set("baggage", "tenant=caller")
			r.Header.Set("tracestate", "vendor=caller")
			w := httptest.NewRecorder()
			e.Traced(e.svc).ServeHTTP(w, r)
			var echo map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &echo); err != nil || w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			tp, bag, ts := echo["traceparent"], echo["baggage"], echo["tracestate"]
			followed := strings.HasPrefix(tp, "00-"+clientTrace+"-")
			if followed != c.follow || strings.Contains(tp, "00f067aa0ba902b7") || (bag == "tenant=caller") != c.follow ||
				(ts == "vendor=caller") != c.follow {
				t.Fatalf("service saw traceparent %q tracestate %q baggage %q; following the caller's context: %v", tp, ts, bag, c.follow)
			}
		})
	}
}

// A body of unknown length (chunked) over 1 MiB is refused as one with a Content-Length is,
// even on a route whose service reads no body; one under it reaches the service whole. On a
// batch route the metering reads it (to count its addresses) and the same limit holds.
func TestChunkedBodyOverTheLimit(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	for _, c := range []struct {
		method, path string
		size         int
		status       int
		body         string
	}{
		{"GET", "/tx/0xabc", 2 << 20, 413, `{"error":"request body over 1048576 bytes"}` + "\n"},
		{"GET", "/tx/0xabc", 1 << 20, 200, ""},
		{"POST", "/intelligence/address/batch", 2 << 20, 413, `{"error":"request body over 1048576 bytes"}` + "\n"},
		{"POST", "/intelligence/address/batch", 1 << 20, 200, ""},
	} {
		before := e.backendCalls()
		r := httptest.NewRequest(c.method, c.path, io.MultiReader(strings.NewReader(strings.Repeat("x", c.size))))
		r.ContentLength = -1 // as a server sees Transfer-Encoding: chunked
		r.RemoteAddr = "192.0.2.10:5555"
		r.Header.Set("API-Key", k)
		w := httptest.NewRecorder()
		e.Handler.ServeHTTP(w, r)
		if w.Code != c.status || c.body != "" && w.Body.String() != c.body {
			t.Fatalf("%s %s, chunked body of %d bytes: %d %s", c.method, c.path, c.size, w.Code, w.Body.String())
		}
		if got, want := e.backendCalls()-before, map[bool]int{true: 1, false: 0}[c.status == 200]; got != want {
			t.Fatalf("%s %s, chunked body of %d bytes: the service got %d calls, want %d", c.method, c.path, c.size, got, want)
		}
	}
}
