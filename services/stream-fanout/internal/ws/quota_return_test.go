package ws

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// On shutdown every credit leased and not delivered goes back to Redis, including a lease
// being taken ahead in the background when returnAll runs: Redis then counts exactly the
// credits the writers used.
func TestReturnAllGivesBackLeasesTakenAhead(t *testing.T) {
	rdb, _ := redistest.Client(t)
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := store.New(rdb, fmt.Sprintf("qr%d:", rand.Uint64()), clock)
	lim := store.Limits{Hourly: 100_000, Monthly: 1_000_000}
	limits := func(string) store.Limits { return lim }
	ctx := context.Background()
	var used int64
	for i := range 20 {
		q := newQuotas(st, limits, 8, clock)
		kq := q.key("k")
		// 7 of a lease of 8 leaves 1, below half: the next lease is taken in the background.
		got, _, lt, _, err := q.take(ctx, kq, "k", "t", 7)
		if err != nil || lt != "" || got != 7 {
			t.Fatalf("take %d: %d %q %v", i, got, lt, err)
		}
		used += got
		q.returnAll(ctx)
	}
	w := st.WindowAt("k", now)
	left, _, err := st.Lease(ctx, w, lim, lim.Hourly)
	if err != nil {
		t.Fatal(err)
	}
	if left != lim.Hourly-used {
		t.Fatalf("Redis counts %d credits used, the writers used %d", lim.Hourly-left, used)
	}
}
