package cache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func itoa(k int) string { return strconv.Itoa(k) }

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// counter is a load that counts its runs and answers the run's number, or err.
type counter struct {
	runs atomic.Int64
	err  error
}

func (c *counter) load(context.Context) (int64, error) {
	n := c.runs.Add(1)
	if c.err != nil {
		return 0, c.err
	}
	return n, nil
}

// Callers of one key while its load runs share that load and its answer, even with nothing
// kept (TTL 0): every caller is known to wait on the load before it is let answer.
func TestConcurrentCallersShareOneLoad(t *testing.T) {
	const callers = 20
	c := New[int, int64](itoa, Options{})
	var waiting sync.WaitGroup
	waiting.Add(callers)
	c.joined = waiting.Done
	release := make(chan struct{})
	var runs atomic.Int64
	load := func(context.Context) (int64, error) {
		runs.Add(1)
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	got := make(chan int64, callers)
	for range callers {
		wg.Go(func() {
			v, err := c.Get(context.Background(), 1, load)
			if err != nil {
				t.Error(err)
			}
			got <- v
		})
	}
	waiting.Wait()
	close(release)
	wg.Wait()
	close(got)
	for v := range got {
		if v != 42 {
			t.Fatalf("a caller got %d, want the shared load's 42", v)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d loads for %d concurrent callers, want 1", n, callers)
	}
	// Nothing is kept: the next call loads again.
	if _, ok := c.Cached(1); ok {
		t.Fatal("a value kept with TTL 0")
	}
}

// A value is kept until TTL has passed on the Loader's clock, then loaded again.
func TestValueExpiresAfterTTL(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := New[int, int64](itoa, Options{TTL: time.Minute, Now: clk.now})
	src := &counter{}
	want := func(step string, n int64) {
		t.Helper()
		if v, err := c.Get(context.Background(), 7, src.load); err != nil || v != n {
			t.Fatalf("%s: %d %v, want %d", step, v, err, n)
		}
	}
	want("first", 1)
	clk.add(time.Minute - time.Nanosecond)
	want("just before the TTL", 1)
	if v, ok := c.Cached(7); !ok || v != 1 {
		t.Fatalf("Cached before the TTL: %d %v", v, ok)
	}
	clk.add(time.Nanosecond)
	if _, ok := c.Cached(7); ok {
		t.Fatal("Cached answers a value past its TTL")
	}
	want("at the TTL", 2)
	want("kept again", 2)
	if v, err := c.Get(context.Background(), 8, src.load); err != nil || v != 3 {
		t.Fatalf("another key: %d %v, want its own load", v, err)
	}
	c.Forget(7)
	want("after Forget", 4)
}

// Without FailTTL a load's error is not kept: the next call loads again.
func TestErrorNotKeptWithoutFailTTL(t *testing.T) {
	down := errors.New("down")
	c := New[int, int64](itoa, Options{TTL: time.Minute})
	src := &counter{err: down}
	for i := range 3 {
		if _, err := c.Get(context.Background(), 1, src.load); !errors.Is(err, down) {
			t.Fatalf("call %d: %v, want the load's error", i, err)
		}
	}
	if n := src.runs.Load(); n != 3 {
		t.Fatalf("%d loads for 3 failing calls, want 3", n)
	}
	src.err = nil
	if v, err := c.Get(context.Background(), 1, src.load); err != nil || v != 4 {
		t.Fatalf("after recovery: %d %v", v, err)
	}
}

// With FailTTL a load's error is answered without loading until FailTTL has passed; a value
// loaded then replaces it.
func TestErrorKeptForFailTTL(t *testing.T) {
	down := errors.New("down")
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := New[int, int64](itoa, Options{TTL: time.Minute, FailTTL: 5 * time.Second, Now: clk.now})
	src := &counter{err: down}
	for i := range 3 {
		if _, err := c.Get(context.Background(), 1, src.load); !errors.Is(err, down) {
			t.Fatalf("call %d: %v, want the kept error", i, err)
		}
	}
	if n := src.runs.Load(); n != 1 {
		t.Fatalf("%d loads while the error is kept, want 1", n)
	}
	src.err = nil
	clk.add(5 * time.Second)
	if v, err := c.Get(context.Background(), 1, src.load); err != nil || v != 2 {
		t.Fatalf("after FailTTL: %d %v, want a new load", v, err)
	}
	src.err = down
	clk.add(time.Minute)
	if _, err := c.Get(context.Background(), 1, src.load); !errors.Is(err, down) {
		t.Fatalf("%v, want the new failure", err)
	}
	c.Forget(1)
	src.err = nil
	if v, err := c.Get(context.Background(), 1, src.load); err != nil || v != 4 {
		t.Fatalf("after Forget: %d %v, want a new load", v, err)
	}
}

// With Abandon a caller whose context ends stops waiting and the load goes on and is kept;
// without it the caller waits for the load's answer.
func TestCallerContext(t *testing.T) {
	for _, abandon := range []bool{true, false} {
		c := New[int, int64](itoa, Options{TTL: time.Minute, Abandon: abandon})
		started, release := make(chan struct{}), make(chan struct{})
		loaded := make(chan error, 1)
		load := func(ctx context.Context) (int64, error) {
			close(started)
			<-release
			loaded <- ctx.Err()
			return 9, nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() {
			_, err := c.Get(ctx, 1, load)
			res <- err
		}()
		<-started
		cancel()
		if abandon {
			if err := <-res; !errors.Is(err, context.Canceled) {
				t.Fatalf("abandoning caller: %v, want its context's error", err)
			}
		}
		close(release)
		if err := <-loaded; err != nil {
			t.Fatalf("abandon %v: the load saw %v, want it detached from the caller", abandon, err)
		}
		if !abandon {
			if err := <-res; err != nil {
				t.Fatalf("waiting caller: %v, want the load's answer", err)
			}
		}
		// The answer is shared or kept: a later caller gets it without loading.
		v, err := c.Get(context.Background(), 1, func(context.Context) (int64, error) {
			return 0, errors.New("loaded again")
		})
		if err != nil || v != 9 {
			t.Fatalf("abandon %v: later caller got %d %v, want the load's 9", abandon, v, err)
		}
	}
}

// A load that does not answer within Timeout gets its own deadline, whatever the caller's.
func TestLoadIsBounded(t *testing.T) {
	c := New[int, int64](itoa, Options{Timeout: time.Millisecond})
	_, err := c.Get(context.Background(), 1, func(ctx context.Context) (int64, error) {
		if _, ok := ctx.Deadline(); !ok {
			return 0, errors.New("no deadline")
		}
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the load's own deadline", err)
	}
}

// A Forget while a load runs (a revoke reported while the old answer is being read) keeps that
// load's answer from being kept: the next Get loads again, whether it comes while the old load
// still runs or after it ended.
func TestForgetDuringLoad(t *testing.T) {
	c := New[int, int64](itoa, Options{TTL: time.Hour})
	started, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	load := func(context.Context) (int64, error) {
		n := runs.Add(1)
		if n == 1 {
			close(started)
			<-release
		}
		return n, nil
	}
	first := make(chan int64)
	go func() {
		v, _ := c.Get(context.Background(), 1, load)
		first <- v
	}()
	<-started
	c.Forget(1)
	if v, err := c.Get(context.Background(), 1, load); err != nil || v != 2 {
		t.Fatalf("Get after Forget, old load running: %d %v, want a new load's 2", v, err)
	}
	c.Forget(1)
	close(release)
	if v := <-first; v != 1 {
		t.Fatalf("the forgotten load's caller got %d, want its answer 1", v)
	}
	if v, ok := c.Cached(1); ok {
		t.Fatalf("the forgotten load's answer %d was kept", v)
	}
	if v, err := c.Get(context.Background(), 1, load); err != nil || v != 3 {
		t.Fatalf("Get after the forgotten load ended: %d %v, want a new load's 3", v, err)
	}
	if v, err := c.Get(context.Background(), 1, load); err != nil || v != 3 {
		t.Fatalf("Get with nothing forgotten: %d %v, want the kept 3", v, err)
	}
}
