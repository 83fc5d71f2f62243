package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
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
		release, ok, err := st.TryHeuristicsLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Cleanup(release)
		}
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
