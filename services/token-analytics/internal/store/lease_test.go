package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// One holder at a time: the holder renews, the other is refused until the lease expires or is
// released, then takes it; the database's clock serves when no clock is given.
func TestLeaseOneHolderAtATime(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `DELETE FROM market.leases`); err != nil {
		t.Fatal(err)
	}
	st := New(pool)
	clock := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	a := st.Lease("poller", "a", 15*time.Minute, now)
	b := st.Lease("poller", "b", 15*time.Minute, now)
	other := st.Lease("other", "b", 15*time.Minute, now)
	step := func(name string, l *Lease, want bool) {
		t.Helper()
		got, err := l.Take(ctx)
		if err != nil || got != want {
			t.Fatalf("%s: %s took %v (%v), want %v", name, l.Holder(), got, err, want)
		}
	}
	step("free", a, true)
	step("held by a", b, false)
	step("another name", other, true)
	clock = clock.Add(10 * time.Minute)
	step("a renews", a, true)
	clock = clock.Add(10 * time.Minute) // within a's renewed ttl
	step("renewed by a", b, false)
	clock = clock.Add(6 * time.Minute) // a's ttl has passed
	step("expired", b, true)
	step("held by b", a, false)
	if err := a.Release(ctx); err != nil { // a does not hold it: nothing changes
		t.Fatal(err)
	}
	step("a released what it does not hold", a, false)
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	step("released by b", a, true)

	// On the database's clock: a lease until 2026 has long expired.
	c := st.Lease("poller", "c", time.Hour, nil)
	step("db clock, expired", c, true)
	step("db clock, held by c", st.Lease("poller", "a", time.Hour, nil), false)
}
