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
	st, now, clock := quotaStore(t)
	limits := func(string) store.Limits { return returnLimits }
	ctx := context.Background()
	var used int64
	for i := range 20 {
		q := newQuotas(st, limits, 8, clock, time.Second, nil)
		kq := q.attach("k")
		// 7 of a lease of 8 leaves 1, below half: the next lease is taken in the background.
		got, _, r, err := q.take(ctx, kq, "t", 7)
		if err != nil || r.limitType != "" || got != 7 {
			t.Fatalf("take %d: %d %q %v", i, got, r.limitType, err)
		}
		used += got
		q.returnAll(ctx)
		q.settleForTest()
	}
	checkRedisUsed(t, st, now, used)
}

// A writer still running when returnAll has run (the shutdown's wait ended first) gives back
// what its batch did not use, and takes no more than it uses: Redis again counts exactly the
// credits the writers used.
func TestCreditsAfterReturnAllGoBackToRedis(t *testing.T) {
	st, now, clock := quotaStore(t)
	limits := func(string) store.Limits { return returnLimits }
	ctx := context.Background()
	q := newQuotas(st, limits, 64, clock, time.Second, nil)
	kq := q.attach("k")
	// A batch takes 10 before shutdown, and uses 4 of them.
	got, hour, r, err := q.take(ctx, kq, "t", 10)
	if err != nil || r.limitType != "" || got != 10 {
		t.Fatalf("take: %d %q %v", got, r.limitType, err)
	}
	q.returnAll(ctx)
	q.giveBack(kq, hour, 6)
	used := int64(4)
	// Another batch starts after returnAll and uses all it takes.
	if err := q.prime(ctx, kq, "t"); err != nil {
		t.Fatal(err)
	}
	got, _, r, err = q.take(ctx, kq, "t", 3)
	if err != nil || r.limitType != "" || got != 3 {
		t.Fatalf("take after returnAll: %d %q %v", got, r.limitType, err)
	}
	used += got
	q.settleForTest()
	checkRedisUsed(t, st, now, used)
}

var returnLimits = store.Limits{Hourly: 100_000, Monthly: 1_000_000}

// quotaStore is a quota store on a fresh Redis prefix with a fixed clock.
func quotaStore(t *testing.T) (*store.Store, time.Time, func() time.Time) {
	t.Helper()
	rdb, _ := redistest.Client(t)
	// Later than any run: every count expires at its period's end.
	now := time.Date(2099, 3, 10, 14, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	return store.New(rdb, fmt.Sprintf("qr%d:", rand.Uint64()), clock, store.PeriodClock(clock)), now, clock
}

// checkRedisUsed fails unless Redis counts exactly used credits of key k's hour at now.
func checkRedisUsed(t *testing.T, st *store.Store, now time.Time, used int64) {
	t.Helper()
	h, _, err := st.Counted(context.Background(), st.WindowAt("k", now))
	if err != nil {
		t.Fatal(err)
	}
	if h != used {
		t.Fatalf("Redis counts %d credits used, the writers used %d", h, used)
	}
}
