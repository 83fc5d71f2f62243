package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// The quota counts per owner and UTC hour, grants what fits (all, part, none) and takes back
// what is returned.
func TestAlertQuota(t *testing.T) {
	rdb, _ := redistest.Client(t)
	q := NewAlertQuota(rdb, "t:", 10)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		owner string
		at    time.Time
		n     int64
		want  int64
	}{
		{"u1", at, 6, 6}, {"u1", at.Add(50 * time.Minute), 6, 4}, {"u1", at, 1, 0},
		{"u2", at, 10, 10}, {"u1", at.Add(time.Hour), 3, 3},
	} {
		got, err := q.Take(ctx, c.owner, c.at, c.n)
		if err != nil || got != c.want {
			t.Fatalf("Take(%s, %s, %d) = %d, %v; want %d", c.owner, c.at, c.n, got, err, c.want)
		}
	}
	if err := q.Return(ctx, "u1", at, 4); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Take(ctx, "u1", at, 9); err != nil || got != 4 {
		t.Fatalf("after returning 4: %d, %v", got, err)
	}
}
