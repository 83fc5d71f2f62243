package main

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// connectAll opens clients connections, 64 dials at a time; dial connects and subscribes
// client i. The first error fails it.
func connectAll(ctx context.Context, clients int, dial func(ctx context.Context, i int) (*websocket.Conn, error)) ([]*websocket.Conn, error) {
	conns := make([]*websocket.Conn, clients)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	errs := make(chan error, clients)
	for i := range clients {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dial(ctx, i)
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return conns, nil
}

// closeAll closes the clients' connections.
func closeAll(conns []*websocket.Conn) {
	for _, c := range conns {
		_ = c.CloseNow()
	}
}

// load is what a run measures while the workload is published: the deliveries its clients
// read, and the server's and this process's CPU time from the start.
type load struct {
	pid         int // the server's
	cpu0, self0 time.Duration
	start       time.Time
	lat         latency
	delivered   atomic.Int64
	last        atomic.Int64 // UnixNano of the last delivery
}

// newLoad starts measuring the server process pid.
func newLoad(pid int) *load {
	l := &load{pid: pid}
	_, l.cpu0 = proc(pid)
	_, l.self0 = proc(os.Getpid())
	return l
}

// publish publishes rate*secs events at rate, from now on, in 10 ms batches of what is due;
// send publishes n. It adds what it published to res.
func (l *load) publish(res *result, rate, secs int, send func(n int) error) error {
	l.start = time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for res.published < rate*secs {
		<-tick.C
		due := min(int(time.Since(l.start).Seconds()*float64(rate)), rate*secs) - res.published
		if due <= 0 {
			continue
		}
		if err := send(due); err != nil {
			return err
		}
		res.published += due
	}
	return nil
}

// finish waits until deliveries stop (none for a second), then fills res's figures of the load.
func (l *load) finish(res *result) {
	for prev := int64(-1); ; {
		time.Sleep(time.Second)
		n := l.delivered.Load()
		if n == prev {
			break
		}
		prev = n
	}
	_, cpu1 := proc(l.pid)
	_, self1 := proc(os.Getpid())
	wall := time.Since(l.start).Seconds()
	res.serverCores, res.benchCores = (cpu1-l.cpu0).Seconds()/wall, (self1-l.self0).Seconds()/wall
	res.deliveries = l.delivered.Load()
	res.seconds = time.Unix(0, l.last.Load()).Sub(l.start).Seconds()
	res.p50, res.p99 = l.lat.pct(0.50), l.lat.pct(0.99)
	res.cpuPerKDeliv = (cpu1 - l.cpu0).Seconds() / float64(max(res.deliveries, 1)) * 1000
}
