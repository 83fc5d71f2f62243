package ws

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// A checkpoint charges what the connection delivered since the last save, and so does one
// refused because another connection took the session over: the client had those deliveries,
// and whether the new connection sends them again is the client's to decide (it may not), so
// they are not left to it. The new connection's resume from the last save may charge them
// again: at most a checkpoint's deliveries, charged twice, never none.
func TestRefusedSaveChargesWhatWasDelivered(t *testing.T) {
	rdb, _ := redistest.Client(t)
	st := store.New(rdb, "ch:", nil)
	e := engine.New(engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	pub := &fakePub{}
	m := NewMeter(pub, time.Hour, nil)
	h := NewHub(Options{Engine: e, Store: st, Meter: m})
	id := "sess-1"
	if err := st.Create(ctx, store.Session{ID: id, KeyID: "k", Kind: KindWS, Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	c := standIn(t, h, "a")
	ss, err := st.Claim(ctx, id, "k", "a", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.attach(ss, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := h.add(c); err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Truncate(time.Hour)
	c.account([]heldCredits{{3, hour}}, time.Now())
	h.checkpoint(ctx)
	c.account([]heldCredits{{2, hour}}, time.Now())
	if _, err := st.Claim(ctx, id, "k", "b", time.Minute, false); err != nil { // another replica's reconnect
		t.Fatal(err)
	}
	h.checkpoint(ctx)
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var credits int64
	for _, u := range pub.got {
		credits += u.GetCredits()
	}
	if credits != 5 {
		t.Fatalf("charged %d credits; want 5 (the 2 delivered after the last save too)", credits)
	}
	if got, err := st.Get(ctx, id, "k"); err != nil || got.Used != 3 {
		t.Fatalf("the session's transfersUsed %d (%v); want 3", got.Used, err)
	}
	if d := c.takeReleased(); d.n != 0 {
		t.Fatalf("%d deliveries still waiting to be charged after the refused save; want none", d.n)
	}
}

// A save refused because another connection claimed the session fresh (from the topic's end),
// or because the session was deleted, charges what it covered: nobody sends those deliveries
// again. Before, their quota credits were given back and they were never metered: a client
// reconnecting with fresh=true on another replica, or deleting its session, before each save
// got its transfers free and past its hourly quota.
func TestFreshTakeOverAndDeletionChargeTheRefusedSave(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(ctx context.Context, w *charging) error
	}{
		{"fresh take-over", func(ctx context.Context, w *charging) error {
			_, err := w.st.Claim(ctx, w.id, "k", "b", time.Minute, true)
			return err
		}},
		{"deletion", func(ctx context.Context, w *charging) error {
			_, err := w.st.Delete(ctx, w.id, "k")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newCharging(t, "chf"+tc.name[:1]+":")
			ctx := context.Background()
			w.c.account([]heldCredits{{4, time.Now().Truncate(time.Hour)}}, time.Now())
			if err := tc.after(ctx, w); err != nil {
				t.Fatal(err)
			}
			w.h.checkpoint(ctx)
			if got := w.credits(t); got != 4 {
				t.Fatalf("charged %d credits for 4 deliveries nobody sends again", got)
			}
		})
	}
}
