package streamfanout_test

import (
	"context"
	"errors"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
)

// waitOwned waits until session sess is stored with an owner (a save stored it) and returns
// the owner.
func (w *world) waitOwned(sess string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if o := w.rdb.HGet(ctx, w.prefix+"s:"+sess, "owner").Val(); o != "" {
			return o
		}
		if ctx.Err() != nil {
			w.t.Fatalf("session %s never stored again", sess)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisLostTheSession: Redis restarted empty (its database flushed, here) under a healthy
// connection. The session's hash is missing, not owned by another connection: the connection,
// which holds the filters and its position, stores the session again at its next save and goes
// on; it is listed again, and a reconnect after it gets the filters and everything owed.
func TestRedisLostTheSession(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.Checkpoint = 50 * time.Millisecond })
	from := addr(60)
	id := ident("klost")
	c := w.dial(r, id, "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	owner := w.waitOwned(sess)

	if err := w.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if got := w.waitOwned(sess); got != owner {
		t.Fatalf("session stored again owned by %q, want the connection's %q", got, owner)
	}
	// The connection was not closed: it still delivers.
	live := transferMsg(from, addr(61), 1)
	w.publish(live)
	if got, alert, _ := c.transfer(); got != live.Id || alert != fid {
		t.Fatalf("after the flush got %s (%s), want %s (%s)", got, alert, live.Id, fid)
	}
	var list []map[string]any
	w.call(r, id, "GET", "/ws/sessions", "").json(t, &list)
	if len(list) != 1 || list[0]["sessionId"] != sess || list[0]["isConnected"] != true {
		t.Fatalf("sessions after the flush: %v", list)
	}

	_ = c.c.CloseNow()
	var away []*eventsv1.Transfer
	for range 3 {
		away = append(away, transferMsg(from, addr(61), 2))
	}
	w.publish(away...)
	c2 := w.dial(r, id, "")
	mid := c2.send("reconnect", map[string]any{"sessionId": sess})
	m := c2.next()
	want := `{"type":"ack","payload":{"messageId":"` + mid + `","success":true,"message":"reconnected","data":{"sessionId":"` + sess +
		`","filters":[{"filterId":"` + fid + `","filters":{"from":["` + from + `"]}}]}}}`
	if !jsonEqual(t, m.raw, []byte(want)) {
		t.Fatalf("reconnect: got %s\nwant %s", m.raw, want)
	}
	for i, tr := range away {
		if got, alert, _ := c2.transfer(); got != tr.Id || alert != fid {
			t.Fatalf("replay %d: %s (%s), want %s (%s)", i, got, alert, tr.Id, fid)
		}
	}
	sentinel(t, w, c2, from)
}

// TestDeletedSessionEndsItsConnection: a session deleted over REST while connected is not
// stored again by its connection (a deletion leaves a tombstone; only a hash missing without
// one was lost by Redis): the connection is closed at its next save and a reconnect finds no
// session.
func TestDeletedSessionEndsItsConnection(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.Checkpoint = 50 * time.Millisecond })
	id := ident("kdel")
	c := w.dial(r, id, "")
	_, sess := c.subscribe(map[string]any{"from": []string{addr(62)}})
	expect(t, w.call(r, id, "DELETE", "/ws/sessions/"+sess, ""), 200, `{"message":"session deleted"}`)
	code, reason := c.closedWith(30 * time.Second)
	if code != websocket.StatusPolicyViolation || reason != "session deleted" {
		t.Fatalf("closed with %d %q, want 1008 \"session deleted\"", code, reason)
	}
	c2 := w.dial(r, id, "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	c2.expectError("NO_SESSION")
	if n := w.rdb.Exists(context.Background(), w.prefix+"s:"+sess).Val(); n != 0 {
		t.Fatal("the deleted session was stored again")
	}
}

