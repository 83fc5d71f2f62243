package ws

import (
	"sync"
	"testing"
	"time"
)

type drainFunc func()

func (f drainFunc) drain() { f() }

// Woken connections are drained by the pool's few writers; one whose writer blocks (a client
// not reading) does not hold back the others: the watchdog adds a writer, and the pool ends
// every writer once there is nothing to do.
func TestWriterPoolStuckWriterDoesNotStallOthers(t *testing.T) {
	p := newWriterPool(1, 50*time.Millisecond, 5*time.Millisecond)
	release := make(chan struct{})
	blocked := make(chan struct{})
	p.run(drainFunc(func() { close(blocked); <-release }))
	<-blocked
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 100 {
		wg.Add(1)
		p.run(drainFunc(wg.Done))
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("connections woken behind a stuck writer were not drained")
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); p.live.Load() > 0 || p.watching.Load(); {
		if time.Now().After(deadline) {
			t.Fatalf("%d writers still running, watchdog %v, with nothing to do", p.live.Load(), p.watching.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The pool runs at most its size of writers while they keep taking work.
func TestWriterPoolBoundsWriters(t *testing.T) {
	p := newWriterPool(2, time.Second, time.Hour)
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		p.run(drainFunc(func() {
			defer wg.Done()
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
			mu.Lock()
			running--
			mu.Unlock()
		}))
	}
	wg.Wait()
	if most > 2 {
		t.Fatalf("%d writers ran at once, the pool's size is 2", most)
	}
}
