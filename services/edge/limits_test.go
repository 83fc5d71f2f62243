package edge_test

import (
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/redis/go-redis/v9"
)

// At 100 requests/s offered for 5 s, a basic key (20/s, burst 20) gets rate*5+burst (never
// more, +1 for rounding; fewer only by what client stalls leave unused), and a second key offered the same load at the same time gets its own full budget.
// Redis's decisions are what is measured (the harness allows Redis a decision's time even on a
// loaded machine, so none falls back to the in-process limiter's fresh burst).
func TestStandardRateIsExactPerKey(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	basic, _ := e.Tiers.Get("basic")
	k1, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	k2, _ := e.key(t, edge.KeySpec{Tier: "basic"})

	admitted := map[string]int{}
	var lastRefused result
	// Requests every 10 ms within a 5 s window measured by the clock, so a slow machine offers
	// fewer requests but never stretches the window. The budget is counted up to the last
	// request offered: a machine that stalls just before the deadline offers nothing for the
	// tokens that come after, and those are not owed.
	start := time.Now()
	deadline := start.Add(5 * time.Second)
	var offered time.Time // when the last requests were offered
	for i := 0; ; i++ {
		if d := time.Until(start.Add(time.Duration(i) * 10 * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		now := time.Now()
		if !now.Before(deadline) {
			break
		}
		offered = now
		for _, k := range []string{k1, k2} {
			r := e.get("/chains", k)
			switch r.Status {
			case 200:
				admitted[k]++
			case 429:
				lastRefused = r
			default:
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
		}
	}
	took := offered.Sub(start)
	want := basic.Burst + int(math.Round(float64(basic.Rate)*took.Seconds())) // 120 when offered to the end
	// Never more than the budget (+1 for the last request's rounding). Fewer only by what a
	// stall of the client longer than the burst takes to refill leaves unused (tokens past the
	// burst are not kept), which a loaded machine can cause: a twentieth of the budget.
	for i, k := range []string{k1, k2} {
		if d := admitted[k] - want; d < -max(1, want/20) || d > 1 {
			t.Errorf("key %d: admitted %d with the last request at %s, want %d (+1, -%d)", i+1, admitted[k], took, want, max(1, want/20))
		}
	}
	if lastRefused.Body != `{"error":"too many requests"}`+"\n" {
		t.Errorf("429 body %q", lastRefused.Body)
	}
	ra, err := strconv.Atoi(lastRefused.Header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Errorf("Retry-After %q", lastRefused.Header.Get("Retry-After"))
	}
	if lastRefused.Header.Get("X-RateLimit-Limit") != strconv.Itoa(basic.Burst) || lastRefused.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 rate headers: %v", lastRefused.Header)
	}
}

// Heavy routes admit 1 request per second per key, over every heavy route together (API.md:
// "1 request/s per key"), apart from the standard budget: offering each of two heavy routes
// 20/s buys no more than offering one.
func TestHeavyRoutesOnePerSecondPerKey(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	admitted := 0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	// What the budget allows is counted from the clock, not from the ticks: a loaded machine
	// stretches the 60 ticks, and the refills with them.
	start := time.Now()
	var offered time.Time // when the last requests were offered
	// 20/s offered on each of two heavy routes for 3 s.
	for i := 0; i < 60; i++ {
		<-tick.C
		offered = time.Now()
		for _, p := range []string{"/transfers?rows=1", "/counterparties/address/0xabc"} {
			r := e.get(p, k)
			if r.Status == 200 {
				admitted++
				if r.Header.Get("X-RateLimit-Limit") != "1" {
					t.Fatalf("heavy X-RateLimit-Limit %q", r.Header.Get("X-RateLimit-Limit"))
				}
			} else if r.Status != 429 {
				t.Fatalf("%s: %d %s", p, r.Status, r.Body)
			}
		}
	}
	most := 1 + int(math.Ceil(offered.Sub(start).Seconds())) // burst 1 + 1/s: 4 when unloaded
	if admitted < 3 || admitted > most {
		t.Errorf("heavy routes together admitted %d with the last request at %s, want 3..%d", admitted, offered.Sub(start), most)
	}
	// The standard budget is untouched.
	if r := e.get("/chains", k); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") == "0" {
		t.Errorf("standard after heavy: %d %v", r.Status, r.Header)
	}
}

// A key's heavy call spends the budget of every heavy route: the next call of that key on
// another heavy route is a 429 with the documented body and headers, while another key's
// heavy calls are not affected.
func TestHeavyBudgetIsSharedAcrossRoutes(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k1, _ := e.key(t, edge.KeySpec{Tier: "api"})
	k2, _ := e.key(t, edge.KeySpec{Tier: "api"})
	if r := e.get("/transfers", k1); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("first heavy call: %d %v %s", r.Status, r.Header, r.Body)
	}
	for _, p := range []string{"/counterparties/address/0xabc", "/token/volume/ethereum", "/transfers/histogram"} {
		r := e.get(p, k1)
		if r.Status != 429 || r.Body != `{"error":"too many requests"}`+"\n" {
			t.Fatalf("%s after /transfers with the same key: %d %s", p, r.Status, r.Body)
		}
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("%s: Retry-After %q", p, r.Header.Get("Retry-After"))
		}
		if reset, err := strconv.Atoi(r.Header.Get("X-RateLimit-Reset")); err != nil || reset < 1 ||
			r.Header.Get("X-RateLimit-Limit") != "1" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("%s: rate headers %v", p, r.Header)
		}
	}
	// Another key has its own heavy budget, on the same routes.
	for _, p := range []string{"/counterparties/address/0xabc"} {
		if r := e.get(p, k2); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Fatalf("%s with another key: %d %v %s", p, r.Status, r.Header, r.Body)
		}
	}
	// Neither key's standard budget was spent by it.
	if r := e.get("/chains", k1); r.Status != 200 {
		t.Errorf("standard after heavy: %d %s", r.Status, r.Body)
	}
}

