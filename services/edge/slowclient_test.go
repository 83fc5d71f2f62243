package edge_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge"
)

// A client that starts a body and never finishes it holds no upstream slot and no credits:
// the edge reads bodies before the Shedder, within EDGE_BODY_READ_TIMEOUT, and answers 408.
// With one slot per upstream, other callers' calls to the same service go through meanwhile.
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.MaxInFlight, c.ShedWait, c.BodyReadTimeout = 1, 0, 2*time.Second
	}})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	srv := httptest.NewServer(e.Handler)
	defer srv.Close()
	var stalled []net.Conn
	for _, target := range []string{"POST /user/labels", "GET /tx/0xabc", "POST /intelligence/address/batch"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		method, path, _ := strings.Cut(target, " ")
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAPI-Key: %s\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n1\r\n[\r\n", method, path, k)
		stalled = append(stalled, c)
	}
	time.Sleep(200 * time.Millisecond) // the stalled calls are past authentication
	before := e.backendCalls()
	for _, path := range []string{"/user/entities", "/tx/0xdef", "/intelligence/address/0xabc"} {
		if r := e.get(path, k); r.Status != 200 {
			t.Fatalf("%s beside stalled bodies: %d %s", path, r.Status, r.Body)
		}
	}
	if got := e.backendCalls() - before; got != 3 {
		t.Fatalf("backend got %d calls, want 3", got)
	}
	for _, c := range stalled {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 408 || string(b) != `{"error":"request body not received within 2s"}`+"\n" || resp.Header.Get("X-Credits-Used") != "" {
			t.Fatalf("stalled body: %d %v %s", resp.StatusCode, resp.Header, b)
		}
	}
	if got := e.backendCalls() - before; got != 3 {
		t.Fatalf("a stalled call reached the backend (%d calls)", got)
	}
}

// A client that stops reading a large answer is cut off EDGE_CLIENT_WRITE_TIMEOUT after its
// last progress, so its call returns and frees the upstream's slot; a client reading it
// steadily gets it whole.
func TestStalledReaderFreesItsSlot(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.MaxInFlight, c.ShedWait, c.ClientWriteTimeout = 1, 0, time.Second
	}})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	srv := httptest.NewServer(e.Handler)
	defer srv.Close()
	const size = 32 << 20 // past the socket buffers on both sides
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /tx/0xbig?size=%d HTTP/1.1\r\nHost: x\r\nAPI-Key: %s\r\n\r\n", size, k)
	// The stalled reader holds the only slot until its writes time out; then calls go through.
	eventually(t, 30*time.Second, func() error {
		if r := e.get("/tx/0xother", k); r.Status != 200 {
			return fmt.Errorf("beside a stalled reader: %d %s", r.Status, r.Body)
		}
		return nil
	})
	// A reader that keeps reading gets every byte, however long it takes in all.
	req, _ := http.NewRequest("GET", srv.URL+fmt.Sprintf("/tx/0xbig?size=%d", size), nil)
	req.Header.Set("API-Key", k)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || n != size+2 {
		t.Fatalf("steady reader: %d, %d bytes, %v", resp.StatusCode, n, err)
	}
}
