package ratelimit_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
)

// Concurrent decisions (pipelined together, some taking leases) stay exact: of 400
// simultaneous requests on one budget with burst 20 and a slow rate, at most 20 pass, and
// tokens a lease took beyond what that wave could use go back to the budget, so a second wave
// right after gets them: 20 in all. Other budgets are untouched.
// slowMachine is the Redis decision deadline of tests that need Redis to decide: they test
// exactness, not the deadline, and on a busy machine the default would take a slow answer for
// an outage and decide in process.
const slowMachine = time.Minute

func TestConcurrentDecisionsAreExact(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l := ratelimit.New(rdb, ratelimit.Options{LeaseTTL: 50 * time.Millisecond, Timeout: slowMachine})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = l.Run(ctx) }()
	lim := ratelimit.Limit{Rate: 1, Burst: 20}
	var allowed atomic.Int64
	start := time.Now()
	wave := func() {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := 0; i < 400; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				d := l.Allow(context.Background(), "conc", lim)
				if d.Local {
					t.Error("decided in process with Redis up")
				}
				if d.Allowed {
					allowed.Add(1)
				} else if d.RetryAfter <= 0 {
					t.Error("refused without a Retry-After")
				}
			}()
		}
		close(gate)
		wg.Wait()
	}
	wave()
	// Rate 1/s: what refilled while a loaded machine ran the wave is allowed (+1 for the
	// second the wave started in).
	if n, refill := allowed.Load(), int64(time.Since(start).Seconds())+1; n > 20+refill {
		t.Fatalf("first wave: allowed %d of 400 with burst 20 (refill %d)", n, refill)
	}
	// Unspent leases expire and go back (Run); wait for it rather than for a duration.
	for wait := time.Now(); l.Unspent() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(wait) > time.Minute { // a hang guard
			t.Fatalf("%d leased tokens still held after a minute", l.Unspent())
		}
	}
	wave()
	refill := int64(time.Since(start).Seconds()) + 1 // rate 1/s: what refilled meanwhile
	if n := allowed.Load(); n < 20 || n > 20+refill {
		t.Fatalf("two waves: allowed %d of 800 with burst 20 (refill %d)", n, refill)
	}
	for i := 0; i < 5; i++ {
		if d := l.Allow(context.Background(), fmt.Sprintf("other-%d", i), lim); !d.Allowed || d.Remaining != 19 || d.Limit != 20 {
			t.Fatalf("fresh budget: %+v", d)
		}
	}
}

// Without Redis the limiter decides in process with the same rate and burst.
func TestInProcessLimiter(t *testing.T) {
	l := ratelimit.New(nil, ratelimit.Options{})
	lim := ratelimit.Limit{Rate: 1, Burst: 3}
	got := 0
	start := time.Now()
	for i := 0; i < 10; i++ {
		d := l.Allow(context.Background(), "k", lim)
		if !d.Local {
			t.Fatal("not local")
		}
		if d.Allowed {
			got++
		}
	}
	// Rate 1/s: a machine stalled for over a second meanwhile has a token refilled.
	if refill := int(time.Since(start).Seconds()); got < 3 || got > 3+refill {
		t.Fatalf("allowed %d, want the burst 3 (+%d refilled)", got, refill)
	}
	if !l.Degraded() {
		t.Fatal("an in-process-only limiter should report itself degraded")
	}
}

