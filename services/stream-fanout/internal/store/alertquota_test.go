package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// The quota counts per owner, UTC hour and UTC month, grants the least of what fits in both
// (all, part, none), names the limit that refused, and takes back what is returned from both.
func TestAlertQuota(t *testing.T) {
	rdb, _ := redistest.Client(t)
	q := NewAlertQuota(rdb, "t:", 10, 25)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		owner string
		at    time.Time
		n     int64
		want  int64
		why   string
	}{
		{"u1", at, 6, 6, ""}, {"u1", at.Add(50 * time.Minute), 6, 4, AlertHourlyLimit}, {"u1", at, 1, 0, AlertHourlyLimit},
		{"u2", at, 10, 10, ""}, {"u1", at.Add(time.Hour), 3, 3, ""}, // u1: 13 of the month's 25
		{"u1", at.Add(2 * time.Hour), 10, 10, ""},              // 23
		{"u1", at.Add(3 * time.Hour), 5, 2, AlertMonthlyLimit}, // the hour had room for 10
		{"u1", at.Add(4 * time.Hour), 1, 0, AlertMonthlyLimit},
		{"u1", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 7, 7, ""}, // a new month
	} {
		got, why, err := q.Admit(ctx, c.owner, c.at, c.n, Limits{})
		if err != nil || got != c.want || why != c.why {
			t.Fatalf("Admit(%s, %s, %d) = %d, %q, %v; want %d, %q", c.owner, c.at, c.n, got, why, err, c.want, c.why)
		}
	}
	// Returned to the hour and the month both: the hour at had 10, the month 25.
	if err := q.Return(ctx, "u1", at, 4); err != nil {
		t.Fatal(err)
	}
	if got, _, err := q.Admit(ctx, "u1", at, 9, Limits{}); err != nil || got != 4 {
		t.Fatalf("after returning 4: %d, %v", got, err)
	}
	// A tier's quota bounds below the alerts' own where it is lower; its 0 is no limit.
	for _, c := range []struct {
		tier Limits
		n    int64
		want int64
		why  string
	}{
		{Limits{Hourly: 3}, 5, 3, AlertHourlyLimit}, {Limits{Hourly: 3}, 1, 0, AlertHourlyLimit},
		{Limits{Hourly: 100, Monthly: 4}, 2, 1, AlertMonthlyLimit}, // the month has 3
		{Limits{}, 10, 6, AlertHourlyLimit},                        // the quota's own hour of 10, 4 taken
	} {
		got, why, err := q.Admit(ctx, "u3", at, c.n, c.tier)
		if err != nil || got != c.want || why != c.why {
			t.Fatalf("Admit(u3, %d, tier %+v) = %d, %q, %v; want %d, %q", c.n, c.tier, got, why, err, c.want, c.why)
		}
	}
	// The month is kept about 32 days, the hour two hours.
	keys := q.keys("u1", at)
	if ttl := rdb.TTL(ctx, keys[1]).Val(); ttl < 31*24*time.Hour || ttl > 32*24*time.Hour {
		t.Fatalf("month key ttl %s", ttl)
	}
	if ttl := rdb.TTL(ctx, keys[0]).Val(); ttl <= time.Hour || ttl > 2*time.Hour {
		t.Fatalf("hour key ttl %s", ttl)
	}
	// A count gone is not made again by a return (it would never expire).
	if err := q.Return(ctx, "u9", at, 3); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, q.keys("u9", at)...).Val(); n != 0 {
		t.Fatalf("a return made %d counts", n)
	}
}
