package metering_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/ledger"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// Two replicas' ledgers share a period total through Redis, a copy of the durable ledger that
// only the consumer raises (Publish); each replica is exact for its own calls and sees the
// other's once the consumer has counted them. A total Redis lost is re-seeded from the store.
func TestLedgerSharedAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	org := "org-ledger-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	now := time.Now()
	call := func(id string, credits int64, at time.Time) usage.Call {
		return usage.Call{EventID: id + org, KeyID: "k", UserID: "u", OrgID: org, Route: "/tx/{hash}", Credits: credits, Time: at}
	}
	// The usage store already counted 100 credits this period.
	if _, err := store.Apply(ctx, []usage.Call{call("seed-1", 100, now.Add(-time.Minute))}); err != nil {
		t.Fatal(err)
	}
	a := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	b := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	for _, l := range []*metering.CreditLedger{a, b} {
		if used, err := l.Used(ctx, e); err != nil || used != 100 {
			t.Fatalf("initial: %d %v", used, err)
		}
	}
	got, evA := settle(t, a, e, now, 5)
	if got != 105 {
		t.Fatalf("a after 5: %d", got)
	}
	if got, evB := settle(t, b, e, now.Add(time.Millisecond), 7); got != 107 {
		t.Fatalf("b after 7: %d", got)
	} else {
		// Both events are published (the producer tells each ledger), and the consumer counts
		// both calls and publishes the durable total.
		a.Sent([]eventbus.Event{evA}, nil)
		b.Sent([]eventbus.Event{evB}, nil)
		consume(t, a, store, []usage.Call{callOf(evA), callOf(evB)})
	}
	for name, l := range map[string]*metering.CreditLedger{"a": a, "b": b} {
		l.Sync(ctx)
		if used, _ := l.Used(ctx, e); used != 112 {
			t.Fatalf("%s after the consumer: %d, want 112", name, used)
		}
	}
	// Redis loses the total: the next sync seeds it from the store, never restarting at zero and
	// never adding a call twice.
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	a.Sync(ctx)
	if used, _ := a.Used(ctx, e); used != 112 {
		t.Fatalf("after Redis lost the total: %d, want 112", used)
	}
	// Stream credits, counted by the consumer only, reach the shared total.
	stream := []usage.Call{{EventID: "s-1" + org, KeyID: "k", UserID: "u", OrgID: org, Route: "/ws/transfers", Credits: 9, Time: now}}
	if _, err := store.Apply(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, stream); err != nil {
		t.Fatal(err)
	}
	b.Sync(ctx)
	if used, _ := b.Used(ctx, e); used != 121 {
		t.Fatalf("after stream credits: %d, want 121", used)
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

// A fresh Redis (no scripts loaded, as after a restart) takes a published total on the first
// try.
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
	_, ev := settle(t, a, e, time.Now(), 3)
	a.Sent([]eventbus.Event{ev}, nil)
	calls := []usage.Call{callOf(ev)}
	if _, err := store.Apply(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, calls); err != nil {
		t.Fatal(err)
	}
	b.Sync(ctx)
	if used, _ := b.Used(ctx, e); used != 3 {
		t.Fatalf("other replica after the consumer: %d, want 3", used)
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

// Holds are exact among one replica's concurrent calls, with Redis up or stopped: the holds
// granted never pass the limit with what the period already used, settling releases the hold
// and records only what the call cost, and a sync from Redis (the consumer's total) leaves the
// holds alone, so nothing is counted twice.
func TestReserveExactUnderConcurrency(t *testing.T) {
	for _, redisUp := range []bool{true, false} {
		t.Run(fmt.Sprintf("redisUp=%v", redisUp), func(t *testing.T) {
			ctx := context.Background()
			m := miniredis.NewMiniRedis()
			if err := m.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1})
			t.Cleanup(func() { _ = rdb.Close() })
			store := usage.NewStore(pgtest.Pool(t))
			user := fmt.Sprintf("hold-%v-%d", redisUp, time.Now().UnixNano())
			e := usage.Entity{Type: usage.EntityUser, ID: user}
			at := time.Now()
			if _, err := store.Apply(ctx, []usage.Call{{EventID: user + "-seed", KeyID: "k", UserID: user, Route: "/tx/{hash}", Credits: 100, Time: at.Add(-time.Second)}}); err != nil {
				t.Fatal(err)
			}
			if !redisUp {
				m.Close()
			}
			l := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{Timeout: 50 * time.Millisecond})
			holds := make(chan metering.Hold, 100)
			var wg sync.WaitGroup
			for i := 0; i < 100; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h, err := l.Reserve(ctx, e, at, 10, 600)
					if err != nil {
						t.Error(err)
					}
					holds <- h
				}()
			}
			wg.Wait()
			close(holds)
			var granted []metering.Hold
			for h := range holds {
				if h.OK {
					granted = append(granted, h)
				}
			}
			if len(granted) != 50 {
				t.Fatalf("%d holds of 10 granted over 100 used with a limit of 600, want 50", len(granted))
			}
			l.Sync(ctx)
			// Half the calls fail (0), half cost 4 of their 10.
			for i, h := range granted {
				l.Settle(h, e, int64(i%2)*4, at, fmt.Sprintf("%s-%d", user, i))
			}
			if used, _ := l.Used(ctx, e); used != 200 {
				t.Fatalf("used %d after settling, want 200", used)
			}
			if h, _ := l.Reserve(ctx, e, at, 400, 600); !h.OK || h.Used != 200 || h.Held != 0 {
				t.Fatalf("all released: %+v", h)
			}
		})
	}
}