// TestLostSessionRestoreKeepsUsedAndTheCap: a session Redis lost is stored again with the
// transfers it was charged as its connection last saved them (transfersUsed does not start
// again from 0), and only while its key is under its cap of live sessions and v2 streams: a
// key that filled its cap meanwhile is not taken over it; the save that found it so is
// answered NO_SESSION naming the limit, the connection closed with 1008 saying why, and the
// session is not listed.
func TestLostSessionRestoreKeepsUsedAndTheCap(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.Checkpoint = 50 * time.Millisecond })
	from := addr(63)
	id := ident("klostused")
	c := w.dial(r, id, "")
	_, sess := c.subscribe(map[string]any{"from": []string{from}})
	for range 3 {
		tr := transferMsg(from, addr(64), 1)
		w.publish(tr)
		if got, _, _ := c.transfer(); got != tr.Id {
			t.Fatalf("got %s, want %s", got, tr.Id)
		}
	}
	used := func() string {
		return w.rdb.HGet(context.Background(), w.prefix+"s:"+sess, "used").Val()
	}
	waitFor(t, "the checkpoint to save 3 transfers used", func() bool { return used() == "3" })
	// Redis lost the session's hash (a failover to a replica that never had it).
	w.rdb.Del(context.Background(), w.prefix+"s:"+sess)
	w.waitOwned(sess)
	if got := used(); got != "3" {
		t.Fatalf("transfersUsed after the restore %q, want 3 (what was charged before the loss)", got)
	}
	var list []map[string]any
	w.call(r, id, "GET", "/ws/sessions", "").json(t, &list)
	if len(list) != 1 || list[0]["sessionId"] != sess || list[0]["transfersUsed"] != float64(3) {
		t.Fatalf("sessions after the restore: %v", list)
	}

	// A replica that saves only on a client's message (no checkpoint comes), with a cap of 2:
	// a REST session (its restore is held to the cap; a subscribe message's is not) is lost,
	// and the key creates 2 sessions meanwhile.
	r2 := w.start(func(c *streamfanout.Config) { c.Checkpoint = time.Hour; c.MaxSessionsPerKey = 2 })
	id2 := ident("klostcap")
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(r2, id2, "POST", "/ws/sessions", "").json(t, &made)
	sess2 := made.SessionID
	c2 := w.dial(r2, id2, "?session_id="+sess2)
	c2.subscribe(map[string]any{"from": []string{from}})
	w.rdb.Del(context.Background(), w.prefix+"s:"+sess2)
	for range 2 {
		if a := w.call(r2, id2, "POST", "/ws/sessions", ""); a.status/100 != 2 {
			t.Fatalf("POST /ws/sessions: %d %s", a.status, a.body)
		}
	}
	mid := c2.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{from}}})
	// The answer, when it leaves before the close, is NO_SESSION naming the limit.
	want := `{"type":"error","payload":{"code":"NO_SESSION","messageId":"` + mid + `","message":"this session was lost by the store and not stored again: ` +
		`the key has 2 live sessions and v2 streams (the limit); delete one and subscribe again"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ce websocket.CloseError
	for {
		_, b, err := c2.c.Read(ctx)
		if err == nil {
			if !jsonEqual(t, b, []byte(want)) {
				t.Fatalf("subscribe over the cap: got %s\nwant %s", b, want)
			}
			continue
		}
		if !errors.As(err, &ce) {
			t.Fatalf("the connection was not closed: %v", err)
		}
		break
	}
	if ce.Code != websocket.StatusPolicyViolation || ce.Reason != "session lost by the store; the key is at its session limit" {
		t.Fatalf("closed with %d %q, want 1008 \"session lost by the store; the key is at its session limit\"", ce.Code, ce.Reason)
	}
	list = nil
	w.call(r2, id2, "GET", "/ws/sessions", "").json(t, &list)
	if len(list) != 2 || list[0]["sessionId"] == sess2 || list[1]["sessionId"] == sess2 {
		t.Fatalf("sessions after the refused restore: %v, want the two created", list)
	}
}

// waitFor waits until cond holds (it is what a test waits on: an observable state), failing
// after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
