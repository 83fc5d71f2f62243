package ws

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fresh connects share the topic's end: one read for every connect within the ttl, including
// connects that arrive while the read is in flight; a failed read is not kept.
func TestTopicEndsSharedAcrossConnects(t *testing.T) {
	var reads atomic.Int32
	release := make(chan struct{})
	fail := atomic.Bool{}
	read := func(context.Context) (map[int]int64, error) {
		n := reads.Add(1)
		<-release
		if fail.Load() {
			return nil, errors.New("broker down")
		}
		return map[int]int64{0: int64(100 * n)}, nil
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	te := newTopicEnds(read, time.Second, func() time.Time { return time.Unix(0, clock.Load()) })
	ctx := context.Background()

	var wg sync.WaitGroup
	got := make([]map[int]int64, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = te.get(ctx)
		}()
	}
	for reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i, end := range got {
		if end[0] != 100 {
			t.Fatalf("connect %d got end %v, want the shared read's {0:100}", i, end)
		}
	}
	if end, _ := te.get(ctx); end[0] != 100 || reads.Load() != 1 {
		t.Fatalf("%d reads for 51 connects within the ttl (end %v), want 1", reads.Load(), end)
	}
	clock.Add(int64(2 * time.Second))
	if end, err := te.get(ctx); err != nil || end[0] != 200 || reads.Load() != 2 {
		t.Fatalf("after the ttl: end %v, %v, %d reads; want a new read", end, err, reads.Load())
	}
	clock.Add(int64(2 * time.Second))
	fail.Store(true)
	if _, err := te.get(ctx); err == nil {
		t.Fatal("a failed read returned no error")
	}
	fail.Store(false)
	if end, err := te.get(ctx); err != nil || end[0] != 400 {
		t.Fatalf("after a failed read: end %v, %v; want a new read, not the failure", end, err)
	}
}

// A connect that gives up waiting gets its own context's error; the read it started goes on
// and serves the next connect without a second read.
func TestTopicEndsReadOutlivesAGivenUpConnect(t *testing.T) {
	var reads atomic.Int32
	release := make(chan struct{})
	read := func(context.Context) (map[int]int64, error) {
		reads.Add(1)
		<-release
		return map[int]int64{0: 7}, nil
	}
	te := newTopicEnds(read, time.Hour, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := te.get(ctx)
		errc <- err
	}()
	for reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("a connect that gave up got %v, want context.Canceled", err)
	}
	close(release)
	if end, err := te.get(context.Background()); err != nil || end[0] != 7 || reads.Load() != 1 {
		t.Fatalf("next connect: end %v, %v, %d reads; want the first read's end and no second read", end, err, reads.Load())
	}
}
