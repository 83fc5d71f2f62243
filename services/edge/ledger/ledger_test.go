package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/ledger"
)

func TestKey(t *testing.T) {
	at := time.Date(2026, 3, 31, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600)) // April in UTC
	for _, c := range []struct{ user, org, want string }{
		{"u1", "", "edge:credits:v2:user:u1:2026-04"},
		{"u1", "o1", "edge:credits:v2:org:o1:2026-04"},
	} {
		if got := ledger.Key(ledger.BilledEntity(c.user, c.org), at); got != c.want {
			t.Errorf("Key(%q, %q) = %q, want %q", c.user, c.org, got, c.want)
		}
	}
}

func TestUsed(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	now := time.Now()
	spent := ledger.Key(ledger.BilledEntity("u1", ""), now)
	if err := rdb.HSet(ctx, spent, ledger.FieldUsed, 42, ledger.FieldThrough, now.UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := ledger.Used(ctx, rdb, []string{spent, ledger.Key(ledger.BilledEntity("u2", ""), now)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{42, -1}) {
		t.Fatalf("Used = %v, want [42 -1]", got)
	}
}
