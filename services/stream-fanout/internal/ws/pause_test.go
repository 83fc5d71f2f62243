package ws

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// A writer paused because the quota could not be checked still answers the client: an ack
// queued behind a delivery waiting for its credit is written, the delivery stays owed.
func TestPausedWriterStillSendsAcks(t *testing.T) {
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	c := &conn{h: &Hub{writers: newWriterPool(1, time.Second, writerStall)}, cc: &corkConn{Conn: srv}, q: newQueue(queueSize{Base: 8})}
	c.wctx, c.wstop = context.WithCancel(context.Background())
	defer c.wstop()
	c.q.wake = c.wake
	c.paused.Store(monoNow() + int64(time.Hour))
	owed := &engine.Rendered{Part: 0, Off: 7, JSON: []byte(`{"id":"t"}`)}
	c.q.unnext(out{item: engine.Item{R: owed, FilterID: "f"}, credit: true})
	c.ack("m1", "subscribed", nil)

	_ = cli.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hdr [2]byte
	if _, err := io.ReadFull(cli, hdr[:]); err != nil {
		t.Fatalf("no frame from a paused writer: %v", err)
	}
	msg := make([]byte, hdr[1]&0x7f)
	if _, err := io.ReadFull(cli, msg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(msg, []byte(`"type":"ack"`)) || !bytes.Contains(msg, []byte(`"m1"`)) {
		t.Fatalf("first message %s, want the ack", msg)
	}
	if !c.q.pending() || c.q.lowest()[0] != 7 {
		t.Fatalf("the delivery waiting for its credit must stay owed")
	}
}
