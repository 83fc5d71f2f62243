package ws

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// takeoverHub is a hub on a running engine and a fresh Redis database, with a session made over
// REST (no cursor yet) of key "k".
func takeoverHub(t *testing.T) (*Hub, *store.Store, string) {
	t.Helper()
	rdb, _ := redistest.Client(t)
	st := store.New(rdb, "tk:", nil)
	e := engine.New(engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	h := NewHub(Options{Engine: e, Store: st})
	id := "sess-1"
	if err := st.Create(ctx, store.Session{ID: id, KeyID: "k", Kind: "rest", Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	return h, st, id
}

// standIn is a connection of key k whose end the test plays: kicking it does nothing (it is
// already released) and its ended channel is closed by the test, as its save would.
func standIn(t *testing.T, h *Hub, token string) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &conn{h: h, id: Identity{KeyID: "k"}, token: token, q: newQueue(queueSize{Base: 16}), ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	c.released.Store(true)
	return c
}

// Two reconnects of one session arriving together on a replica take it over one after the
// other: the second ends, and waits for, the first, never the connection both found; so the
// owners map always names the connection Redis says owns the session (a map naming the
// earlier one, whose end removes the entry, would let a later reconnect claim without the
// newest owner's save).
func TestTakeOversOfOneSessionFollowEachOther(t *testing.T) {
	h, st, id := takeoverHub(t)
	a := standIn(t, h, "a")
	h.own(id, a)
	conns := []*conn{standIn(t, h, "b"), standIn(t, h, "c")}
	done := make(chan *conn, 2)
	for _, c := range conns {
		go func() {
			if err := c.resume(id, false, func() {}); err != nil {
				t.Errorf("resume %s: %v", c.token, err)
			}
			done <- c
		}()
	}
	close(a.ended) // a's save
	first := <-done
	// The other one waits for first's save: it has not claimed.
	time.Sleep(200 * time.Millisecond)
	select {
	case c := <-done:
		t.Fatalf("%s claimed the session while %s, which claimed it before, had not saved it", c.token, first.token)
	default:
	}
	checkOwner(t, h, st, id, first)
	close(first.ended)
	second := <-done
	checkOwner(t, h, st, id, second)
	if len(h.turns) != 0 {
		t.Fatalf("take-over turns left behind: %v", h.turns)
	}
}

func checkOwner(t *testing.T, h *Hub, st *store.Store, id string, want *conn) {
	t.Helper()
	ss, err := st.Get(context.Background(), id, "k")
	if err != nil {
		t.Fatal(err)
	}
	if ss.Owner != want.token || h.owner(id) != want {
		t.Fatalf("Redis owner %q, map owner %v; want %q in both", ss.Owner, h.owner(id), want.token)
	}
}

// A connection ending while every save turn is taken waits for one and saves its session,
// however long that takes: giving the save up would make its reconnect resume from now (a
// session never saved) and lose what the connection was owed.
func TestSaveWaitsForATurn(t *testing.T) {
	h, st, id := takeoverHub(t)
	h.saves.timeout = 50 * time.Millisecond
	c := standIn(t, h, "b")
	if err := c.resume(id, false, func() {}); err != nil {
		t.Fatal(err)
	}
	for range cap(h.saves.turns) {
		h.saves.turns <- struct{}{}
	}
	saved := make(chan struct{})
	go func() { c.save(); close(saved) }()
	// Once the save waits for a turn, give it four of its timeouts to give up in (it must not):
	// a wait that began late on a loaded machine would otherwise shorten that.
	for h.saves.pending.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(4 * h.saves.timeout)
	select {
	case <-saved:
		t.Fatal("the save gave up waiting for a turn")
	default:
	}
	for range cap(h.saves.turns) {
		<-h.saves.turns
	}
	<-saved
	ss, err := st.Get(context.Background(), id, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !ss.HasCursor || ss.Owner != "" || h.owner(id) != nil {
		t.Fatalf("after the save: cursor saved %v, owner %q, map owner %v; want saved and released", ss.HasCursor, ss.Owner, h.owner(id))
	}
}
