package ws

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// engineSubs is how many subscriptions h's engine holds.
func engineSubs(t *testing.T, h *Hub) int {
	t.Helper()
	var n int
	if !h.o.Engine.Do(context.Background(), func() { n = h.o.Engine.Subs() }) {
		t.Fatal("the engine is not running")
	}
	return n
}

// owedSession gives session id of takeoverHub a cursor and a replay buffer, as a connection's
// save leaves them.
func owedSession(t *testing.T, st *store.Store, id string, cursor map[int]int64, replay ...string) {
	t.Helper()
	u := store.Update{Cursor: cursor}
	for _, r := range replay {
		u.Replay = append(u.Replay, []byte(r))
	}
	if err := st.Apply(context.Background(), id, "", time.Minute, u); err != nil {
		t.Fatal(err)
	}
}

// checkHandedBack fails unless session id is unowned in Redis and on this replica, with cursor
// and the replay buffer replay (read by claiming it for another connection).
func checkHandedBack(t *testing.T, h *Hub, st *store.Store, id string, cursor map[int]int64, replay ...string) {
	t.Helper()
	ctx := context.Background()
	ss, err := st.Get(ctx, id, "k")
	if err != nil {
		t.Fatal(err)
	}
	if ss.Owner != "" || h.owner(id) != nil {
		t.Fatalf("Redis owner %q, map owner %v: the session was not handed back", ss.Owner, h.owner(id))
	}
	ss, err = st.Claim(ctx, id, "k", "reader", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range ss.Replay {
		got = append(got, string(r))
	}
	if !slices.Equal(got, replay) || (cursor != nil && (!ss.HasCursor || !mapsEqual(ss.Cursor, cursor))) {
		t.Fatalf("handed back with cursor %v (set %v) and replay %q; want cursor %v and replay %q", ss.Cursor, ss.HasCursor, got, cursor, replay)
	}
}

func mapsEqual(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A connection ending after its reconnect claimed the session in Redis but before it recorded
// the session as its own (here: while the engine is busy and the claim waits to subscribe)
// leaves neither a stale owner in Redis nor a subscription in the engine: the claim, finding
// the connection ended, hands the session back, replay buffer included, and subscribes nothing.
func TestEndDuringClaimHandsTheSessionBack(t *testing.T) {
	h, st, id := takeoverHub(t)
	owedSession(t, st, id, map[int]int64{0: 5}, "r1", "r2")
	busy, gate := make(chan struct{}), make(chan struct{})
	go h.o.Engine.Do(context.Background(), func() { close(busy); <-gate })
	<-busy
	c := standIn(t, h, "b")
	done := make(chan error, 1)
	go func() {
		done <- c.resume(id, false, func() { t.Error("the ack of a claim whose connection ended was sent") })
	}()
	for {
		ss, err := st.Get(context.Background(), id, "k")
		if err != nil {
			t.Fatal(err)
		}
		if ss.Owner == "b" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.save() // the connection ends (end's save), while its claim waits for the engine
	close(gate)
	if err := <-done; !errors.Is(err, errEnded) {
		t.Fatalf("resume: %v; want errEnded", err)
	}
	if n := engineSubs(t, h); n != 0 {
		t.Fatalf("%d subscriptions left in the engine; want none", n)
	}
	if sub, sid := c.current(); sub != nil || sid != "" {
		t.Fatalf("the ended connection serves session %q", sid)
	}
	checkHandedBack(t, h, st, id, map[int]int64{0: 5}, "r1", "r2")
}

// A connection ending once its reconnect has claimed and subscribed but before it queued what
// the session was owed saves the session where the resume started: its cursor (not the
// engine's position, past transfers not read back yet) and its whole replay buffer.
func TestEndBeforeTheReplayKeepsWhatWasOwed(t *testing.T) {
	h, st, id := takeoverHub(t)
	// Nothing listens there: a catch-up reaching it fails (none should).
	h.o.Transfers = feed.Topic{Brokers: []string{"127.0.0.1:1"}, Name: "transfers"}
	h.o.Engine.Do(context.Background(), func() { h.o.Engine.SetPositions(map[int]int64{0: 10}) })
	owedSession(t, st, id, map[int]int64{0: 5}, "r1", "r2")
	c := standIn(t, h, "b")
	err := c.resume(id, false, func() { c.save() })
	if !errors.Is(err, errEnded) {
		t.Fatalf("resume: %v; want errEnded", err)
	}
	if n := engineSubs(t, h); n != 0 {
		t.Fatalf("%d subscriptions left in the engine; want none", n)
	}
	checkHandedBack(t, h, st, id, map[int]int64{0: 5}, "r1", "r2")
}

// A refused reconnect (a session that does not exist, one of another kind than the connection's
// route, another key's) leaves the connection serving the session it had, in the engine, in
// Redis and on this replica; a session claimed only to be refused is handed back.
func TestRefusedReconnectKeepsTheSession(t *testing.T) {
	h, st, id := takeoverHub(t)
	ctx := context.Background()
	for _, ss := range []store.Session{{ID: "v2-1", KeyID: "k", Kind: KindV2}, {ID: "other", KeyID: "k2", Kind: "rest"}} {
		ss.Created = time.Now()
		if err := st.Create(ctx, ss, time.Minute, 0); err != nil {
			t.Fatal(err)
		}
	}
	c := standIn(t, h, "b")
	if err := c.resume(id, false, func() {}); err != nil {
		t.Fatal(err)
	}
	sub, _ := c.current()
	for _, bad := range []string{"nope", "v2-1", "other"} {
		err := c.reconnect(Request{Type: TypeReconnect, ID: "m-" + bad, SessionID: bad})
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != CodeNoSession {
			t.Fatalf("reconnect to %s: %v; want %s", bad, err, CodeNoSession)
		}
		if got, sid := c.current(); got != sub || sid != id {
			t.Fatalf("after the refused reconnect to %s the connection serves %q; want %q", bad, sid, id)
		}
		checkOwner(t, h, st, id, c)
		if n := engineSubs(t, h); n != 1 {
			t.Fatalf("after the refused reconnect to %s the engine holds %d subscriptions; want 1", bad, n)
		}
	}
	if ss, err := st.Get(ctx, "v2-1", "k"); err != nil || ss.Owner != "" {
		t.Fatalf("the v2 stream refused to a session's route: owner %q, %v; want handed back", ss.Owner, err)
	}
}

// What a session's replay limits dropped is told once: a connection that ends before its
// reconnect's ack hands the count back with the session (the next reconnect tells it), and one
// that resumed keeps nothing of it for the next.
func TestDroppedIsToldOnce(t *testing.T) {
	h, st, id := takeoverHub(t)
	h.o.Transfers = feed.Topic{Brokers: []string{"127.0.0.1:1"}, Name: "transfers"}
	h.o.Engine.Do(context.Background(), func() { h.o.Engine.SetPositions(map[int]int64{0: 10}) })
	dropped := &store.Dropped{Count: 7, FirstMs: 1_700_000_000_000, LastMs: 1_700_000_001_000}
	if err := st.Apply(context.Background(), id, "", time.Minute, store.Update{Cursor: map[int]int64{0: 10}, Dropped: dropped}); err != nil {
		t.Fatal(err)
	}
	c := standIn(t, h, "b")
	var told *store.Dropped
	err := c.resumeGaps(id, false, func(_ []replayGap, d *store.Dropped) { told = d; c.save() })
	if !errors.Is(err, errEnded) || !reflect.DeepEqual(told, dropped) {
		t.Fatalf("resume: %v, told %+v; want errEnded after telling %+v", err, told, dropped)
	}

	c2 := standIn(t, h, "c")
	told = nil
	if err := c2.resumeGaps(id, false, func(_ []replayGap, d *store.Dropped) { told = d }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(told, dropped) {
		t.Fatalf("the next reconnect was told %+v; want %+v handed back", told, dropped)
	}
	c2.save()
	ss, err := st.Claim(context.Background(), id, "k", "reader", time.Minute, false)
	if err != nil || ss.Dropped != nil {
		t.Fatalf("after a reconnect told it: dropped %+v (%v); want none", ss.Dropped, err)
	}
}