// A fresh Redis (no script loaded yet, as after a restart) answers from the first decision, also
// when the first decisions arrive together in one pipeline.
func TestFreshRedisLoadsTheScript(t *testing.T) {
	srv, err := redisx.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rdb, err := redisx.Connect(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	l := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	var allowed, local atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := l.Allow(context.Background(), "fresh", ratelimit.Limit{Rate: 1, Burst: 10})
			if d.Local {
				local.Add(1)
			}
			if d.Allowed {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if local.Load() != 0 || allowed.Load() < 10 || allowed.Load() > 11 {
		t.Fatalf("allowed %d (local %d), want the burst 10 from Redis", allowed.Load(), local.Load())
	}
}

// Replicas lease tokens from a budget with room to spare, and together still admit exactly
// the budget: two limiters (two edge replicas) drain one budget concurrently, in far fewer
// Redis calls than requests.
func TestLeasesAcrossReplicasStayExact(t *testing.T) {
	rdb, _ := redistest.Client(t)
	a := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	b := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	lim := ratelimit.Limit{Rate: 1, Burst: 400}
	start := time.Now()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for _, l := range []*ratelimit.Limiter{a, b} {
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 150; i++ {
					if d := l.Allow(context.Background(), "leased", lim); d.Allowed {
						allowed.Add(1)
					} else if d.RetryAfter <= 0 || d.Remaining != 0 {
						t.Errorf("refusal %+v", d)
					}
				}
			}()
		}
	}
	wg.Wait()
	// A lease granted while another request was refused is given back when it expires; a
	// last round takes what came back.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	go func() { _ = b.Run(ctx) }()
	for wait := time.Now(); a.Unspent()+b.Unspent() > 0 || time.Since(wait) < 150*time.Millisecond; time.Sleep(10 * time.Millisecond) {
	}
	// The last round goes on until the whole budget was admitted (a lease given back late on a
	// busy machine is taken then); the minute is a hang guard, and what refilled meanwhile is
	// allowed for below, so admitting more than the budget still fails.
	for last := time.Now(); allowed.Load() < 400 && time.Since(last) < time.Minute; time.Sleep(10 * time.Millisecond) {
		for _, l := range []*ratelimit.Limiter{a, b} {
			if l.Allow(context.Background(), "leased", lim).Allowed {
				allowed.Add(1)
			}
		}
	}
	refill := int64(time.Since(start).Seconds()) + 1 // rate 1/s: what refilled meanwhile
	if n := allowed.Load(); n < 400 || n > 400+refill {
		t.Fatalf("two replicas admitted %d of 1240 from a budget of 400 (refill %d)", n, refill)
	}
	if calls := a.RedisCalls() + b.RedisCalls(); calls >= 400 {
		t.Fatalf("%d Redis calls for 1200 decisions: leases not used", calls)
	}
	t.Logf("1240 decisions, %d admitted, %d Redis calls", allowed.Load(), a.RedisCalls()+b.RedisCalls())
}

// Tokens a replica leased but did not spend go back to the budget when the lease expires, so
// another replica can use them.
func TestUnspentLeaseIsGivenBack(t *testing.T) {
	rdb, _ := redistest.Client(t)
	opts := ratelimit.Options{LeaseTTL: 30 * time.Millisecond, Timeout: slowMachine}
	a, b := ratelimit.New(rdb, opts), ratelimit.New(rdb, opts)
	lim := ratelimit.Limit{Rate: 1, Burst: 200}
	start := time.Now()
	used := 0
	for i := 0; i < 40; i++ { // leases grow while they are spent in time
		if a.Allow(context.Background(), "giveback", lim).Allowed {
			used++
		}
	}
	if d := a.Allow(context.Background(), "giveback", lim); !d.Allowed || a.RedisCalls() >= 41 {
		t.Fatalf("after %d requests, %d Redis calls: %+v", used, a.RedisCalls(), d)
	}
	used++
	// The lease expires with tokens left; Run gives them back.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	for wait := time.Now(); a.Unspent() > 0 || time.Since(wait) < 100*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		if time.Since(wait) > time.Minute { // a hang guard
			t.Fatalf("%d leased tokens still held after a minute", a.Unspent())
		}
	}
	got := 0
	for i := 0; i < 400; i++ {
		if b.Allow(context.Background(), "giveback", lim).Allowed {
			got++
		}
	}
	// B refills its lease in the background (go refill): a refill it started near the end may
	// land after the loop, its tokens held rather than spent. Count them once no refill of B's
	// is on its way (B runs no Run, so it keeps them).
	for wait := time.Now(); !b.Settled(); time.Sleep(10 * time.Millisecond) {
		if time.Since(wait) > time.Minute { // a hang guard
			t.Fatal("replica B's refill never landed")
		}
	}
	held := b.Unspent()
	refill := int(time.Since(start).Seconds()) + 1 // rate 1/s: what refilled meanwhile
	if total := used + got + held; total < 200 || total > 200+refill {
		t.Fatalf("replica A used %d, replica B got %d and holds %d: %d of a budget of 200 (refill %d)", used, got, held, total, refill)
	}
}

