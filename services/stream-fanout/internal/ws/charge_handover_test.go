package ws

import (
	"context"
	"testing"
	"time"

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
