package ws

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A batch's write deadline must not outlive the batch: a ping or close written through later,
// after the deadline passed, failed and ended the connection.
func TestCorkDeadlineIsTheBatchsAlone(t *testing.T) {
	// A TCP connection: the kernel takes the small writes at once, whatever the scheduler does.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if s, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, s)
			s.Close()
		}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cc := &corkConn{Conn: a, timeout: 50 * time.Millisecond}
	cc.cork()
	if _, err := cc.Write([]byte("batched")); err != nil {
		t.Fatal(err)
	}
	if n, err := cc.uncork(); err != nil || n != len("batched") {
		t.Fatalf("uncork wrote %d: %v", n, err)
	}
	time.Sleep(100 * time.Millisecond) // past the batch's deadline
	if _, err := cc.Write([]byte("ping")); err != nil {
		t.Fatalf("a write through after a batch failed: %v", err)
	}
}

// The frames a batch builds itself (every payload length form of RFC 6455, a transfer message
// and a plain one) read back whole and in order with a real WebSocket client.
func TestCorkFramesReadByAClient(t *testing.T) {
	long := strings.Repeat("x", 70_000)
	want := []string{`{"type":"ack"}`, strings.Repeat("m", 300), `{"type":"transfer","payload":{"alertId":"f\"1","transfer":{"id":"a"}}}`, long}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &corkWriter{ResponseWriter: w, timeout: time.Minute}
		c, err := websocket.Accept(cw, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		cw.cc.cork()
		ok := cw.cc.appendText([]byte(want[0])) && cw.cc.appendText([]byte(want[1])) &&
			cw.cc.appendTransfer([]byte(strconv.Quote(`f"1`)), []byte(`{"id":"a"}`)) && cw.cc.appendText([]byte(long))
		if _, err := cw.cc.uncork(); err != nil || !ok {
			t.Errorf("batch not written: corked %v, %v", ok, err)
		}
		if cw.cc.appendText([]byte("late")) {
			t.Error("a message was batched while not corked")
		}
		<-done
	}))
	defer srv.Close()
	defer close(done)
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for i, w := range want {
		typ, m, err := c.Read(ctx)
		if err != nil || typ != websocket.MessageText || string(m) != w {
			t.Fatalf("message %d: %v %v %.80q, want %.80q", i, typ, err, m, w)
		}
	}
}

// frameEnd finds the end of the frame a position falls in, over frames of each header size.
func TestFrameEnd(t *testing.T) {
	var b []byte
	var ends []int
	for _, n := range []int{10, 300, 70_000, 0} {
		b = append(appendFrameHeader(b, n), make([]byte, n)...)
		ends = append(ends, len(b))
	}
	cases := []struct{ pos, want int }{
		{0, 0}, {1, ends[0]}, {ends[0] - 1, ends[0]}, {ends[0], ends[0]}, {ends[0] + 2, ends[1]},
		{ends[1] + 5, ends[2]}, {ends[2], ends[2]}, {ends[2] + 1, ends[3]},
	}
	for _, c := range cases {
		if got := frameEnd(b, c.pos); got != c.want {
			t.Errorf("frameEnd at %d = %d, want %d", c.pos, got, c.want)
		}
	}
}

// An interrupted batch write stops at the end of the frame it was in, finished within a fresh
// write timeout, and the connection's next write (a close frame) gets a deadline of its own:
// a client reading slowly is not cut mid-message and can read what follows.
func TestCorkInterruptEndsAtAFrame(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { // a slow reader: 50 bytes every 2 ms
		buf := make([]byte, 50)
		for {
			if _, err := b.Read(buf); err != nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	cc := &corkConn{Conn: a, timeout: 10 * time.Second}
	cc.cork()
	msg := []byte(strings.Repeat("x", 2000))
	for range 3 {
		cc.appendText(msg)
	}
	const frame = 2004 // 4 bytes of header
	type res struct {
		n   int
		err error
	}
	done := make(chan res, 1)
	go func() { n, err := cc.uncork(); done <- res{n, err} }()
	time.Sleep(20 * time.Millisecond)
	cc.interrupt()
	r := <-done
	if !errors.Is(r.err, os.ErrDeadlineExceeded) || r.n%frame != 0 || r.n == 0 {
		t.Fatalf("interrupted batch wrote %d bytes (%v), want whole frames of %d", r.n, r.err, frame)
	}
	if _, err := cc.Write([]byte("close")); err != nil {
		t.Fatalf("the write after the interrupt failed: %v", err)
	}
}
