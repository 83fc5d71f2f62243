package metering_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// Two replicas' ledgers share a period total through Redis; each is exact for its own calls
// and sees the other's after a sync. A lost Redis counter is re-seeded from the usage store.
func TestLedgerSharedAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	e := usage.Entity{Type: usage.EntityOrg, ID: "org-ledger"}
	now := time.Now()
	// The usage store already counted 100 credits this period.
	if _, err := store.Apply(ctx, []usage.Call{{EventID: "seed-1", KeyID: "k", UserID: "u", OrgID: e.ID, Route: "/tx/{hash}", Credits: 100, Time: now}}); err != nil {
		t.Fatal(err)
	}
	a := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	b := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	for _, l := range []*metering.CreditLedger{a, b} {
		if used, err := l.Used(ctx, e); err != nil || used != 100 {
			t.Fatalf("initial: %d %v", used, err)
		}
	}
	if got := a.Add(e, 5); got != 105 {
		t.Fatalf("a after 5: %d", got)
	}
	if got := b.Add(e, 7); got != 107 {
		t.Fatalf("b after 7 (not synced): %d", got)
	}
	a.Sync(ctx)
	b.Sync(ctx)
	a.Sync(ctx)
	for name, l := range map[string]*metering.CreditLedger{"a": a, "b": b} {
		if used, _ := l.Used(ctx, e); used != 112 {
			t.Fatalf("%s after sync: %d, want 112", name, used)
		}
	}
	// Redis loses the counter: the next sync seeds it from the store (100) and adds what is
	// pending on top, never restarting at zero.
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	a.Add(e, 1)
	a.Sync(ctx)
	a.Sync(ctx)
	if used, _ := a.Used(ctx, e); used != 101 {
		t.Fatalf("after Redis lost the counter: %d, want 101 (store 100 + 1 pending)", used)
	}
	// Stream credits counted by the consumer reach the shared total.
	if err := a.AddExternal(ctx, e, now, 9); err != nil {
		t.Fatal(err)
	}
	a.Sync(ctx)
	if used, _ := a.Used(ctx, e); used != 110 {
		t.Fatalf("after stream credits: %d, want 110", used)
	}
}

// Apply is idempotent on the event id, within a batch and across batches.
func TestApplyIdempotent(t *testing.T) {
	ctx := context.Background()
	store := usage.NewStore(pgtest.Pool(t))
	at := time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC)
	calls := []usage.Call{
		{EventID: "i-1", KeyID: "k1", UserID: "u1", Route: "/tx/{hash}", Credits: 2, Time: at, Included: 50},
		{EventID: "i-1", KeyID: "k1", UserID: "u1", Route: "/tx/{hash}", Credits: 2, Time: at, Included: 50},
		{EventID: "i-2", KeyID: "k1", UserID: "u1", Route: "/transfers", Credits: 14, Time: at.Add(40 * time.Minute), Included: 50},
	}
	fresh, err := store.Apply(ctx, calls)
	if err != nil || len(fresh) != 2 {
		t.Fatalf("first apply: %d %v", len(fresh), err)
	}
	if fresh, err := store.Apply(ctx, calls); err != nil || len(fresh) != 0 {
		t.Fatalf("replay: %d %v", len(fresh), err)
	}
	rows, err := store.Hourly(ctx, usage.Scope{UserID: "u1"}, at.Add(-time.Hour), at.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []usage.HourRoute{
		{Hour: at.Truncate(time.Hour), Route: "/tx/{hash}", Calls: 1, Credits: 2},
		{Hour: at.Add(time.Hour).Truncate(time.Hour), Route: "/transfers", Calls: 1, Credits: 14},
	}
	if len(rows) != 2 || rows[0].Route != want[0].Route || rows[0].Calls != 1 || rows[0].Credits != 2 || !rows[0].Hour.Equal(want[0].Hour) ||
		rows[1].Route != want[1].Route || rows[1].Credits != 14 || !rows[1].Hour.Equal(want[1].Hour) {
		t.Fatalf("hourly %+v, want %+v", rows, want)
	}
	// The second call fell in March: two billing periods.
	ps, err := store.CreditPeriods(ctx, usage.Entity{Type: usage.EntityUser, ID: "u1"}, 12)
	if err != nil || len(ps) != 2 || ps[0].Used != 14 || ps[1].Used != 2 || ps[0].Included != 50 ||
		!ps[0].Start.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) || !ps[1].End.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("periods %+v %v", ps, err)
	}
}

// A fresh Redis (no scripts loaded, as after a restart) syncs on the first try.
func TestLedgerSyncsOnFreshRedis(t *testing.T) {
	ctx := context.Background()
	srv, err := redisx.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rdb, err := redisx.Connect(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	store := usage.NewStore(pgtest.Pool(t))
	e := usage.Entity{Type: usage.EntityUser, ID: "fresh-redis-user"}
	a := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	b := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	for _, l := range []*metering.CreditLedger{a, b} {
		if _, err := l.Used(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	a.Add(e, 3)
	a.Sync(ctx)
	b.Sync(ctx)
	if used, _ := b.Used(ctx, e); used != 3 {
		t.Fatalf("other replica after sync: %d, want 3", used)
	}
}

// Hourly usage older than the retention goes, a batch at a time; newer hours and the billing
// periods stay.
func TestPruneHourlyUsage(t *testing.T) {
	ctx := context.Background()
	store := usage.NewStore(pgtest.Pool(t))
	old := time.Date(2001, 5, 10, 7, 0, 0, 0, time.UTC) // before any other test's calls
	recent := time.Date(2001, 8, 10, 7, 0, 0, 0, time.UTC)
	var calls []usage.Call
	for i, at := range []time.Time{old, old.Add(time.Hour), old.Add(2 * time.Hour), recent} {
		calls = append(calls, usage.Call{EventID: fmt.Sprintf("prune-%d", i), KeyID: "kp", UserID: "u-prune", Route: "/transfers",
			Credits: 3, Time: at, Included: 100})
	}
	if _, err := store.Apply(ctx, calls); err != nil {
		t.Fatal(err)
	}
	n, err := store.PruneHourlyBefore(ctx, recent.Add(-24*time.Hour), 1)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d (%v), want 3", n, err)
	}
	rows, err := store.Hourly(ctx, usage.Scope{UserID: "u-prune"}, old.Add(-time.Hour), recent.Add(time.Hour))
	if err != nil || len(rows) != 1 || !rows[0].Hour.Equal(recent) {
		t.Fatalf("hourly after pruning: %+v %v", rows, err)
	}
	ps, err := store.CreditPeriods(ctx, usage.Entity{Type: usage.EntityUser, ID: "u-prune"}, 36)
	if err != nil || len(ps) != 2 {
		t.Fatalf("billing periods after pruning: %+v %v", ps, err)
	}
	if n, err := store.PruneHourlyBefore(ctx, recent.Add(-24*time.Hour), 1); err != nil || n != 0 {
		t.Fatalf("second prune: %d %v", n, err)
	}
}
