package ws

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// A checkpoint charges what the connection delivered before it only when its save succeeds;
// one refused because another connection took the session over charges nothing (that
// connection resumes from the last save and charges what it sends again), and gives the
// quota credits back. Before, every delivery was charged as it was written: 3+2.
func TestCheckpointChargesOnlyWhatItSaved(t *testing.T) {
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
	if credits != 3 {
		t.Fatalf("charged %d credits; want 3 (the 2 delivered after the last save are the new owner's to charge)", credits)
	}
	if got, err := st.Get(ctx, id, "k"); err != nil || got.Used != 3 {
		t.Fatalf("the session's transfersUsed %d (%v); want 3", got.Used, err)
	}
	if d := c.takeReleased(); d.n != 0 {
		t.Fatalf("%d deliveries still waiting to be charged after the refused save; want them dropped", d.n)
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

// TestDeliveredSplitsAtTheFreshClaim: a save refused for a fresh take-over charges what was
// delivered up to the fresh claim's millisecond, each part keeping its hours.
func TestDeliveredSplitsAtTheFreshClaim(t *testing.T) {
	h0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	var d delivered
	d.add(h0.Add(59*time.Minute), h0, 2)
	d.add(h0.Add(61*time.Minute), h0.Add(time.Hour), 3)
	d.add(h0.Add(62*time.Minute), h0.Add(time.Hour), 4)
	before, after := d.split(h0.Add(61 * time.Minute))
	if before.n != 5 || len(before.hours) != 2 || !before.first.Equal(h0.Add(59*time.Minute)) {
		t.Fatalf("before: %+v", before)
	}
	if after.n != 4 || len(after.hours) != 1 || after.hours[0].n != 4 || !after.first.Equal(h0.Add(62*time.Minute)) {
		t.Fatalf("after: %+v", after)
	}
	if all, none := d.split(time.Time{}); all.n != 9 || none.n != 0 {
		t.Fatalf("no claim time: %d and %d", all.n, none.n)
	}
}
