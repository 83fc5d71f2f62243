package edge_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge"
)

// streamedThrough is how many bytes a stream service's writes hand to its socket, through an
// edge tuned by tune, to a client that reads the upgrade's answer and then nothing: the
// service writes 1 KiB messages until a write stays blocked, which says every buffer between
// it and the client is full. The service's socket has an 8 KiB send buffer and the client's
// an 8 KiB receive buffer (Linux doubles both), set before any data reaches them.
func streamedThrough(t *testing.T, tune func(*edge.Config)) int {
	t.Helper()
	const limit = 32 << 20
	written := make(chan int, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			written <- -1
			return
		}
		defer conn.Close()
		_ = conn.(*net.TCPConn).SetWriteBuffer(8 << 10)
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = brw.Flush()
		msg := []byte(strings.Repeat("x", 1<<10))
		n := 0
		for n < limit {
			// A write blocked this long has found the buffers full: the client takes nothing.
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			m, err := conn.Write(msg)
			n += m
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			if err != nil {
				t.Errorf("the service's write failed: %v", err)
				break
			}
		}
		written <- n
	}))
	defer up.Close()
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.UpstreamStreamFanout = up.URL
		tune(c)
	}})
	k, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	srv := httptest.NewServer(e.Traced(e.svc))
	defer srv.Close()
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /ws/transfers HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAPI-Key: %s\r\n\r\n", k)
	if status, err := bufio.NewReaderSize(conn, 16).ReadString('\n'); err != nil || !strings.Contains(status, "101") {
		t.Fatalf("upgrade: %q %v", status, err)
	}
	n := <-written
	if n >= limit {
		t.Fatalf("the service wrote %d bytes to a client reading nothing and never blocked", n)
	}
	return n
}

// TestStreamBuffersBounded: through the edge, a stream client that stops reading holds the
// service's writes back once the bounded buffers between them are full: the service's and the
// client's (8 KiB each here), the edge's socket buffers (EDGE_STREAM_SOCKET_BUFFER, 16 KiB
// here; each doubled by Linux), its copy buffer (EDGE_STREAM_COPY_BUFFER, 4 KiB) and its
// transport's read buffer (4 KiB). What the
// service wrote (and stream-fanout would have charged) is at most their sum, not the
// megabytes the kernel's autotuned buffers take.
func TestStreamBuffersBounded(t *testing.T) {
	n := streamedThrough(t, func(c *edge.Config) { c.StreamSocketBuffer, c.StreamCopyBuffer = 16<<10, 4<<10 })
	// The edge's transport reads the service's side through its 4 KiB read buffer too.
	bound := 2*(8<<10) + 2*(16<<10) + 4<<10 + 4<<10 + 2*(16<<10) + 2*(8<<10)
	t.Logf("the service wrote %d bytes (bound %d)", n, bound)
	if n > bound {
		t.Fatalf("the service wrote %d bytes to a client reading nothing, want at most %d (the bounded buffers between them)", n, bound)
	}
}
