package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/redis/go-redis/v9"
)

// quotaNow is the tests' clock: a fixed time later than any run, since every count expires at
// its period's end and one set in the past would be gone at once.
var quotaNow = time.Date(2099, 3, 10, 14, 59, 0, 0, time.UTC)

func quotaTestStore(t *testing.T) (*Store, *redis.Client) {
	t.Helper()
	rdb, _ := redistest.Client(t)
	return New(rdb, fmt.Sprintf("q%d:", rand.Uint64()), func() time.Time { return quotaNow }), rdb
}

// ops numbers the test's leases and returns as one replica does.
type ops struct{ seq int64 }

func (o *ops) next() Op { o.seq++; return Op{Replica: "r1", Seq: o.seq} }

// TestQuotaHitAndReset: leases stop at the hourly limit, name the window, and a new hour
// grants again; the monthly limit holds across hours.
func TestQuotaHitAndReset(t *testing.T) {
	s, _ := quotaTestStore(t)
	now := quotaNow
	ctx := context.Background()
	var o ops
	lim := Limits{Hourly: 5, Monthly: 8}
	w := s.WindowAt("k", now)
	if n, lt, err := leaseW(s, ctx, w, lim, 3, o.next(), false); err != nil || n != 3 || lt != "" {
		t.Fatalf("lease 1: %d %q %v", n, lt, err)
	}
	if n, _, _ := leaseW(s, ctx, w, lim, 3, o.next(), false); n != 2 {
		t.Fatalf("lease 2 granted %d, want the 2 left this hour", n)
	}
	if n, lt, _ := leaseW(s, ctx, w, lim, 1, o.next(), false); n != 0 || lt != LimitHourly {
		t.Fatalf("over the hour: %d %q", n, lt)
	}
	if w.HourEnd.Sub(now) != time.Minute {
		t.Fatalf("hour resets in %v", w.HourEnd.Sub(now))
	}
	// Returned credits can be leased again.
	if err := s.Return(ctx, w, 1, o.next()); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := leaseW(s, ctx, w, lim, 4, o.next(), false); n != 1 {
		t.Fatalf("after a return granted %d, want 1", n)
	}
	// The next hour resets the hourly count; the month still counts 5 of 8.
	w2 := s.WindowAt("k", now.Add(time.Minute))
	if n, _, _ := leaseW(s, ctx, w2, lim, 5, o.next(), false); n != 3 {
		t.Fatalf("next hour granted %d, want the month's 3 left", n)
	}
	if n, lt, _ := leaseW(s, ctx, w2, lim, 1, o.next(), false); n != 0 || lt != LimitMonthly {
		t.Fatalf("over the month: %d %q", n, lt)
	}
	// Another key is counted apart.
	if n, _, _ := leaseW(s, ctx, s.WindowAt("other", now), lim, 5, o.next(), false); n != 5 {
		t.Fatalf("another key granted %d", n)
	}
}

// TestQuotaSpent: Spent names the limit a lease would find used up, without counting
// anything itself.
func TestQuotaSpent(t *testing.T) {
	s, rdb := quotaTestStore(t)
	now := quotaNow
	ctx := context.Background()
	var o ops
	lim := Limits{Hourly: 5, Monthly: 8}
	w := s.WindowAt("k", now)
	spent := func(w Window, want string) {
		t.Helper()
		if lt, err := spentW(s, ctx, w, lim); err != nil || lt != want {
			t.Fatalf("spent: %q %v, want %q", lt, err, want)
		}
	}
	spent(w, "")
	if n, _, _ := leaseW(s, ctx, w, lim, 4, o.next(), false); n != 4 {
		t.Fatalf("granted %d", n)
	}
	spent(w, "")
	// Spent counted nothing: the fifth credit is still there.
	if n, _, _ := leaseW(s, ctx, w, lim, 2, o.next(), false); n != 1 {
		t.Fatalf("granted %d, want 1", n)
	}
	spent(w, LimitHourly)
	w2 := s.WindowAt("k", now.Add(time.Minute))
	spent(w2, "")
	if n, _, _ := leaseW(s, ctx, w2, lim, 5, o.next(), false); n != 3 {
		t.Fatalf("next hour granted %d", n)
	}
	spent(w2, LimitMonthly)
	// Spent writes nothing: a key never leased has no counts and no expiry set by the check.
	other := s.WindowAt("other", now)
	spent(other, "")
	if n, err := rdb.Exists(ctx, other.hourKey, other.monthKey, other.starvedKey).Result(); err != nil || n != 0 {
		t.Fatalf("after Spent %d of the window's keys exist (%v), want none", n, err)
	}
}

