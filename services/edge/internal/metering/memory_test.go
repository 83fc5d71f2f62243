package metering_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/redis/go-redis/v9"
)

// countingSource is the usage store counting its reads of counted events (Counted).
type countingSource struct {
	*usage.Store
	reads atomic.Int64
}

func (s *countingSource) Counted(ctx context.Context, periods []usage.PeriodRef, ids []string) ([]usage.Total, map[string]bool, error) {
	s.reads.Add(1)
	return s.Store.Counted(ctx, periods, ids)
}

// clock is a settable time for a ledger's Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// While Redis is down, published calls are kept as credits per millisecond, not one record
// each, and the totals follow the durable ledger, read once per Durable for every entity: the
// calls it counts leave memory, and other replicas' calls appear, as with Redis up.
func TestRedisOutageFollowsTheDurableLedger(t *testing.T) {
	ctx := context.Background()
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	src := &countingSource{Store: usage.NewStore(pgtest.Pool(t))}
	clk := &clock{t: time.Now()}
	ours := metering.NewCreditLedger(rdb, src, metering.LedgerOptions{Timeout: 50 * time.Millisecond, Now: clk.Now})
	org := "org-redis-down-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	if _, err := ours.Used(ctx, e); err != nil {
		t.Fatal(err)
	}
	m.Close()
	t0 := clk.Now()
	var calls []usage.Call
	for i := range 2000 {
		at := t0.Add(time.Duration(max(i-999, 0)) * time.Millisecond) // 1,000 calls in t0's millisecond
		_, ev := settle(t, ours, e, at, 1)
		ours.Sent([]eventbus.Event{ev}, nil)
		calls = append(calls, callOf(ev))
	}
	if unsent, sent := ours.Kept(e, t0); unsent != 0 || sent != 1001 {
		t.Fatalf("2,000 published calls in 1,001 milliseconds kept as %d by id and %d by millisecond, want 0 and 1,001", unsent, sent)
	}
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 2000 {
		t.Fatalf("before the consumer counted them: %d, want 2000", used)
	}
	// The consumer counts them, and another replica's call; it cannot copy the totals to Redis.
	other := usage.Call{EventID: "other-" + org, KeyID: "k", UserID: "u", OrgID: org, Route: "/tx/{hash}", Credits: 7, Time: t0.Add(2 * time.Second)}
	if _, err := src.Apply(ctx, append(calls, other)); err != nil {
		t.Fatal(err)
	}
	reads := src.reads.Load()
	ours.Sync(ctx)
	if got := src.reads.Load(); got != reads {
		t.Fatalf("%d reads of the durable ledger within Durable of the last, want none", got-reads)
	}
	clk.add(time.Second)
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 2007 {
		t.Fatalf("after the durable ledger counted them: %d, want 2007", used)
	}
	if unsent, sent := ours.Kept(e, t0); unsent != 0 || sent != 0 {
		t.Fatalf("counted calls still kept: %d by id, %d by millisecond", unsent, sent)
	}
}

// A call is settled when its header goes out and its event published when its body ends, so
// another replica's counted calls move "through" past it first: that is no doubt, and no sync
// reads the durable ledger for it. Once a publish of it fails it is asked about, once, and
// again only when the total grew, no sooner than Durable after: counted by the consumer (the
// failed publish wrote it), it leaves this replica's calls.
func TestOnlyCallsWhosePublishFailedAreAskedAbout(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	src := &countingSource{Store: usage.NewStore(pgtest.Pool(t))}
	clk := &clock{t: time.Now()}
	ours := metering.NewCreditLedger(rdb, src, metering.LedgerOptions{Now: clk.Now})
	other := metering.NewCreditLedger(rdb, src, metering.LedgerOptions{Now: clk.Now})
	org := "org-doubt-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	t0 := clk.Now()
	_, slow := settle(t, ours, e, t0, 3)
	_, ev := settle(t, other, e, t0.Add(100*time.Millisecond), 7)
	other.Sent([]eventbus.Event{ev}, nil)
	consume(t, other, src.Store, []usage.Call{callOf(ev)})
	for range 3 {
		ours.Sync(ctx)
	}
	if used, _ := ours.Used(ctx, e); used != 10 || src.reads.Load() != 0 {
		t.Fatalf("a call not yet published, through past it: total %d with %d reads of the durable ledger, want 10 and none", used, src.reads.Load())
	}
	// Its first publish fails after writing it.
	ours.Unconfirmed([]eventbus.Event{slow})
	ours.Sync(ctx)
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 10 || src.reads.Load() != 1 {
		t.Fatalf("a call in doubt, not counted: total %d with %d reads, want 10 and 1", used, src.reads.Load())
	}
	// The consumer counts what the failed publish wrote.
	consume(t, ours, src.Store, []usage.Call{callOf(slow)})
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 13 || src.reads.Load() != 1 {
		t.Fatalf("counted, within Durable of the last read: total %d with %d reads, want 13 (counted twice until asked) and 1", used, src.reads.Load())
	}
	clk.add(time.Second)
	ours.Sync(ctx)
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 10 || src.reads.Load() != 2 {
		t.Fatalf("asked again: total %d with %d reads, want 10 and 2", used, src.reads.Load())
	}
	if unsent, sent := ours.Kept(e, t0); unsent != 0 || sent != 0 {
		t.Fatalf("a counted call still kept: %d by id, %d by millisecond", unsent, sent)
	}
}

// An entry idle for ten minutes is dropped only when it keeps no call whose event is not
// published: during a long broker outage the caller's total keeps those calls, and a tier
// without overage cannot pass its limit.
func TestIdleEntryKeepsCallsNotPublished(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	clk := &clock{t: time.Now()}
	l := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{Now: clk.Now})
	user := "idle-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityUser, ID: user}
	_, ev := settle(t, l, e, clk.Now(), 5)
	clk.add(11 * time.Minute)
	l.Sync(ctx)
	if used, _ := l.Used(ctx, e); used != 5 {
		t.Fatalf("idle, its call not published: %d, want 5", used)
	}
	if h, _ := l.Reserve(ctx, e, clk.Now(), 1, 5); h.OK {
		t.Fatalf("a hold past a limit of 5 granted: %+v", h)
	}
	// Published and counted: nothing is kept, and the idle entry goes.
	l.Sent([]eventbus.Event{ev}, nil)
	consume(t, l, store, []usage.Call{callOf(ev)})
	clk.add(11 * time.Minute)
	l.Sync(ctx)
	if unsent, sent := l.Kept(e, clk.Now()); unsent != 0 || sent != 0 {
		t.Fatalf("kept after the entry went idle with nothing unpublished: %d, %d", unsent, sent)
	}
	if used, _ := l.Used(ctx, e); used != 5 {
		t.Fatalf("read again: %d, want 5", used)
	}
}