// Public routes are limited per client IP; behind a trusted proxy the client is the first
// untrusted address from the right of X-Forwarded-For.
func TestPublicRoutesPerClientIP(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.PublicRate, c.PublicBurst = 1, 3
		c.TrustedProxies = []string{"192.0.2.0/24"}
	}})
	count := func(xff string) int {
		n := 0
		for i := 0; i < 10; i++ {
			r := e.do("GET", "/health", "", "X-Forwarded-For", xff)
			if r.Status == 200 {
				if r.Body != "ok" {
					t.Fatalf("/health body %q", r.Body)
				}
				n++
			} else if r.Status != 429 || r.Header.Get("Retry-After") == "" {
				t.Fatalf("/health: %d %v", r.Status, r.Header)
			}
		}
		return n
	}
	// The rate is 1/s: a loaded machine slow enough to take over a second refills the budget
	// meanwhile, and what refilled is allowed on top of the burst (nothing when unloaded).
	refilled := func(since time.Time) int { return int(time.Since(since).Seconds()) }
	startA := time.Now()
	a := count("203.0.113.7")
	if a < 3 || a > 3+refilled(startA) {
		t.Errorf("client A admitted %d, want burst 3 (+%d refilled)", a, refilled(startA))
	}
	// A spoofed left-most entry does not buy a new budget: the proxy appended the real client.
	if n := count("198.51.100.1, 203.0.113.7"); a+n > 3+refilled(startA) {
		t.Errorf("spoofed XFF admitted %d after client A's %d, want 0 (+%d refilled)", n, a, refilled(startA))
	}
	startB := time.Now()
	if n := count("203.0.113.8"); n < 3 || n > 3+refilled(startB) {
		t.Errorf("client B admitted %d, want its own burst 3 (+%d refilled)", n, refilled(startB))
	}
}