// A lease retried with its op (the first call's reply was lost after Redis ran it) answers
// the first grant and counts nothing more: the retry does not charge the key twice.
func TestLeaseRetryCountsOnce(t *testing.T) {
	s, _ := quotaTestStore(t)
	ctx := context.Background()
	lim := Limits{Hourly: 100, Monthly: 1000}
	w := s.WindowAt("k", quotaNow)
	op := Op{Replica: "r1", Seq: 7}
	for i := range 3 {
		if n, lt, err := leaseW(s, ctx, w, lim, 16, op, false); err != nil || n != 16 || lt != "" {
			t.Fatalf("call %d: %d %q %v", i, n, lt, err)
		}
	}
	// A retry asking a different size still answers what was granted.
	if n, _, _ := leaseW(s, ctx, w, lim, 64, op, false); n != 16 {
		t.Fatalf("retry granted %d, want the recorded 16", n)
	}
	// Another replica's lease with the same seq is its own.
	if n, _, _ := leaseW(s, ctx, w, lim, 4, Op{Replica: "r2", Seq: 7}, false); n != 4 {
		t.Fatalf("other replica granted %d", n)
	}
	if left, _, _ := leaseW(s, ctx, w, lim, 1000, Op{Replica: "r1", Seq: 8}, false); left != 100-16-4 {
		t.Fatalf("%d left, want %d: a retry was counted again", left, 100-16-4)
	}
}

