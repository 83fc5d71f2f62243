package usage_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/usage"
)

// countingReader counts reads; each read waits for gate (when set) and answers n or err.
type countingReader struct {
	reads atomic.Int64
	gate  chan struct{}
	n     int64
	err   error
}

func (r *countingReader) PeriodIncluded(ctx context.Context, _ usage.Entity, _ time.Time) (int64, error) {
	r.reads.Add(1)
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return r.n, r.err
}

// Concurrent calls that find the figure expired share one read of it.
func TestIncludedConcurrentMissesReadOnce(t *testing.T) {
	r := &countingReader{n: 5000}
	c := usage.NewIncludedCache(r, usage.IncludedOptions{TTL: 50 * time.Millisecond, Timeout: time.Minute})
	e := usage.BilledEntity("u1", "")
	start, _ := usage.PeriodOf(time.Now())
	if n, err := c.Included(context.Background(), e, start); err != nil || n != 5000 {
		t.Fatalf("first read: %d %v", n, err)
	}
	for {
		if _, ok := c.Cached(e, start); !ok {
			break
		}
		time.Sleep(10 * time.Millisecond) // until the figure expires
	}
	r.gate = make(chan struct{})
	const calls = 50
	var wg, started sync.WaitGroup
	errs := make(chan error, calls)
	for i := 0; i < calls; i++ {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			if n, err := c.Included(context.Background(), e, start); err != nil || n != 5000 {
				errs <- errors.Join(err, errors.New("wrong figure"))
			}
		}()
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // let the calls reach the read before it answers
	close(r.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := r.reads.Load(); got != 2 {
		t.Fatalf("%d reads for one call and %d concurrent calls after expiry, want 2", got, calls)
	}
}

// A failed read is remembered: calls meanwhile get the failure (their key's tier) without
// reading again, and a read is tried again once it expires.
func TestIncludedFailureIsRememberedBriefly(t *testing.T) {
	down := errors.New("postgres down")
	r := &countingReader{err: down}
	c := usage.NewIncludedCache(r, usage.IncludedOptions{FailTTL: time.Second})
	e := usage.BilledEntity("u1", "o1")
	start, _ := usage.PeriodOf(time.Now())
	for i := 0; i < 20; i++ {
		if _, err := c.Included(context.Background(), e, start); !errors.Is(err, down) {
			t.Fatalf("call %d: %v, want the read's failure", i, err)
		}
	}
	if got := r.reads.Load(); got != 1 {
		t.Fatalf("%d reads for 20 calls while failing, want 1", got)
	}
	r.err, r.n = nil, 7
	eventually := time.Now().Add(10 * time.Second)
	for {
		n, err := c.Included(context.Background(), e, start)
		if err == nil && n == 7 {
			break
		}
		if time.Now().After(eventually) {
			t.Fatalf("never read again after the failure expired: %d %v", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := r.reads.Load(); got != 2 {
		t.Fatalf("%d reads, want 2", got)
	}
}

// A read that does not answer within Timeout fails, whatever the caller's deadline.
func TestIncludedReadIsBounded(t *testing.T) {
	r := &countingReader{gate: make(chan struct{})} // never answers until its context ends
	c := usage.NewIncludedCache(r, usage.IncludedOptions{Timeout: 20 * time.Millisecond})
	start, _ := usage.PeriodOf(time.Now())
	if _, err := c.Included(context.Background(), usage.BilledEntity("u1", ""), start); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the read's own deadline", err)
	}
}
