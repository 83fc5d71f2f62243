package source

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// leasedPoller is one replica's poller: its own fake API (so its requests are counted apart)
// over the shared database, holding the lease as holder.
type leasedPoller struct {
	p       *Poller
	api     *fakeAPI
	holding []bool
}

func newLeasedPoller(t *testing.T, st *store.Store, holder string, clock func() time.Time, interval time.Duration) *leasedPoller {
	t.Helper()
	lp := &leasedPoller{api: &fakeAPI{r: rand.New(rand.NewPCG(1, 2)), price: func(string, int64) float64 { return 2 }}}
	srv := httptest.NewServer(lp.api)
	t.Cleanup(srv.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := NewClient(ClientOptions{BaseURL: srv.URL + "/api/v3", RequestsPerMinute: 1e6, MaxAttempts: 1, Logger: quiet})
	var mu sync.Mutex
	lp.p = NewPoller(client, st, PollerOptions{Interval: interval, History: 48 * time.Hour, Now: clock, Logger: quiet,
		Lease: st.Lease("price-poller", holder, 3*interval, clock),
		Holding: func(ok bool) {
			mu.Lock()
			lp.holding = append(lp.holding, ok)
			mu.Unlock()
		}})
	return lp
}

func (lp *leasedPoller) requests() int {
	lp.api.mu.Lock()
	defer lp.api.mu.Unlock()
	return lp.api.requests
}

func leaseSetup(t *testing.T) (*store.Store, context.Context) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox, market.leases`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{
		{PricingID: "coin-a", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0a", Decimals: 18}}},
		{PricingID: "coin-b", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0b", Decimals: 6}}},
	}); err != nil {
		t.Fatal(err)
	}
	return st, ctx
}

// Two replicas' pollers on one database: each interval only the lease's holder asks the API,
// the other skips; when the holder stops (its lease is not renewed and expires), the other
// takes over and the first, back, waits.
func TestPollerLeaseOneReplicaPolls(t *testing.T) {
	st, ctx := leaseSetup(t)
	interval := 5 * time.Minute
	clock := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	a := newLeasedPoller(t, st, "replica-a", now, interval)
	b := newLeasedPoller(t, st, "replica-b", now, interval)
	for i := 0; i < 6; i++ {
		ra, rb := a.requests(), b.requests()
		if err := a.p.Cycle(ctx); err != nil {
			t.Fatalf("interval %d: a's cycle: %v", i, err)
		}
		if err := b.p.Cycle(ctx); !errors.Is(err, ErrNotHolder) {
			t.Fatalf("interval %d: b's cycle returned %v, want ErrNotHolder", i, err)
		}
		if a.requests() == ra || b.requests() != rb {
			t.Fatalf("interval %d: a asked the API %d times, b %d; want a alone", i, a.requests()-ra, b.requests()-rb)
		}
		clock = clock.Add(interval)
	}
	// a stops: its lease runs out three intervals after its last renewal; until then b waits.
	for i := 0; i < 2; i++ {
		if err := b.p.Cycle(ctx); !errors.Is(err, ErrNotHolder) {
			t.Fatalf("before a's lease expired: b's cycle returned %v", err)
		}
		clock = clock.Add(interval)
	}
	if b.requests() != 0 {
		t.Fatalf("b asked the API %d times while a held the lease", b.requests())
	}
	clock = clock.Add(interval + time.Second)
	ra := a.requests()
	for i := 0; i < 3; i++ {
		rb := b.requests()
		if err := b.p.Cycle(ctx); err != nil {
			t.Fatalf("interval %d after a stopped: b's cycle: %v", i, err)
		}
		if err := a.p.Cycle(ctx); !errors.Is(err, ErrNotHolder) {
			t.Fatalf("interval %d after b took over: a's cycle returned %v, want ErrNotHolder", i, err)
		}
		if b.requests() == rb || a.requests() != ra {
			t.Fatalf("interval %d after a stopped: b asked %d times, a %d; want b alone", i, b.requests()-rb, a.requests()-ra)
		}
		clock = clock.Add(interval)
	}
	// b polled on from where a's history ended: every hour from the first asked to the last
	// complete one of b's last cycle is stored, once.
	first := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC).Add(-48 * time.Hour)
	last := clock.Add(-interval).Truncate(time.Hour).Add(-time.Hour)
	ps, err := st.Prices(ctx, "coin-a", app.Hourly, first.Add(-time.Hour), clock)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(last.Sub(first)/time.Hour) + 1; len(ps) != want || !ps[0].Time.Equal(first) || !ps[len(ps)-1].Time.Equal(last) {
		t.Errorf("coin-a: %d hourly points; want %d from %s to %s", len(ps), want, first, last)
	}
	if a.holding[0] != true || a.holding[len(a.holding)-1] != false || b.holding[0] != false || b.holding[len(b.holding)-1] != true {
		t.Errorf("holding reported a %v, b %v", a.holding, b.holding)
	}
}

// Two replicas' Run loops at once: the cycles that poll are all one replica's, the other never
// asks the API; the holder releases the lease when it stops, so the other takes it without
// waiting for its expiry.
func TestPollerLeaseRunLoops(t *testing.T) {
	st, ctx := leaseSetup(t)
	clock := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC) // fixed: the lease never expires
	now := func() time.Time { return clock }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var polledBy []string
	lps := map[string]*leasedPoller{}
	for _, name := range []string{"replica-a", "replica-b"} {
		lp := newLeasedPoller(t, st, name, now, time.Millisecond)
		lp.p.o.Polled = func(_ context.Context, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("%s: cycle failed: %v", name, err)
			}
			if polledBy = append(polledBy, name); len(polledBy) == 5 {
				cancel()
			}
		}
		lps[name] = lp
	}
	var wg sync.WaitGroup
	for _, lp := range lps {
		wg.Go(func() { _ = lp.p.Run(ctx) })
	}
	wg.Wait()
	holder := polledBy[0]
	for _, n := range polledBy {
		if n != holder {
			t.Fatalf("cycles polled by %v, want one replica", polledBy)
		}
	}
	otherName := "replica-a"
	if holder == otherName {
		otherName = "replica-b"
	}
	if r := lps[otherName].requests(); r != 0 {
		t.Errorf("%s (not holding) asked the API %d times", otherName, r)
	}
	// The holder's Run released the lease: the other polls at once, on the same clock.
	if err := lps[otherName].p.Cycle(context.Background()); err != nil {
		t.Errorf("%s after %s stopped: %v", otherName, holder, err)
	}
}
