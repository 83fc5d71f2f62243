package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// Delivered transfers are remembered per alert for the time kept, then forgotten; another
// alert's record and transfers never recorded answer false.
func TestAlertSent(t *testing.T) {
	rdb, _ := redistest.Client(t)
	s := NewAlertSent(rdb, "t:", time.Hour)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.Record(ctx, 7, []string{"a", "b"}, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, 7, []string{"c"}, at.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// The set expires with its newest member (a set emptied by forgetting is gone at once).
	if ttl := rdb.PTTL(ctx, "t:alertsent:{7}").Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("set's expiry %s, want within the hour kept", ttl)
	}
	ask := []string{"a", "c", "b", "d", "e"}
	for _, c := range []struct {
		alert int64
		at    time.Time
		want  []bool
	}{
		{7, at.Add(time.Minute), []bool{true, true, true, false, false}},
		{8, at.Add(time.Minute), []bool{false, false, false, false, false}},
		{7, at.Add(61 * time.Minute), []bool{false, true, false, false, false}}, // the first record forgotten
		{7, at.Add(91 * time.Minute), []bool{false, false, false, false, false}},
	} {
		got, err := s.Sent(ctx, c.alert, ask, c.at)
		if err != nil || !slices.Equal(got, c.want) {
			t.Fatalf("Sent(%d, %s) = %v, %v; want %v", c.alert, c.at, got, err, c.want)
		}
	}
	if got, err := s.Sent(ctx, 7, nil, at); err != nil || got != nil {
		t.Fatalf("Sent of nothing = %v, %v", got, err)
	}
}
