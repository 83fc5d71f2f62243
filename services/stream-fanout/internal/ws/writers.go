package ws

import (
	"runtime"
	"sync/atomic"
	"time"
)

// drainer is what the pool runs: a connection's writer (conn.drain) sends what its queue holds.
type drainer interface{ drain() }

// writerPool runs connections' writers on a few goroutines that take woken connections in
// turn. A transfer followed by many clients wakes a thousand connections at once; one
// goroutine each would put a thousand runnable goroutines ahead of the topic reader and the
// engine on the replica's few cores, delaying every later transfer by the whole burst. A few
// writers keep the run queue short, so the reader gets its turn between writes, and cost less
// CPU per delivery (no goroutine start, no stack growth per wake).
//
// A write blocks only when a client's socket buffer is full (a client not reading); the write
// timeout bounds it. So that such writers cannot stall the rest, a watchdog adds a writer
// whenever woken connections wait and no writer has taken one for a stall period; writers
// left without work for idle end, so the pool shrinks back and an idle replica keeps none.
type writerPool struct {
	q     chan drainer
	size  int32
	idle  time.Duration
	stall time.Duration

	live     atomic.Int32  // writer goroutines running
	taken    atomic.Uint64 // connections taken from q, the watchdog's progress mark
	watching atomic.Bool
}

// newWriterPool returns a pool of size writers (more while some are stuck past stall), each
// ending after idle without work.
func newWriterPool(size int, idle, stall time.Duration) *writerPool {
	return &writerPool{q: make(chan drainer, 1<<16), size: int32(max(size, 1)), idle: idle, stall: stall}
}

// run has c's queue drained by one of the pool's writers. The engine calls it: it never blocks.
func (p *writerPool) run(c drainer) {
	select {
	case p.q <- c:
	default:
		// More woken connections than the queue holds (it holds each connection once, so only
		// past 65,536 connections): this one gets a goroutine of its own.
		go c.drain()
		return
	}
	if p.live.Load() < p.size {
		p.start()
	}
	p.watch()
}

func (p *writerPool) start() {
	p.live.Add(1)
	go p.writer()
}

// writer drains the connections it takes until none comes for p.idle.
func (p *writerPool) writer() {
	defer p.live.Add(-1)
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		select {
		case c := <-p.q:
			p.taken.Add(1)
			c.drain()
			if len(p.q) > 0 {
				// Let the topic reader and the engine, woken meanwhile, run before the next
				// connection: a writer with work never blocks, so without this they would wait
				// for the scheduler to preempt the writers.
				runtime.Gosched()
			}
			t.Reset(p.idle)
		case <-t.C:
			return
		}
	}
}

// watch runs the watchdog while woken connections wait: when none was taken for a stall
// period, every writer is busy on a slow socket (or ended just as c arrived), so it adds one.
func (p *writerPool) watch() {
	if !p.watching.CompareAndSwap(false, true) {
		return
	}
	go func() {
		t := time.NewTicker(p.stall)
		defer t.Stop()
		last := p.taken.Load()
		for range t.C {
			if len(p.q) == 0 {
				p.watching.Store(false)
				// A connection queued between the check and the store found the watchdog
				// still running and did not start one: look again before leaving.
				if len(p.q) == 0 || !p.watching.CompareAndSwap(false, true) {
					return
				}
			}
			if n := p.taken.Load(); n != last {
				last = n
				continue
			}
			p.start()
		}
	}()
}