// A revoked key is refused by every edge replica sharing Redis, though each would keep its
// cached answer for an hour: only the invalidation over pub/sub explains the refusal.
func TestRevokedKeyRefusedOnEveryReplica(t *testing.T) {
	a := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.KeyLocalTTL = time.Hour }})
	b := newEdge(t, edgeOpts{noConsume: true, redis: a.rdb, redisURL: a.cfg.Redis.URL, brokers: a.brokers,
		tune: func(c *edge.Config) { c.KeyLocalTTL = time.Hour }})
	raw, k := a.key(t, edge.KeySpec{Tier: "api"})
	for _, e := range []*testEdge{a, b} {
		if r := e.get("/chains", raw); r.Status != 200 {
			t.Fatalf("before revoke: %d %s", r.Status, r.Body)
		}
	}
	waitSubscribers(t, a.rdb, 2)
	if err := a.admin.Revoke(context.Background(), k.ID, ""); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for i, e := range []*testEdge{a, b} {
		for {
			r := e.get("/chains", raw)
			if r.Status == 401 {
				if r.Body != `{"error":"error validating API key"}`+"\n" {
					t.Fatalf("401 body %q", r.Body)
				}
				break
			}
			// A hang guard, not a speed claim: the replica's cache TTL is an hour.
			if time.Since(revoked) > time.Minute {
				t.Fatalf("replica %d still accepts the revoked key after a minute: %d", i, r.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func waitSubscribers(t *testing.T, rdb *redis.Client, n int64) {
	t.Helper()
	eventually(t, time.Minute, func() error {
		m, err := rdb.PubSubNumSub(context.Background(), "edge:keys:invalidate").Result()
		if err != nil {
			return err
		}
		if m["edge:keys:invalidate"] < n {
			return errString("subscribers " + strconv.FormatInt(m["edge:keys:invalidate"], 10))
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// Without Redis the edge keeps serving and limiting, in process: never unlimited.
func TestRedisDownLimitsInProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	dead := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	defer dead.Close()
	e := newEdge(t, edgeOpts{noConsume: true, redis: dead, redisURL: "redis://" + addr + "/0"})
	basic, _ := e.Tiers.Get("basic")
	k, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	ok, limited := 0, 0
	for i := 0; i < 3*basic.Burst; i++ {
		switch r := e.get("/chains", k); r.Status {
		case 200:
			ok++
		case 429:
			limited++
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	if ok < basic.Burst || ok > basic.Burst+2 || limited == 0 {
		t.Fatalf("without Redis: %d admitted, %d limited; want about the burst (%d) admitted", ok, limited, basic.Burst)
	}
	if !e.Limiter.Degraded() {
		t.Fatal("limiter does not report the fallback")
	}
}

// A saturated upstream yields quick 503s instead of a pile-up.
func TestSaturatedUpstreamIsShed(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.MaxInFlight, c.ShedWait = 2, 0 }})
	k, _ := e.key(t, edge.KeySpec{Tier: "api"})
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); e.get("/tx/0xblock?block=1", k) }()
	}
	eventually(t, time.Minute, func() error {
		e.backend.mu.Lock()
		defer e.backend.mu.Unlock()
		if e.backend.calls < 2 {
			return errString("backend not saturated yet")
		}
		return nil
	})
	start := time.Now()
	r := e.get("/tx/0xother", k)
	if r.Status != 503 || r.Header.Get("Retry-After") != "1" || r.Body != `{"error":"transfers is saturated; retry later"}`+"\n" {
		t.Fatalf("saturated: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r.Header.Get("X-Credits-Used") != "0" {
		t.Fatalf("a shed call was charged: %v", r.Header)
	}
	t.Logf("503 after %s", time.Since(start))
	// Other services are not affected.
	if r := e.get("/intelligence/address/0xabc", k); r.Status != 200 {
		t.Fatalf("other upstream: %d %s", r.Status, r.Body)
	}
	close(e.backend.release)
	wg.Wait()
	if r := e.get("/tx/0xother", k); r.Status != 200 {
		t.Fatalf("after release: %d %s", r.Status, r.Body)
	}
}

var _ = httpx.RoleOrgAdmin

// An address presenting made-up keys is cut off after FailedKeyBurst failures: 429 with a
// Retry-After instead of 401, and unknown keys are then refused without a lookup. A key the
// edge has already verified keeps working from the same address; another address is not
// affected.
func TestFailedKeysAreLimitedPerAddress(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.FailedKeyRate, c.FailedKeyBurst = 1, 5 }})
	good, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	if r := e.get("/chains", good); r.Status != 200 {
		t.Fatalf("valid key: %d %s", r.Status, r.Body)
	}
	// Made-up keys until the first refusal. The rate is 1/s: on a machine loaded enough to take
	// over a second, what refilled meanwhile is allowed on top of the burst (nothing unloaded).
	start := time.Now()
	failed := 0
	for i := 0; ; i++ {
		r := e.get("/chains", "ci_made_up_"+strconv.Itoa(i))
		if r.Status == 401 {
			if failed++; failed > 5+int(time.Since(start).Seconds()) {
				t.Fatalf("bad key %d: %d failures allowed in %s, past the burst of 5", i, failed, time.Since(start))
			}
			continue
		}
		if r.Status != 429 || r.Body != `{"error":"too many requests"}`+"\n" {
			t.Fatalf("bad key %d past the budget: %d %s", i, r.Status, r.Body)
		}
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		break
	}
	if failed < 5 {
		t.Fatalf("refused after %d failures, want the burst of 5", failed)
	}
	if r := e.get("/chains", good); r.Status != 200 {
		t.Fatalf("known valid key from the same address: %d %s", r.Status, r.Body)
	}
	other := e.do(http.MethodGet, "/chains", "ci_made_up_x", "remote", "198.51.100.7:1234")
	if other.Status != 401 {
		t.Fatalf("another address: %d %s", other.Status, other.Body)
	}
	time.Sleep(1100 * time.Millisecond) // one failure refilled
	if r := e.get("/chains", "ci_made_up_again"); r.Status != 401 {
		t.Fatalf("after the refill: %d %s", r.Status, r.Body)
	}
}