// A return retried with its op (the first call timed out after Redis ran it) gives nothing
// back a second time, and an older op of the replica arriving late is a no-op too: a retried
// return creates no credit.
func TestReturnIsIdempotent(t *testing.T) {
	s, rdb := quotaTestStore(t)
	ctx := context.Background()
	lim := Limits{Hourly: 100, Monthly: 1000}
	w := s.WindowAt("k", quotaNow)
	if n, _, _ := leaseW(s, ctx, w, lim, 50, Op{Replica: "r1", Seq: 1}, false); n != 50 {
		t.Fatalf("granted %d", n)
	}
	ret := Op{Replica: "r1", Seq: 2}
	for range 3 {
		if err := s.Return(ctx, w, 10, ret); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Return(ctx, w, 10, Op{Replica: "r1", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	h, _ := rdb.Get(ctx, w.hourKey).Int64()
	m, _ := rdb.Get(ctx, w.monthKey).Int64()
	if h != 40 || m != 40 {
		t.Fatalf("counts %d/%d after one return of 10 retried, want 40/40", h, m)
	}
	// A return bigger than the count leaves it at zero, never below.
	if err := s.Return(ctx, w, 100, Op{Replica: "r1", Seq: 3}); err != nil {
		t.Fatal(err)
	}
	if h, _ := rdb.Get(ctx, w.hourKey).Int64(); h != 0 {
		t.Fatalf("hour count %d after an over-return, want 0", h)
	}
	// A return to a period whose counts are gone (it ended) recreates nothing.
	gone := s.WindowAt("gone", quotaNow)
	if err := s.Return(ctx, gone, 5, Op{Replica: "r1", Seq: 4}); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(ctx, gone.hourKey, gone.monthKey).Result(); n != 0 {
		t.Fatalf("a return to counts that expired made %d of them again", n)
	}
}

// Every key the quota scripts write expires at its period's end: the hour's counts and starved
// flag at the hour's end, the month's count and returns at the month's end, the replicas' last
// leases an hour past the month's end (a retry just after the turn still finds its grant).
func TestQuotaKeysExpireAtTheirPeriodsEnd(t *testing.T) {
	s, rdb := quotaTestStore(t)
	ctx := context.Background()
	lim := Limits{Hourly: 10, Monthly: 1000}
	w := s.WindowAt("k", quotaNow)
	if n, _, _ := leaseW(s, ctx, w, lim, 10, Op{Replica: "r1", Seq: 1}, false); n != 10 {
		t.Fatalf("granted %d", n)
	}
	if n, _, _ := leaseW(s, ctx, w, lim, 10, Op{Replica: "r2", Seq: 1}, false); n != 0 {
		t.Fatalf("granted %d past the limit", n)
	}
	if err := s.Return(ctx, w, 3, Op{Replica: "r1", Seq: 2}); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, s.prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{w.hourKey: w.HourEnd, s.qbase("k") + ":l": w.MonthEnd.Add(time.Hour), w.starvedKey: w.HourEnd,
		w.monthKey: w.MonthEnd, w.returnsKey: w.MonthEnd}
	if len(keys) != len(want) {
		t.Fatalf("keys written %v, want %d", keys, len(want))
	}
	for _, k := range keys {
		end, ok := want[k]
		if !ok {
			t.Fatalf("unexpected key %s", k)
		}
		at, err := rdb.PExpireTime(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if at <= 0 || at != time.Duration(end.UnixMilli())*time.Millisecond {
			t.Fatalf("%s expires at %v, want %v (its period's end)", k[strings.LastIndex(k, ":q:")+1:], at, end)
		}
	}
}

// The starved flag is set by a refusal of a caller holding no credit, not by one still holding
// credits (a lease taken ahead), and cleared by the next grant.
func TestStarvedFlag(t *testing.T) {
	s, _ := quotaTestStore(t)
	ctx := context.Background()
	lim := Limits{Hourly: 10, Monthly: 1000}
	w := s.WindowAt("k", quotaNow)
	var o ops
	starved := func(want bool) {
		t.Helper()
		got, err := s.Starved(ctx, []Window{w})
		if err != nil || got[0] != want {
			t.Fatalf("starved %v %v, want %v", got, err, want)
		}
	}
	if n, _, _ := leaseW(s, ctx, w, lim, 10, o.next(), false); n != 10 {
		t.Fatalf("granted %d", n)
	}
	leaseW(s, ctx, w, lim, 10, o.next(), true)
	starved(false)
	leaseW(s, ctx, w, lim, 10, o.next(), false)
	starved(true)
	if err := s.Return(ctx, w, 2, o.next()); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := leaseW(s, ctx, w, lim, 10, o.next(), false); n != 2 {
		t.Fatalf("granted %d after a return of 2", n)
	}
	starved(false)
}

// leaseW leases in w's period (the store's period clock set to it: quotaNow when w is its
// window), failing when the script counted in another.
func leaseW(s *Store, ctx context.Context, w Window, l Limits, want int64, op Op, holding bool) (int64, string, error) {
	at := w.Hour
	if !quotaNow.Before(w.Hour) && quotaNow.Before(w.HourEnd) {
		at = quotaNow
	}
	s.periodNow = func() time.Time { return at }
	g, err := s.Lease(ctx, w.keyID, l, want, op, holding)
	if err == nil && !g.W.Hour.Equal(w.Hour) {
		return 0, "", fmt.Errorf("counted in %v, want %v", g.W.Hour, w.Hour)
	}
	return g.N, g.Limit, err
}

func spentW(s *Store, ctx context.Context, w Window, l Limits) (string, error) {
	_, lt, err := leaseW(s, ctx, w, l, 0, Op{}, true)
	return lt, err
}
