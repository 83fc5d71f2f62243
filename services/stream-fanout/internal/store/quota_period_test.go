package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// The lease script names its period from Redis's clock (TIME), whatever the replica's clock
// says: a replica an hour behind or ahead still counts in Redis's hour, its keys expire at the
// end of that hour (not at once, as a window ended by Redis's clock would), and the hourly
// limit holds.
func TestLeasePeriodIsRedisClock(t *testing.T) {
	for _, skew := range []time.Duration{-time.Hour, -time.Second, time.Second, time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			rdb, _ := redistest.Client(t)
			s := New(rdb, fmt.Sprintf("q%d:", rand.Uint64()), func() time.Time { return time.Now().Add(skew) })
			ctx := context.Background()
			lim := Limits{Hourly: 5, Monthly: 1000}
			var total int64
			var g Grant
			for i := 1; i <= 4; i++ {
				var err error
				if g, err = s.Lease(ctx, "k", lim, 5, Op{Replica: "r", Seq: int64(i)}, false); err != nil {
					t.Fatal(err)
				}
				total += g.N
			}
			if total != 5 {
				t.Fatalf("granted %d in all, the hourly limit is 5", total)
			}
			redisNow, err := rdb.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if w := s.WindowAt("k", g.At); !g.W.Hour.Equal(w.Hour) || g.At.Sub(redisNow).Abs() > time.Minute {
				t.Fatalf("counted in %v at %v, Redis's time is %v", g.W.Hour, g.At, redisNow)
			}
			if ttl, err := rdb.PTTL(ctx, g.W.hourKey).Result(); err != nil || ttl <= 0 {
				t.Fatalf("hour count's ttl %v %v", ttl, err)
			}
			if r, _ := s.Lease(ctx, "k", lim, 5, Op{Replica: "r", Seq: 4}, false); r.N != 0 {
				t.Fatalf("a retry of the last lease granted %d again", r.N)
			}
		})
	}
}

// The script's calendar (hour and month, their ends and key names) is WindowAt's, at month
// ends, year ends and leap days.
func TestLeasePeriodCalendar(t *testing.T) {
	s, rdb := quotaTestStore(t)
	ctx := context.Background()
	for _, at := range []time.Time{
		time.Date(2099, 12, 31, 23, 59, 59, 999e6, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2096, 2, 29, 13, 30, 0, 0, time.UTC), time.Date(2100, 2, 28, 23, 0, 0, 0, time.UTC),
		time.Date(2099, 3, 31, 23, 30, 0, 0, time.UTC), time.Date(2099, 4, 30, 0, 0, 1, 0, time.UTC),
	} {
		s.periodNow = func() time.Time { return at }
		g, err := s.Lease(ctx, "k", Limits{}, 1, Op{}, false)
		if err != nil {
			t.Fatal(err)
		}
		w := s.WindowAt("k", at)
		if g.W != w || !g.At.Equal(at.Truncate(time.Millisecond)) {
			t.Fatalf("at %v the script counted in %+v, want %+v", at, g.W, w)
		}
		h, m, err := s.Counted(ctx, w)
		if err != nil || h != 1 {
			t.Fatalf("at %v the hour key %s counts %d (%v): the script named another", at, w.hourKey, h, err)
		}
		for k, end := range map[string]time.Time{w.hourKey: w.HourEnd, w.monthKey: w.MonthEnd} {
			if e, _ := rdb.PExpireTime(ctx, k).Result(); e != time.Duration(end.UnixMilli())*time.Millisecond {
				t.Fatalf("%s expires at %v, want %v", k, e, end)
			}
		}
		_ = m
	}
}

// A lease whose reply was lost in one hour and retried in the next answers the first grant and
// its hour: Redis counts it once, in the hour it was granted in.
func TestLeaseRetryAfterTheHourTurned(t *testing.T) {
	s, _ := quotaTestStore(t)
	ctx := context.Background()
	lim := Limits{Hourly: 100, Monthly: 1000}
	at := time.Date(2099, 3, 31, 23, 59, 59, 0, time.UTC)
	s.periodNow = func() time.Time { return at }
	op := Op{Replica: "r1", Seq: 3}
	first, err := s.Lease(ctx, "k", lim, 16, op, false)
	if err != nil || first.N != 16 {
		t.Fatal(first, err)
	}
	at = at.Add(2 * time.Second)
	retry, err := s.Lease(ctx, "k", lim, 16, op, false)
	if err != nil || retry.N != 16 || retry.W != first.W {
		t.Fatalf("retry %+v %v, want the first grant in its window %+v", retry, err, first.W)
	}
	if _, m, _ := s.Counted(ctx, s.WindowAt("k", at)); m != 0 {
		t.Fatalf("the new month counts %d after a retry, want 0", m)
	}
}
