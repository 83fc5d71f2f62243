package streamfanout_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
)

// dialSmall connects a client whose socket's receive buffer (SO_RCVBUF, set before the
// connect so the window it advertises never exceeds it) is rcvbuf bytes: a client whose
// kernel holds a known amount of what it has not read.
func (w *world) dialSmall(r *replica, key string, rcvbuf int) *client {
	w.t.Helper()
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		if err != nil {
			return err
		}
		return serr
	}}
	h := http.Header{}
	w.sign(h, ident(key))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, strings.Replace(r.url, "http", "ws", 1)+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h,
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}})
	if err != nil {
		w.t.Fatalf("dial: %v (%v)", err, resp)
	}
	c.SetReadLimit(1 << 20)
	w.t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: w.t, c: c}
}

// TestStoppedReaderChargedWhatItsBuffersHold: a client that subscribes to every transfer of
// an address and stops reading while 2,000 of them (about 3.6 MB) are published is charged
// only for what the kernel buffers between it and the writer hold (the replica's
// STREAM_SEND_BUFFER and the client's receive buffer, each doubled by Linux), everything it
// was charged for reaches it when it reads again, and it is dropped as a slow client once its
// queue (256) fills behind them. With the system's autotuned send buffer (megabytes) the
// replica would write, and charge, most of the 2,000 before its queue saw any of them.
func TestStoppedReaderChargedWhatItsBuffersHold(t *testing.T) {
	const sndbuf, rcvbuf, total = 16 << 10, 16 << 10, 2000
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) {
		c.QueueSize, c.QueuePerFilter, c.SendBuffer = 256, 0, sndbuf
	})
	c := w.dialSmall(r, "kbp", rcvbuf)
	from := addr(90)
	c.subscribe(map[string]any{"from": []string{from}})
	pad := strings.Repeat("x", 1<<10)
	publish := func(n int) {
		ts := make([]*eventsv1.Transfer, n)
		for i := range ts {
			ts[i] = transferMsg(from, addr(91), 100)
			ts[i].TokenName = pad
		}
		w.publish(ts...)
	}
	// A first 50 (fewer than the queue holds), until the writer has written some of them:
	// the buffers fill before the queue does.
	publish(50)
	for deadline := time.Now().Add(30 * time.Second); r.metric(t, "stream_transfers_delivered_total") < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing was ever written to the client")
		}
	}
	for sent := 50; sent < total; sent += 50 {
		publish(50)
	}
	for deadline := time.Now().Add(30 * time.Second); r.metric(t, "stream_slow_clients_dropped_total") < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the client was never dropped as slow (%.0f transfers written to it)", r.metric(t, "stream_transfers_delivered_total"))
		}
	}
	got, err := readTransfers(t, c, nil, nil)
	t.Logf("read end: %v", err)
	// What the two buffers can hold (Linux doubles each size set), and the writer's batch
	// that was being written when the client stopped, in transfers of this size or more.
	const msgMin = 1 << 10
	bound := (2*sndbuf + 2*rcvbuf + 32<<10) / msgMin
	t.Logf("%d transfers written after the client stopped reading (bound %d)", len(got), bound)
	if len(got) > bound {
		t.Fatalf("the client was written %d transfers after it stopped reading, want at most %d (its buffers' worth)", len(got), bound)
	}
	if len(got) >= total-256 {
		t.Fatalf("the client got %d of %d: never dropped as slow", len(got), total)
	}
	if credits := w.credits(t, "kbp", len(got)); credits != len(got) {
		t.Fatalf("charged %d credits for the %d transfers the client could read", credits, len(got))
	}
}