// totalsSource is the usage store counting its reads of period totals (PeriodTotals).
type totalsSource struct {
	*usage.Store
	reads atomic.Int64
}

func (s *totalsSource) PeriodTotals(ctx context.Context, periods []usage.PeriodRef) ([]usage.Total, error) {
	s.reads.Add(1)
	return s.Store.PeriodTotals(ctx, periods)
}

// Publish copies the durable total of every period a batch touches (two entities, two months)
// to Redis, reading them all in one statement.
func TestPublishCopiesEveryPeriodInOneRead(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	src := &totalsSource{Store: usage.NewStore(pgtest.Pool(t))}
	l := metering.NewCreditLedger(rdb, src, metering.LedgerOptions{})
	org, user := "org-publish-"+fmt.Sprint(time.Now().UnixNano()), "user-publish-"+fmt.Sprint(time.Now().UnixNano())
	feb, mar := time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	calls := []usage.Call{
		{EventID: org + "-1", KeyID: "k1", UserID: "u1", OrgID: org, Route: "/tx/{hash}", Credits: 2, Time: feb},
		{EventID: org + "-2", KeyID: "k1", UserID: "u1", OrgID: org, Route: "/tx/{hash}", Credits: 3, Time: feb.Add(time.Minute)},
		{EventID: org + "-3", KeyID: "k1", UserID: "u1", OrgID: org, Route: "/tx/{hash}", Credits: 5, Time: mar},
		{EventID: user + "-1", KeyID: "k2", UserID: user, Route: "/tx/{hash}", Credits: 7, Time: mar.Add(time.Second)},
	}
	if _, err := src.Apply(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if n := src.reads.Load(); n != 1 {
		t.Fatalf("%d reads of the durable ledger; want 1 for the whole batch", n)
	}
	want := map[string][2]int64{
		ledger.Key(usage.Entity{Type: usage.EntityOrg, ID: org}, feb):   {5, feb.Add(time.Minute).UnixMilli()},
		ledger.Key(usage.Entity{Type: usage.EntityOrg, ID: org}, mar):   {5, mar.UnixMilli()},
		ledger.Key(usage.Entity{Type: usage.EntityUser, ID: user}, mar): {7, mar.Add(time.Second).UnixMilli()},
	}
	for k, w := range want {
		vals, err := rdb.HMGet(ctx, k, ledger.FieldUsed, ledger.FieldThrough).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(vals); got != fmt.Sprint([]any{fmt.Sprint(w[0]), fmt.Sprint(w[1])}) {
			t.Fatalf("%s: used, through = %s; want %d", k, got, w)
		}
	}
	if keys := m.Keys(); len(keys) != len(want) {
		t.Fatalf("Redis holds %v; want the %d periods of the batch", keys, len(want))
	}
}
