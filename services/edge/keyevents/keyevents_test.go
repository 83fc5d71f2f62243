package keyevents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/redis/go-redis/v9"
)

func record(t *testing.T, rdb *redis.Client, channel string, hashes ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		keyevents.Record(ctx, p, channel, hashes)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRecordTrimsAndTimesByTheServer: a record is scored by the Redis server's clock (a key
// invalidated again keeps only its latest time), drops what is older than Retention, and
// expires with it.
func TestRecordTrimsAndTimesByTheServer(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const channel = "test:keys"
	server := rdb.Time(ctx).Val()
	// Left by earlier revokes: one past the retention, one within it.
	if err := rdb.ZAdd(ctx, channel+":recent",
		redis.Z{Score: float64(server.Add(-keyevents.Retention - time.Minute).UnixMilli()), Member: "old"},
		redis.Z{Score: float64(server.Add(-keyevents.Retention + time.Hour).UnixMilli()), Member: "kept"},
		redis.Z{Score: float64(server.Add(-time.Hour).UnixMilli()), Member: "again"},
	).Err(); err != nil {
		t.Fatal(err)
	}
	before := rdb.Time(ctx).Val().Truncate(time.Millisecond)
	record(t, rdb, channel, "a", "again")
	after := rdb.Time(ctx).Val()

	got, now, err := keyevents.Recent(ctx, rdb, channel, server.Add(-2*keyevents.Retention))
	if err != nil {
		t.Fatal(err)
	}
	if now.Before(after.Truncate(time.Second)) {
		t.Fatalf("Recent's server time %s is before %s", now, after)
	}
	if len(got) != 3 {
		t.Fatalf("recorded %v, want a, again and kept (old trimmed)", got)
	}
	for _, h := range []string{"a", "again"} {
		if at := got[h]; at.Before(before) || at.After(after) {
			t.Errorf("%s recorded at %s, want the server's time within [%s, %s]", h, at, before, after)
		}
	}
	if at := got["kept"]; at.UnixMilli() != server.Add(-keyevents.Retention+time.Hour).UnixMilli() {
		t.Errorf("kept moved to %s", at)
	}
	ttl, err := rdb.PTTL(ctx, channel+":recent").Result()
	if err != nil || ttl <= keyevents.Retention-time.Minute || ttl > keyevents.Retention {
		t.Fatalf("record TTL %s %v, want Retention", ttl, err)
	}
}

// TestRecentSince: only invalidations at or after since are returned.
func TestRecentSince(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const channel = "test:since"
	server := rdb.Time(ctx).Val()
	at := func(d time.Duration) float64 { return float64(server.Add(d).UnixMilli()) }
	if err := rdb.ZAdd(ctx, channel+":recent",
		redis.Z{Score: at(-time.Hour), Member: "hour"},
		redis.Z{Score: at(-time.Minute), Member: "minute"},
		redis.Z{Score: at(-time.Second), Member: "second"},
	).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		since time.Duration
		want  string
	}{
		{-2 * time.Hour, "hour minute second"},
		{-time.Hour, "hour minute second"}, // the bound is inclusive
		{-time.Hour + time.Millisecond, "minute second"},
		{-30 * time.Second, "second"},
		{time.Second, ""},
	} {
		got, _, err := keyevents.Recent(ctx, rdb, channel, server.Add(tc.since))
		if err != nil {
			t.Fatal(err)
		}
		var names string
		for _, h := range []string{"hour", "minute", "second"} {
			if _, ok := got[h]; ok {
				if names != "" {
					names += " "
				}
				names += h
			}
		}
		if names != tc.want || len(got) != len(strings.Fields(tc.want)) {
			t.Errorf("since %s: %v, want %q", tc.since, got, tc.want)
		}
	}
	// A channel with no record reads as none.
	if got, _, err := keyevents.Recent(ctx, rdb, "test:none", server.Add(-time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("no record: %v %v", got, err)
	}
}
