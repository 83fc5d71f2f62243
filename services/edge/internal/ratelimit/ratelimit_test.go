package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
)

// Concurrent decisions (pipelined together) stay exact: of 400 simultaneous requests on one
// budget with burst 20 and a slow rate, exactly 20 pass; other budgets are untouched.
func TestConcurrentDecisionsAreExact(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l := ratelimit.New(rdb, ratelimit.Options{})
	lim := ratelimit.Limit{Rate: 1, Burst: 20}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 400; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
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
	close(start)
	wg.Wait()
	if n := allowed.Load(); n != 20 && n != 21 { // 21 if a second's refill lands mid-run
		t.Fatalf("allowed %d of 400 with burst 20", n)
	}
	for i := 0; i < 5; i++ {
		if d := l.Allow(context.Background(), fmt.Sprintf("other-%d", i), lim); !d.Allowed || d.Remaining != 19 || d.Limit != 1 {
			t.Fatalf("fresh budget: %+v", d)
		}
	}
}

// Without Redis the limiter decides in process with the same rate and burst.
func TestInProcessLimiter(t *testing.T) {
	l := ratelimit.New(nil, ratelimit.Options{})
	lim := ratelimit.Limit{Rate: 1, Burst: 3}
	got := 0
	for i := 0; i < 10; i++ {
		d := l.Allow(context.Background(), "k", lim)
		if !d.Local {
			t.Fatal("not local")
		}
		if d.Allowed {
			got++
		}
	}
	if got != 3 {
		t.Fatalf("allowed %d, want the burst 3", got)
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
	l := ratelimit.New(rdb, ratelimit.Options{})
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
