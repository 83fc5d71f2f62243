package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A client that fails at once when Redis is stopped (no dial retries), as a test wants.
func outageClient(t *testing.T, addr string, hooks ...redis.Hook) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	for _, h := range hooks {
		rdb.AddHook(h)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// One budget hammered (far past its rate) while Redis runs, is stopped for two seconds and is
// started again: the admissions over the whole run stay within the rate and one burst (plus one
// more burst of slack): the in-process fallback starts from what Redis last said of the budget
// (spent), not from a fresh burst.
func TestFallbackCarriesTheBudget(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	l := ratelimit.New(outageClient(t, m.Addr()), ratelimit.Options{Timeout: 50 * time.Millisecond, FallbackFor: 200 * time.Millisecond})
	lim := ratelimit.Limit{Rate: 10, Burst: 50}
	ctx := context.Background()
	var allowed, local int
	start := time.Now()
	hammer := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
			dec := l.Allow(ctx, "hammered", lim)
			if dec.Allowed {
				allowed++
			}
			if dec.Local {
				local++
			}
		}
	}
	hammer(500 * time.Millisecond)
	m.Close()
	hammer(2 * time.Second)
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	hammer(500 * time.Millisecond)
	elapsed := time.Since(start).Seconds()
	bound := float64(lim.Burst) + float64(lim.Rate)*elapsed
	t.Logf("%d admitted in %.2fs (%d decided in process); rate and burst allow %.0f", allowed, elapsed, local, bound)
	if local == 0 {
		t.Fatal("nothing was decided in process while Redis was stopped")
	}
	if float64(allowed) > bound+float64(lim.Burst) {
		t.Fatalf("%d admitted in %.2fs, over rate and burst (%.0f) by more than a burst", allowed, elapsed, bound)
	}
}

// slowHook delays every command while slow is set, past the limiter's timeout.
type slowHook struct{ slow atomic.Bool }

func (h *slowHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *slowHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.slow.Load() {
			time.Sleep(80 * time.Millisecond)
		}
		return next(ctx, cmd)
	}
}

func (h *slowHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.slow.Load() {
			time.Sleep(80 * time.Millisecond)
		}
		return next(ctx, cmds)
	}
}

// Answers slower than the decision timeout from a Redis that is up do not take the limiter off
// Redis: the late requests are decided in process, and the next decision goes to Redis again. A
// stopped Redis does (connection errors in a row).
func TestSlowRedisIsNotAnOutage(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	hook := &slowHook{}
	reader := sdkmetric.NewManualReader()
	l := ratelimit.New(outageClient(t, m.Addr(), hook), ratelimit.Options{Timeout: 40 * time.Millisecond, MaxLease: 1,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	lim := ratelimit.Limit{Rate: 1000, Burst: 1000}
	ctx := context.Background()
	// Both reasons are exported at 0 before any decision, so the alert sees the first outage.
	if got := fallbacks(t, reader); len(got) != 2 || got["unreachable"] != 0 || got["slow"] != 0 {
		t.Fatalf("edge_ratelimit_local_fallback_total of a fresh limiter: %v, want slow and unreachable at 0", got)
	}
	// Redis answers (a busy machine may miss the timeout now and then: the bound only guards
	// against a hang).
	for deadline := time.Now().Add(30 * time.Second); ; {
		if d := l.Allow(ctx, "slow", lim); !d.Local && d.Allowed {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("first decisions: %+v", d)
		}
	}
	hook.slow.Store(true)
	for i := 0; i < 10; i++ {
		if d := l.Allow(ctx, "slow", lim); !d.Local || !d.Allowed {
			t.Fatalf("a late answer: %+v, want decided in process", d)
		}
		if l.Degraded() {
			t.Fatalf("after %d late answers the limiter left Redis", i+1)
		}
	}
	// Late answers count as slow, never as unreachable (which the alert watches).
	if got := fallbacks(t, reader); got["slow"] < 10 || got["unreachable"] != 0 {
		t.Fatalf("edge_ratelimit_local_fallback_total after 10 late answers: %v, want slow >= 10 and unreachable 0", got)
	}
	hook.slow.Store(false)
	// The late command still on the wire finishes first; then decisions are Redis's again.
	for deadline := time.Now().Add(30 * time.Second); ; {
		d := l.Allow(ctx, "slow", lim)
		if !d.Local && d.Allowed {
			break
		}
		if time.Now().After(deadline) || l.Degraded() {
			t.Fatalf("once Redis is quick again: %+v (degraded %v), want decided in Redis", d, l.Degraded())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A stopped Redis is an outage.
	m.Close()
	for i := 0; i < 5 && !l.Degraded(); i++ {
		l.Allow(ctx, "slow", lim)
	}
	if !l.Degraded() {
		t.Fatal("a stopped Redis did not take the limiter off it")
	}
	before := fallbacks(t, reader)["unreachable"]
	l.Allow(ctx, "slow", lim)
	if got := fallbacks(t, reader); got["unreachable"] <= before || got["unreachable"] == 0 {
		t.Fatalf("edge_ratelimit_local_fallback_total while Redis is stopped: %v, want unreachable counting", got)
	}
}

// fallbacks reads edge_ratelimit_local_fallback_total by reason.
func fallbacks(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "edge_ratelimit_local_fallback_total" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				reason, _ := dp.Attributes.Value("reason")
				out[reason.AsString()] = dp.Value
			}
		}
	}
	return out
}
