package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
	"github.com/redis/go-redis/v9"
)

// latencyHook delays every command by delay (nanoseconds; 0: none).
type latencyHook struct{ delay atomic.Int64 }

func (h *latencyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *latencyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(time.Duration(h.delay.Load()))
		return next(ctx, cmd)
	}
}

func (h *latencyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		time.Sleep(time.Duration(h.delay.Load()))
		return next(ctx, cmds)
	}
}

// A request that waited for another's lease request and then asks Redis itself (the other's
// caller went away) gets the whole decision timeout for its ask: a healthy Redis, answering
// each command within the timeout, decides it, not the in-process fallback. With the wait's
// leftover time as the ask's deadline it would miss the answer and be decided locally.
func TestWaiterThatAsksGetsItsOwnTimeout(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	hook := &latencyHook{}
	const timeout, latency, giveUp = 2 * time.Second, 1300 * time.Millisecond, 1100 * time.Millisecond
	l := ratelimit.New(outageClient(t, m.Addr(), hook), ratelimit.Options{Timeout: timeout, MaxLease: 1})
	lim := ratelimit.Limit{Rate: 1000, Burst: 1000}
	if d := l.Allow(context.Background(), "warm", lim); d.Local || !d.Allowed { // script loaded, connection open
		t.Fatalf("warm-up: %+v", d)
	}
	hook.delay.Store(int64(latency))
	// The first request asks Redis; its caller gives up before the answer.
	first, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	done := make(chan ratelimit.Decision, 1)
	go func() { done <- l.Allow(first, "waiter", lim) }()
	time.Sleep(100 * time.Millisecond) // the first request's lease request is on its way
	d := l.Allow(context.Background(), "waiter", lim)
	if d.Local || !d.Allowed {
		t.Fatalf("the waiter that asked: %+v, want decided by Redis", d)
	}
	<-done
}
