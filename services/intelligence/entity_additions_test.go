package intelligence

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	balclient "github.com/chainintel/chainintel/services/balances/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// additionsUserLabels answers each caller's only_add additions to operator entities (by user id,
// then entity id), as user-labels' GET /internal/additions does, and counts the calls.
type additionsUserLabels struct {
	volumeUserLabels
	added map[string]map[string]map[string][]string
	mu    *sync.Mutex
	calls *int
}

func (f additionsUserLabels) Additions(ctx context.Context, entity string) (map[string][]string, error) {
	f.mu.Lock()
	*f.calls++
	f.mu.Unlock()
	id, _ := httpx.IdentityFrom(ctx)
	if a := f.added[id.UserID][entity]; a != nil {
		return a, nil
	}
	return map[string][]string{}, nil
}

// countingBalances is fakeBalances recording each call's addresses and entities.
type countingBalances struct {
	fakeBalances
	mu    *sync.Mutex
	calls *[]string
}

func (f countingBalances) USDTotals(ctx context.Context, refs []balclient.AddressRef, entities []string) (balclient.Totals, error) {
	f.mu.Lock()
	var keys []string
	for _, r := range refs {
		keys = append(keys, r.Key())
	}
	*f.calls = append(*f.calls, strings.Join(keys, ",")+"|"+strings.Join(entities, ","))
	f.mu.Unlock()
	return f.fakeBalances.USDTotals(ctx, refs, entities)
}

// An operator entity's summary for a caller who added addresses to it (only_add) counts them as
// /balances/entity and /transfers?base=<entity> do for that caller: balanceUsd is the entity's
// total plus the additions the entity does not hold, numAddresses counts those additions, and
// volumeUsd, firstTx and lastTx cover each transfer touching the entity or an addition once
// (one between two additions, or between an addition and the entity, too). Another caller's
// summary is the entity's alone, with no call beyond the additions lookup.
func TestEntitySummaryCountsCallerAdditions(t *testing.T) {
	ctx := context.Background()
	resetDB(t)
	h := events.Handlers{Store: store.New(pgtest.Pool(t))}
	w := newVolumeWorld()
	w.importAttribution(t, "acme", "acme", "other")
	far := addr(0xd1)
	tr := func(id, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: "0xb3", From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	transfers := append(w.transfers,
		tr("f", w.c2, w.c1, 6000, 50), // between two additions
		tr("g", w.c1, far, 500, 11),   // an addition and an address of neither
	)
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, transfers...)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ulCalls int
	var balCalls []string
	ul := additionsUserLabels{mu: &mu, calls: &ulCalls, added: map[string]map[string]map[string][]string{
		// c1 in upper case (user-labels may answer an address as stored), c2 twice, h1 already
		// acme's, an address no chain type accepts.
		"u-a": {"acme": {"evm": {"0x" + strings.ToUpper(w.c1[2:]), w.c2, w.c2, w.h1, "nope"}}},
	}}
	api := newTestAPI(t, ul, nil)
	api.app.Balances = countingBalances{mu: &mu, calls: &balCalls, fakeBalances: fakeBalances{
		addrs:    map[string]float64{"evm:" + w.c1: 10, "evm:" + w.c2: 2.5, "evm:" + w.h1: 999},
		entities: map[string]float64{"acme": 1000},
	}}
	a := &httpx.Identity{KeyID: "ka", UserID: "u-a", Role: httpx.RoleIndividual, Tier: "api"}
	b := &httpx.Identity{KeyID: "kb", UserID: "u-b", Role: httpx.RoleIndividual, Tier: "api"}

	// a, b, c, d, e (acme's 162) plus f and g: 223 in 7 transfers, from g (0.5 s) to f (6 s).
	code, body := api.do(t, "GET", "/intelligence/entity/acme/summary", "", a)
	if code != 200 {
		t.Fatalf("caller with additions: %d %s", code, body)
	}
	assertJSON(t, "caller with additions", body, `{"entityId":"acme","numAddresses":4,"balanceUsd":1012.5,"volumeUsd":223,
		"firstTx":"1970-01-01T00:00:00.5Z","lastTx":"1970-01-01T00:00:06Z"}`)
	if want := "evm:" + w.c1 + ",evm:" + w.c2 + "|acme"; len(balCalls) != 1 || balCalls[0] != want {
		t.Errorf("balances asked %q, want [%q]", balCalls, want)
	}

	ulCalls, balCalls = 0, nil
	code, body = api.do(t, "GET", "/intelligence/entity/acme/summary", "", b)
	if code != 200 {
		t.Fatalf("caller without additions: %d %s", code, body)
	}
	assertJSON(t, "caller without additions", body, `{"entityId":"acme","numAddresses":2,"balanceUsd":1000,"volumeUsd":162,
		"firstTx":"1970-01-01T00:00:01Z","lastTx":"1970-01-01T00:00:05Z"}`)
	if ulCalls != 1 || len(balCalls) != 1 || balCalls[0] != "|acme" {
		t.Errorf("caller without additions: %d user-labels calls, balances asked %q; want 1 and [\"|acme\"]", ulCalls, balCalls)
	}
}
