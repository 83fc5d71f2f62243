package ws

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// TestFreshThenResumingTakeOverChargesOnce: a fresh take-over, then, before the fresh owner
// saved, a resuming one. The first owner's refused save finds its fresh mark and charges what it
// delivered since its last save; the resuming claim must therefore not get that save's cursor,
// from which it would send those deliveries again and charge them a second time.
func TestFreshThenResumingTakeOverChargesOnce(t *testing.T) {
	w := newCharging(t, "r2f:")
	ctx := context.Background()
	w.h.checkpoint(ctx)
	if err := w.st.Apply(ctx, w.id, "a", time.Minute, store.Update{Cursor: map[int]int64{0: 10}}); err != nil {
		t.Fatal(err)
	}
	w.c.account([]heldCredits{{4, time.Now().Truncate(time.Hour)}}, time.Now()) // offsets 10..13
	if _, err := w.st.Claim(ctx, w.id, "k", "b", time.Minute, true); err != nil {
		t.Fatal(err)
	}
	ss, err := w.st.Claim(ctx, w.id, "k", "c", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	w.h.checkpoint(ctx) // a's save, refused: taken over fresh
	if got := w.credits(t); got != 4 {
		t.Fatalf("a charged %d credits for its 4 deliveries, want 4", got)
	}
	if ss.HasCursor || ss.Cursor[0] == 10 {
		t.Fatalf("the resuming claim got a's saved cursor %v (hascursor %v): it would send a's 4 deliveries again and charge them again", ss.Cursor, ss.HasCursor)
	}
}

// TestResumingTakeOverThenDeletionChargesOnce: a resuming take-over on another replica, then
// the session's deletion. The new owner sent again, and charges, what the stale owner delivered
// since its last save; the stale owner's refused save must be told it was taken over (and drop
// those deliveries), not that the session was deleted (and charge them too).
func TestResumingTakeOverThenDeletionChargesOnce(t *testing.T) {
	w := newCharging(t, "r2d:")
	ctx := context.Background()
	if err := w.st.Apply(ctx, w.id, "a", time.Minute, store.Update{Cursor: map[int]int64{0: 10}}); err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Truncate(time.Hour)
	w.c.account([]heldCredits{{4, hour}}, time.Now())
	ss, err := w.st.Claim(ctx, w.id, "k", "b", time.Minute, false)
	if err != nil || ss.Cursor[0] != 10 {
		t.Fatalf("claim %v %v", ss.Cursor, err)
	}
	b := standIn(t, w.h, "b")
	if _, _, err := b.attach(ss, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := w.h.add(b); err != nil {
		t.Fatal(err)
	}
	b.account([]heldCredits{{4, hour}}, time.Now()) // b's replay of a's 4
	if _, err := w.st.Delete(ctx, w.id, "k"); err != nil {
		t.Fatal(err)
	}
	w.h.checkpoint(ctx) // a's save: taken over; b's: deleted
	if got := w.credits(t); got != 4 {
		t.Fatalf("charged %d credits for 4 transfers (a's deliveries and b's replay of them)", got)
	}
}

// TestInBandReleaseDuringAWriteChargesOnce: an in-band release (a reconnect to another session)
// while the writer has a batch on the socket. The release's save puts the batch in the replay
// buffer, which the session's next resume sends, and charges, again; the batch's write
// finishing after must then not count it toward the connection's next charge.
func TestInBandReleaseDuringAWriteChargesOnce(t *testing.T) {
	w := newCharging(t, "r2i:")
	ctx := context.Background()
	r := &engine.Rendered{Part: 0, Off: 5, JSON: []byte(`{}`)}
	w.c.q.push(out{item: engine.Item{R: r}, credit: true})
	if _, ok := w.c.q.next(); !ok { // the writer takes it into its batch
		t.Fatal("nothing queued")
	}
	if err := w.c.detach(ctx, false); err != nil { // the in-band reconnect's release
		t.Fatal(err)
	}
	w.c.settle([]batchMark{{end: 1, inflight: true, credit: true, r: r, hour: time.Now().Truncate(time.Hour)}}, 1, nil)
	_ = w.c.detach(ctx, true) // the connection's end, serving no session: charges what it accounted
	ss, err := w.st.Claim(ctx, w.id, "k", "b", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Replay) != 1 {
		t.Fatalf("the replay buffer holds %d message(s), want the batch's 1", len(ss.Replay))
	}
	if got := w.credits(t); got != 0 {
		t.Fatalf("charged %d credit(s) for the batch the resume sends again from the replay buffer and charges", got)
	}
}