// TestWriteTimeoutClosesAsSlow: a client that stops reading with a queue too large to overflow
// is dropped when a write to it blocks past the write timeout, and is told, as a client whose
// queue overflowed is, that it reads too slowly and should reconnect with its sessionId: the
// frame the write stopped in is finished first, so the close frame can be read, and every
// transfer it read is one it was charged for.
func TestWriteTimeoutClosesAsSlow(t *testing.T) {
	const sndbuf, rcvbuf = 16 << 10, 16 << 10
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) {
		c.QueueSize, c.QueuePerFilter, c.QueueMax, c.SendBuffer = 100_000, 0, 100_000, sndbuf
		c.WriteTimeout = time.Second
	})
	c := w.dialSmall(r, "kwt", rcvbuf)
	from := addr(92)
	c.subscribe(map[string]any{"from": []string{from}})
	pad := strings.Repeat("x", 1<<10)
	ts := make([]*eventsv1.Transfer, 400)
	for i := range ts {
		ts[i] = transferMsg(from, addr(93), 100)
		ts[i].TokenName = pad
	}
	w.publish(ts...)
	// The client reads nothing for longer than the write timeout, then reads again (before the
	// rest of the frame the write stopped in has timed out too).
	time.Sleep(1500 * time.Millisecond)
	got, err := readTransfers(t, c, nil, nil)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("after %d transfers the connection ended with %v, want 1008", len(got), err)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Reason != "write timed out: the client reads too slowly; reconnect with your sessionId" {
		t.Fatalf("close reason %q, want the slow-client reason", ce.Reason)
	}
	if r.metricWith(t, "stream_slow_clients_dropped_total", `reason="queue_full"`) != 0 {
		t.Fatal("the queue overflowed: the test did not reach the write timeout")
	}
	if n := r.metricWith(t, "stream_slow_clients_dropped_total", `reason="write_timeout"`); n != 1 {
		t.Fatalf("%v write-timeout drops counted, want 1", n)
	}
	if credits := w.credits(t, "kwt", len(got)); credits != len(got) {
		t.Fatalf("charged %d credits for the %d transfers the client read", credits, len(got))
	}
}

// TestSlowReaderOverflowGetsTheCloseFrame: a client that keeps reading, but slowly (a 1 KiB
// transfer every 250 ms, behind 4 KiB socket buffers), overflows its queue while the writer is
// blocked on its socket in the middle of a batch that takes seconds to reach it, and is told so:
// 1008 with the overflow reason, the close frame coming after the message the batch was in and
// those already in the buffers, rather than a connection cut under the writer. Every transfer it
// read is one it was charged for.
func TestSlowReaderOverflowGetsTheCloseFrame(t *testing.T) {
	const sndbuf, rcvbuf = 4 << 10, 4 << 10
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) {
		c.QueueSize, c.QueuePerFilter, c.QueueMax, c.SendBuffer = 100, 0, 100, sndbuf
		c.WriteTimeout = time.Minute // the overflow, not a write timeout, ends it
	})
	c := w.dialSmall(r, "kso", rcvbuf)
	from := addr(94)
	c.subscribe(map[string]any{"from": []string{from}})
	type end struct {
		got int
		err error
	}
	ended := make(chan end, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		got := 0
		for {
			_, b, err := c.c.Read(ctx)
			if err != nil {
				ended <- end{got, err}
				return
			}
			if strings.Contains(string(b), `"type":"transfer"`) {
				got++
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()
	pad := strings.Repeat("x", 1<<10)
	publish := func(n int) {
		ts := make([]*eventsv1.Transfer, n)
		for i := range ts {
			ts[i] = transferMsg(from, addr(95), 100)
			ts[i].TokenName = pad
		}
		w.publish(ts...)
	}
	// 90 fit the queue; the writer takes a batch of them (up to 32 KiB), of which the buffers
	// take some 16 KiB at once and the client the rest at about 5 KiB a second.
	publish(90)
	for deadline := time.Now().Add(30 * time.Second); r.metric(t, "stream_transfers_delivered_total") < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing was ever written to the client")
		}
	}
	time.Sleep(500 * time.Millisecond)
	publish(60) // the queue overflows while that batch is still being written
	var e end
	select {
	case e = <-ended:
	case <-time.After(60 * time.Second):
		t.Fatal("the connection never ended")
	}
	t.Logf("%d transfers read, then %v", e.got, e.err)
	var ce websocket.CloseError
	if !errors.As(e.err, &ce) || ce.Code != websocket.StatusPolicyViolation ||
		ce.Reason != "send queue overflow: the client reads too slowly; reconnect with your sessionId" {
		t.Fatalf("after %d transfers the connection ended with %v, want 1008 and the overflow reason", e.got, e.err)
	}
	if n := r.metricWith(t, "stream_slow_clients_dropped_total", `reason="queue_full"`); n != 1 {
		t.Fatalf("%v queue-full drops counted, want 1", n)
	}
	if n := r.metricWith(t, "stream_slow_clients_dropped_total", `reason="write_timeout"`); n != 0 {
		t.Fatalf("%v write-timeout drops counted, want 0", n)
	}
	if credits := w.credits(t, "kso", e.got); credits != e.got {
		t.Fatalf("charged %d credits for the %d transfers the client read", credits, e.got)
	}
}
