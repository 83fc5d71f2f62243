package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestQuotaHitAndReset: leases stop at the hourly limit, name the window, and a new hour
// grants again; the monthly limit holds across hours.
func TestQuotaHitAndReset(t *testing.T) {
	rdb, _ := redistest.Client(t)
	now := time.Date(2026, 3, 10, 14, 59, 0, 0, time.UTC)
	s := New(rdb, fmt.Sprintf("q%d:", rand.Uint64()), func() time.Time { return now })
	ctx := context.Background()
	lim := Limits{Hourly: 5, Monthly: 8}
	w := s.WindowAt("k", now)
	if n, lt, err := s.Lease(ctx, w, lim, 3); err != nil || n != 3 || lt != "" {
		t.Fatalf("lease 1: %d %q %v", n, lt, err)
	}
	if n, _, _ := s.Lease(ctx, w, lim, 3); n != 2 {
		t.Fatalf("lease 2 granted %d, want the 2 left this hour", n)
	}
	if n, lt, _ := s.Lease(ctx, w, lim, 1); n != 0 || lt != LimitHourly {
		t.Fatalf("over the hour: %d %q", n, lt)
	}
	if w.HourEnd.Sub(now) != time.Minute {
		t.Fatalf("hour resets in %v", w.HourEnd.Sub(now))
	}
	// Returned credits can be leased again.
	if err := s.Return(ctx, w, 1); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := s.Lease(ctx, w, lim, 4); n != 1 {
		t.Fatalf("after a return granted %d, want 1", n)
	}
	// The next hour resets the hourly count; the month still counts 5 of 8.
	w2 := s.WindowAt("k", now.Add(time.Minute))
	if n, _, _ := s.Lease(ctx, w2, lim, 5); n != 3 {
		t.Fatalf("next hour granted %d, want the month's 3 left", n)
	}
	if n, lt, _ := s.Lease(ctx, w2, lim, 1); n != 0 || lt != LimitMonthly {
		t.Fatalf("over the month: %d %q", n, lt)
	}
	// Another key is counted apart.
	if n, _, _ := s.Lease(ctx, s.WindowAt("other", now), lim, 5); n != 5 {
		t.Fatalf("another key granted %d", n)
	}
}

// TestQuotaSpent: Spent names the limit a lease would find used up, without counting
// anything itself.
func TestQuotaSpent(t *testing.T) {
	rdb, _ := redistest.Client(t)
	now := time.Date(2026, 3, 10, 14, 59, 0, 0, time.UTC)
	s := New(rdb, fmt.Sprintf("q%d:", rand.Uint64()), func() time.Time { return now })
	ctx := context.Background()
	lim := Limits{Hourly: 5, Monthly: 8}
	w := s.WindowAt("k", now)
	spent := func(w Window, want string) {
		t.Helper()
		if lt, err := s.Spent(ctx, w, lim); err != nil || lt != want {
			t.Fatalf("spent: %q %v, want %q", lt, err, want)
		}
	}
	spent(w, "")
	if n, _, _ := s.Lease(ctx, w, lim, 4); n != 4 {
		t.Fatalf("granted %d", n)
	}
	spent(w, "")
	// Spent counted nothing: the fifth credit is still there.
	if n, _, _ := s.Lease(ctx, w, lim, 2); n != 1 {
		t.Fatalf("granted %d, want 1", n)
	}
	spent(w, LimitHourly)
	w2 := s.WindowAt("k", now.Add(time.Minute))
	spent(w2, "")
	if n, _, _ := s.Lease(ctx, w2, lim, 5); n != 3 {
		t.Fatalf("next hour granted %d", n)
	}
	spent(w2, LimitMonthly)
	// Spent writes nothing: a key never leased has no counts and no expiry set by the check.
	other := s.WindowAt("other", now)
	spent(other, "")
	if n, err := rdb.Exists(ctx, other.hourKey, other.monthKey).Result(); err != nil || n != 0 {
		t.Fatalf("after Spent %d of the window's counts exist (%v), want none", n, err)
	}
}