// A budget near its limit is decided one request at a time: after a refusal, no lease is
// taken, and a refusal is repeated locally until Redis said the next token is due; then the
// next request is admitted.
func TestRefusalsAreRemembered(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	lim := ratelimit.Limit{Rate: 1, Burst: 2}
	start := time.Now()
	// Rate 1/s: whole seconds passed since the budget was full are tokens refilled, each of
	// which a loaded machine may see admitted among the refusals (and ask Redis for).
	refill := func() int { return int(time.Since(start).Seconds()) }
	for i := 0; i < 2; i++ {
		if !l.Allow(context.Background(), "refused", lim).Allowed {
			t.Fatal("burst refused")
		}
	}
	before := l.RedisCalls()
	admitted := 0
	var last ratelimit.Decision
	for i := 0; i < 50; i++ {
		d := l.Allow(context.Background(), "refused", lim)
		switch {
		case d.Allowed:
			admitted++
		case d.RetryAfter <= 0 || d.RetryAfter > time.Second:
			t.Fatalf("over the limit: %+v", d)
		default:
			last = d
		}
	}
	r := refill()
	if admitted > r {
		t.Fatalf("%d of 50 admitted over the limit (refill %d)", admitted, r)
	}
	// One call refuses; each token refilled meanwhile costs at most one call that takes it and
	// one that is refused again.
	if calls := l.RedisCalls() - before; calls > int64(2+2*r) {
		t.Fatalf("%d Redis calls for 50 decisions over the limit (refill %d)", calls, r)
	}
	if last.RetryAfter <= 0 {
		t.Fatal("no refusal among 50 decisions over the limit")
	}
	// Once the Retry-After a refusal said has passed, the next token is due.
	time.Sleep(last.RetryAfter)
	for i := 0; ; i++ {
		d := l.Allow(context.Background(), "refused", lim)
		if d.Allowed {
			break
		}
		if i == 2 || d.RetryAfter <= 0 {
			t.Fatalf("refused after the Retry-After said had passed: %+v", d)
		}
		time.Sleep(d.RetryAfter) // a refusal's clock rounds to the millisecond
	}
}

// burst sends n requests at once on one budget and returns the decisions.
func burst(l *ratelimit.Limiter, key string, lim ratelimit.Limit, n int) []ratelimit.Decision {
	out := make([]ratelimit.Decision, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i] = l.Allow(context.Background(), key, lim)
		}()
	}
	close(gate)
	wg.Wait()
	return out
}

// checkRemaining fails when the admitted decisions said more was left than the budget less
// what was admitted: sorted from the highest, the i-th admitted may say at most B-1-i (plus
// what refilled meanwhile).
func checkRemaining(t *testing.T, ds []ratelimit.Decision, budget, refill int) (admitted int) {
	t.Helper()
	var rem []int
	for _, d := range ds {
		if d.Local {
			t.Fatal("decided in process with Redis up")
		}
		if d.Allowed {
			rem = append(rem, d.Remaining)
		} else if d.RetryAfter <= 0 || d.Remaining != 0 {
			t.Fatalf("refusal %+v", d)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(rem)))
	for i, r := range rem {
		if r > budget-1-i+refill {
			t.Fatalf("admitted decision %d said %d remaining of a budget of %d (remaining said: %v)", i, r, budget, rem)
		}
	}
	return len(rem)
}

// Concurrent requests on a budget with room are all admitted: those that find the lease empty
// wait for the one lease request on its way instead of racing it for their own (which took the
// budget beyond what they needed and refused the losers locally), and Remaining is the budget
// less what was admitted. A burst past the budget admits exactly the budget.
func TestConcurrentRequestsShareOneLeaseRequest(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	lim := ratelimit.Limit{Rate: 1, Burst: 100}
	start := time.Now()
	// Rate 1/s: whole seconds passed since the budget was full are tokens refilled.
	refill := func() int { return int(time.Since(start).Seconds()) }
	ds := burst(l, "shared", lim, 50)
	if n := checkRemaining(t, ds, 100, refill()); n != 50 {
		t.Fatalf("%d of 50 concurrent requests admitted on a budget of 100", n)
	}
	// The second burst finds what the first left (its unspent lease included, as this limiter
	// runs no Run to give it back): 50 of the 100 and what refilled.
	ds = append(ds, burst(l, "shared", lim, 80)...)
	n, r := checkRemaining(t, ds, 100, refill()), refill()
	if n < 100 || n > 100+r {
		t.Fatalf("two bursts of 50 and 80 admitted %d on a budget of 100 (refill %d)", n, r)
	}

	fresh := ratelimit.New(rdb, ratelimit.Options{Timeout: slowMachine})
	start = time.Now()
	ds = burst(fresh, "over", lim, 130)
	n, r = checkRemaining(t, ds, 100, refill()), refill()
	if n < 100 || n > 100+r {
		t.Fatalf("a burst of 130 admitted %d on a budget of 100 (refill %d)", n, r)
	}
}
