package intelligence

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/heuristics"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// TestHeuristicsOnePassAtATime: while one session (a replica's pass) holds the heuristics lock,
// another pass (another replica's round, or `intelligence heuristics`) is skipped and writes
// nothing; once the lock is released, the next pass runs and concludes. The lock is released
// even when the pass's context has ended.
func TestHeuristicsOnePassAtATime(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.ExchangeTypes, cfg.DepositMinSenders, cfg.DepositSweepShare = []string{"cex"}, 1, 0.8
	hot, customer, deposit := addr(0x100), addr(0xc1), addr(0xd1)
	if _, err := ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}],
		"addresses":[{"chainType":"evm","address":"`+hot+`","entity":"acme","label":"Hot Wallet 1"}]}`)); err != nil {
		t.Fatal(err)
	}
	st := store.New(pgtest.Pool(t))
	tr := func(id, from, to string, ms int64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(10), Amount: "1"}
	}
	if err := (events.Handlers{Store: st}).Transfers(ctx, msgs(eventsv1.TopicTransfers, tr("a", customer, deposit, 1000), tr("b", deposit, hot, 2000))); err != nil {
		t.Fatal(err)
	}
	predicted := func() int {
		t.Helper()
		var n int
		if err := pgtest.Pool(t).QueryRow(ctx, `SELECT count(*) FROM intel.addresses WHERE predicted_entity_id = 'acme'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Every lock taken is released at the end too: the package's pool closes only when every
	// connection is back.
	lock := func(ctx context.Context) (func(), bool) {
		t.Helper()
		finish, ok, err := st.TryHeuristicsPass(ctx, "test", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return nil, false
		}
		release := func() { finish(false) }
		t.Cleanup(release)
		return release, ok
	}
	release, ok := lock(ctx)
	if !ok {
		t.Fatal("the first lock was not taken")
	}
	if _, again := lock(ctx); again {
		t.Fatal("a second session took the held lock")
	}
	sum, err := RunHeuristics(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := (HeuristicsSummary{Skipped: true}); sum != want || predicted() != 0 {
		t.Fatalf("pass while another holds the lock: %+v, %d predicted; want %+v and none", sum, predicted(), want)
	}

	release()
	sum, err = RunHeuristics(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped || sum.Deposits != 1 || predicted() != 1 {
		t.Fatalf("pass after release: %+v, %d predicted; want it to run and predict the deposit address", sum, predicted())
	}

	ended, cancel := context.WithCancel(ctx)
	release, ok = lock(ended)
	if !ok {
		t.Fatal("the lock was not taken after its release")
	}
	cancel()
	release()
	if _, ok := lock(ctx); !ok {
		t.Fatal("the lock taken with an ended context stayed held")
	}
}

// passCounter counts the passes made over a store (each pass reads the sweep candidates once)
// and fails them while fail is set.
type passCounter struct {
	heuristics.Store
	passes atomic.Int64
	fail   atomic.Bool
}

func (c *passCounter) SweepCandidates(ctx context.Context, exchangeTypes []string) ([]store.SweepCandidate, error) {
	c.passes.Add(1)
	if c.fail.Load() {
		return nil, errors.New("injected failure")
	}
	return c.Store.SweepCandidates(ctx, exchangeTypes)
}

// TestHeuristicsOnePassPerInterval: two replicas (two stores, each over its own pool, against
// one database) make one pass per interval between them, not one each. The runner that made the
// last pass keeps its turn; the other skips its rounds until the last pass is an interval old;
// `intelligence heuristics` runs whenever no pass is being made and its record makes the
// replicas' rounds within the interval skip; a failed pass records nothing. Then both loops run
// side by side and make about one pass per interval.
func TestHeuristicsOnePassPerInterval(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	poolB, err := pgstore.Connect(ctx, pgtest.URL(t), pgstore.Options{MaxConns: 4, AppName: "replica-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer poolB.Close()
	stA, stB := store.New(pgtest.Pool(t)), store.New(poolB)
	a, b := &passCounter{Store: stA}, &passCounter{Store: stB}
	p := heuristics.DefaultParams()
	const hour = time.Hour
	pass := func(c *passCounter, lk heuristics.Locker, runner string, wantRan bool) {
		t.Helper()
		_, ran, err := heuristics.RunExclusive(ctx, c, lk, p, runner, hour)
		if err != nil && !c.fail.Load() {
			t.Fatal(err)
		}
		if ran != wantRan {
			t.Fatalf("%s: ran %v, want %v", runner, ran, wantRan)
		}
	}
	last := func() (runner string) {
		t.Helper()
		if err := pgtest.Pool(t).QueryRow(ctx, `SELECT runner FROM intel.heuristics_passes`).Scan(&runner); err != nil {
			t.Fatal(err)
		}
		return runner
	}
	age := func() {
		t.Helper()
		if _, err := pgtest.Pool(t).Exec(ctx, `UPDATE intel.heuristics_passes SET started_at = started_at - interval '2 hours'`); err != nil {
			t.Fatal(err)
		}
	}

	pass(a, stA, "a", true)
	pass(b, stB, "b", false)
	pass(a, stA, "a", true) // its next round: still its turn
	pass(b, stB, "b", false)
	if a.passes.Load() != 2 || b.passes.Load() != 0 || last() != "a" {
		t.Fatalf("passes a %d b %d, last by %s; want 2, 0, a", a.passes.Load(), b.passes.Load(), last())
	}

	sum, err := RunHeuristics(ctx, testConfig(t))
	if err != nil || sum.Skipped {
		t.Fatalf("intelligence heuristics within the interval: %+v, %v; want a pass", sum, err)
	}
	pass(a, stA, "a", false)
	pass(b, stB, "b", false)

	age() // the last pass's runner stopped: the next round of either takes over
	pass(b, stB, "b", true)
	pass(a, stA, "a", false)
	if last() != "b" {
		t.Fatalf("last pass by %s, want b", last())
	}

	age()
	a.fail.Store(true)
	pass(a, stA, "a", true) // failed: b's record stays, so a retry is not held back
	a.fail.Store(false)
	if last() != "b" {
		t.Fatalf("after a failed pass the last pass is by %s, want b", last())
	}
	pass(a, stA, "a", true)

	// Both loops side by side: one pass per interval between them, where each making its own
	// would make about two.
	resetDB(t)
	a.passes.Store(0)
	b.passes.Store(0)
	const interval, rounds = 200 * time.Millisecond, 10
	lctx, cancel := context.WithTimeout(ctx, rounds*interval+interval/2)
	defer cancel()
	done := make(chan error, 2)
	for _, r := range []struct {
		c    *passCounter
		lk   heuristics.Locker
		name string
		wait time.Duration
	}{{a, stA, "a", 0}, {b, stB, "b", interval / 2}} {
		// b's rounds fall between a's, as replicas' rounds do, rather than colliding on the lock.
		go func() {
			time.Sleep(r.wait)
			done <- heuristics.Loop(lctx, r.c, r.lk, p, r.name, interval, slog.New(slog.DiscardHandler))
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := a.passes.Load() + b.passes.Load(); n < 1 || n > rounds+2 {
		t.Fatalf("%d passes (a %d, b %d) in %d intervals; want at most %d", n, a.passes.Load(), b.passes.Load(), rounds, rounds+2)
	}
	t.Logf("passes a %d, b %d in %d intervals", a.passes.Load(), b.passes.Load(), rounds)
}
