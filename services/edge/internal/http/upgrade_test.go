package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	edgehttp "github.com/chainintel/chainintel/services/edge/internal/http"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// upgradeEdge is the edge's handler in front of one service, up, for every upstream, with the
// proxies' timeout and stream options the edge builds; active counts the routes' handlers
// running.
func upgradeEdge(t *testing.T, up http.Handler, timeout time.Duration, active *atomic.Int64) string {
	t.Helper()
	svc := httptest.NewServer(up)
	t.Cleanup(svc.Close)
	signer := httpx.NewSigner("upgrade-test-secret-0123456789")
	ups := map[routes.Service]http.Handler{}
	for _, s := range routes.Upstreams {
		o := proxy.Options{Service: string(s), Target: svc.URL, Signer: signer, Timeout: timeout}
		if s == routes.StreamFanout {
			o.KeyHash = true
			o.Streams = proxy.Streams{SocketBuffer: 64 << 10, CopyBuffer: 16 << 10, CloseGrace: 200 * time.Millisecond}
		}
		p, err := proxy.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ups[s] = p
	}
	count := func(rt routes.Route, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			active.Add(1)
			defer active.Add(-1)
			next.ServeHTTP(w, r)
		})
	}
	h, err := edgehttp.NewHandler(edgehttp.Options{Routes: routes.Table, Upstreams: ups, Own: map[string]http.Handler{},
		Keys: anyKey{}, Middlewares: []edgehttp.Middleware{count}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config = httpx.NewServer(h)
	srv.Start()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// A request asking a route that is not a stream for an upgrade is an ordinary call: the service
// sees no Upgrade header and the upstream timeout still ends it (before, any Upgrade header took
// a call out of the timeout, holding a load-shedding slot and its credit hold at will).
func TestUpgradeHeaderOnARouteThatIsNotAStream(t *testing.T) {
	var active atomic.Int64
	sawUpgrade := make(chan string, 1)
	release := make(chan struct{})
	defer close(release)
	addr := upgradeEdge(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawUpgrade <- r.Header.Get("Upgrade") + "|" + r.Header.Get("Connection")
		select { // answers only when released: the edge's timeout must end the call first
		case <-release:
		case <-r.Context().Done():
		}
	}), 200*time.Millisecond, &active)
	req, _ := http.NewRequest("GET", "http://"+addr+"/transfers?chains=ethereum", nil)
	req.Header.Set("API-Key", "good")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade, X-Extra")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d %s, want 504 from the upstream timeout", resp.StatusCode, b)
	}
	if got := <-sawUpgrade; got != "|" {
		t.Fatalf("the service saw Upgrade|Connection %q, want none", got)
	}
}

// A stream the service ended is closed at the edge once the client's grace to answer has
// passed, though the client stays connected and silent: its handler returns and the client
// reads the end of the connection.
func TestStreamEndedByTheServiceIsClosed(t *testing.T) {
	var active atomic.Int64
	addr := upgradeEdge(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Write([]byte{0x88, 0x02, 0x03, 0xe8}) // a close frame, 1000
		brw.Flush()
		conn.Close()
	}), time.Second, &active)
	const n = 20
	var clients []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /ws/transfers HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAPI-Key: good\r\n\r\n")
		clients = append(clients, c)
	}
	for i, c := range clients {
		// The client never writes; it reads the answer, the close frame and then the end.
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		rest, err := io.ReadAll(bufio.NewReader(c))
		if err != nil {
			t.Fatalf("client %d: %v after %q; want the edge to close the connection", i, err, rest)
		}
		if !strings.HasPrefix(string(rest), "HTTP/1.1 101") || !strings.HasSuffix(string(rest), "\x88\x02\x03\xe8") {
			t.Fatalf("client %d read %q", i, rest)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for active.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d stream handlers still running after every stream ended", active.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
