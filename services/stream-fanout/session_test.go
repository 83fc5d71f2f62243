package streamfanout_test

import (
	"context"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// sentinel publishes a transfer every filter of the tests below matches and checks it is the
// next delivery: nothing was delivered twice before it.
func sentinel(t *testing.T, w *world, c *client, from string) {
	t.Helper()
	s := transferMsg(from, addr(99), 1)
	w.publish(s)
	if id, _, _ := c.transfer(); id != s.Id {
		t.Fatalf("got %s before the sentinel %s: a duplicate or a stray delivery", id, s.Id)
	}
}

// TestReconnectWithinWindow: transfers matched while the client was away are replayed on
// reconnect, in order and once, after the ack that lists the restored filters.
func TestReconnectWithinWindow(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	from := addr(40)
	c := w.dial(r, ident("kr"), "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	first := transferMsg(from, addr(41), 1)
	w.publish(first)
	c.transfer()
	_ = c.c.CloseNow()

	var away []*eventsv1.Transfer
	for range 5 {
		away = append(away, transferMsg(from, addr(41), 2))
	}
	w.publish(away...)
	c2 := w.dial(r, ident("kr"), "")
	// Another key cannot take the session.
	other := w.dial(r, ident("intruder"), "")
	other.send("reconnect", map[string]any{"sessionId": sess})
	other.expectError("NO_SESSION")

	id := c2.send("reconnect", map[string]any{"sessionId": sess})
	m := c2.next()
	if m.Type != "ack" || m.Payload["messageId"] != id {
		t.Fatalf("reconnect: %s", m.raw)
	}
	d := m.Payload["data"].(map[string]any)
	fs := d["filters"].([]any)
	if d["sessionId"] != sess || len(fs) != 1 || fs[0].(map[string]any)["filterId"] != fid {
		t.Fatalf("reconnect ack %s", m.raw)
	}
	for i, tr := range away {
		if got, alert, _ := c2.transfer(); got != tr.Id || alert != fid {
			t.Fatalf("replay %d: %s (%s), want %s (%s)", i, got, alert, tr.Id, fid)
		}
	}
	sentinel(t, w, c2, from)
}

// TestReconnectAfterWindow: a session not reconnected within the window is gone.
func TestReconnectAfterWindow(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.Window = 300 * time.Millisecond })
	c := w.dial(r, ident("kw"), "")
	_, sess := c.subscribe(map[string]any{"from": []string{addr(50)}})
	_ = c.c.CloseNow()
	// Wait for Redis to expire it (the window is Redis's TTL on the session).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for w.rdb.Exists(ctx, w.prefix+"s:"+sess).Val() == 1 {
		if ctx.Err() != nil {
			t.Fatal("session never expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	c2 := w.dial(r, ident("kw"), "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	c2.expectError("NO_SESSION")
}

// TestFailoverBetweenReplicas: two replicas on one broker and Redis. The first is stopped
// between two matching transfers; the client reconnects to the second with its sessionId and
// receives every matching transfer exactly once, in order.
func TestFailoverBetweenReplicas(t *testing.T) {
	w := newWorld(t)
	a := w.start(nil)
	b := w.start(nil)
	from := addr(60)
	c := w.dial(a, ident("kf2"), "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	t1 := transferMsg(from, addr(61), 1)
	w.publish(t1)
	if id, _, _ := c.transfer(); id != t1.Id {
		t.Fatalf("first delivery %s", id)
	}
	a.stop()
	// The client was told to go away (1001) and can reconnect elsewhere.
	if _, _, err := c.c.Read(context.Background()); err == nil {
		t.Fatal("connection to the stopped replica still open")
	}
	var rest []*eventsv1.Transfer
	for range 3 {
		rest = append(rest, transferMsg(from, addr(61), 2))
	}
	w.publish(rest...)
	c2 := w.dial(b, ident("kf2"), "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	if m := c2.next(); m.Type != "ack" {
		t.Fatalf("reconnect on the second replica: %s", m.raw)
	}
	for i, tr := range rest {
		if id, alert, _ := c2.transfer(); id != tr.Id || alert != fid {
			t.Fatalf("delivery %d on the second replica: %s, want %s", i, id, tr.Id)
		}
	}
	sentinel(t, w, c2, from)
}
