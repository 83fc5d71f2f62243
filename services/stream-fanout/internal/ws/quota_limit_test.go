package ws

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// A key's connections on one replica deliver exactly its hourly limit, then are refused:
// credits a batch did not use, and a lease taken ahead landing after another connection found
// Redis exhausted, are used before any refusal. Connections that close with credits leased
// leave them to the next ones, and a connection subscribing once the limit is delivered is
// refused.
func TestQuotaDeliversExactlyTheLimitAcrossConnections(t *testing.T) {
	st, now, clock := quotaStore(t)
	limits := store.Limits{Hourly: 1000, Monthly: 1_000_000}
	q := newQuotas(st, func(string) store.Limits { return limits }, 8, clock)
	var used atomic.Int64
	runWriters(t, q, 5, 50, &used) // a few transfers each, then the connections close
	if c := countedIn(t, st, now, limits); c != 250 || used.Load() != 250 {
		t.Fatalf("with every connection closed Redis counts %d credits used, %d were delivered", c, used.Load())
	}
	runWriters(t, q, 5, -1, &used) // transfers to spare, until each connection is refused
	if n := used.Load(); n != limits.Hourly {
		t.Fatalf("delivered %d across connections, want the limit %d", n, limits.Hourly)
	}
	checkRefused(t, q)
}

// Credits a replica leased ahead go back to Redis when the key's last connection there ends:
// the key's connections on another replica deliver them, up to exactly the limit.
func TestQuotaLeasesGoBackWhenTheLastConnectionEnds(t *testing.T) {
	st, now, clock := quotaStore(t)
	limits := store.Limits{Hourly: 1000, Monthly: 1_000_000}
	a := newQuotas(st, func(string) store.Limits { return limits }, 8, clock)
	b := newQuotas(st, func(string) store.Limits { return limits }, 8, clock)
	var used atomic.Int64
	runWriters(t, a, 3, 100, &used)
	if c := countedIn(t, st, now, limits); c != 300 || used.Load() != 300 {
		t.Fatalf("with replica a's connections closed Redis counts %d credits used, %d were delivered", c, used.Load())
	}
	runWriters(t, b, 3, -1, &used)
	if n := used.Load(); n != limits.Hourly {
		t.Fatalf("delivered %d, want the limit %d", n, limits.Hourly)
	}
	checkRefused(t, a)
	checkRefused(t, b)
}

// checkRefused fails unless a connection subscribing to key k on q finds its quota spent.
func checkRefused(t *testing.T, q *quotas) {
	t.Helper()
	ctx := context.Background()
	kq := q.acquire("k")
	defer q.release(ctx, kq)
	if lt, _, err := q.spent(ctx, kq, "k", "t"); err != nil || lt != store.LimitHourly {
		t.Fatalf("a new connection at the limit found %q %v, want refused (hourly)", lt, err)
	}
}

// runWriters runs n connections of key k on q, each a writer taking batches of credits as
// conn.write does and delivering up to budget transfers (-1: until refused), then ends them.
func runWriters(t *testing.T, q *quotas, n int, budget int64, used *atomic.Int64) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		kq := q.acquire("k")
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer q.release(context.Background(), kq)
			if err := simWriter(q, kq, budget, used); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	q.fetches.Wait() // a lease taken ahead lands, or goes back, on its own time
}

// simWriter writes batches of a random length, taking credits up to maxBatchCredits at once and
// giving back what the batch did not use, until budget is spent or the quota refuses it.
func simWriter(q *quotas, kq *keyQuota, budget int64, used *atomic.Int64) error {
	ctx := context.Background()
	for budget != 0 {
		var held heldCredits
		refused := false
		for range 1 + rand.IntN(100) {
			if budget == 0 {
				break
			}
			if held.n == 0 {
				got, hour, lt, _, err := q.take(ctx, kq, "k", "t", 1+rand.Int64N(maxBatchCredits), held.taken)
				if errors.Is(err, errQuotaPending) {
					break
				}
				if err != nil {
					return err
				}
				if lt != "" {
					refused = true
					break
				}
				held = heldCredits{n: got, taken: held.taken + got, hour: hour}
			}
			held.n--
			budget--
			used.Add(1)
		}
		q.giveBack(ctx, kq, held.hour, held.taken, held.n)
		if refused {
			return nil
		}
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	return nil
}

// countedIn is how many credits Redis counts used of key k's hour at now.
func countedIn(t *testing.T, st *store.Store, now time.Time, l store.Limits) int64 {
	t.Helper()
	w := st.WindowAt("k", now)
	n, _, err := st.Lease(context.Background(), w, l, l.Hourly)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Return(context.Background(), w, n); err != nil {
		t.Fatal(err)
	}
	return l.Hourly - n
}
