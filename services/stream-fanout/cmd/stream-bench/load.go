package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The steps both servers (stream-fanout and the peer) go through, in order: wait until ready,
// connect every client, measure idle memory, read deliveries while publishing at the rate, wait
// for the drain, then read CPU. measure and measurePeer compose them.

// waitReady polls url every 100 ms until it answers 200, at most tries times.
func waitReady(url string, tries int) error {
	for i := 0; ; i++ {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if i > tries {
			return fmt.Errorf("%s not ready: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// connectAll dials clients connections, 64 at a time; the first error fails it.
func connectAll(clients int, dial func(i int) (*websocket.Conn, error)) ([]*websocket.Conn, error) {
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
			c, err := dial(i)
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

// tally counts what the clients receive: latency histogram, deliveries and the last one's time.
type tally struct {
	lat             latency
	delivered, last atomic.Int64
}

// idleMemory lets the connections settle, then sets res.idleKB from the server's memory before
// (rss0) and after; it returns the CPU times the load is measured from.
func idleMemory(res *result, server *exec.Cmd, rss0 int64, clients int) (cpu0, self0 time.Duration) {
	time.Sleep(2 * time.Second)
	rss1, cpu0 := proc(server.Process.Pid)
	_, self0 = proc(os.Getpid())
	res.idleKB = float64(rss1-rss0) / float64(clients)
	return cpu0, self0
}

// publishAtRate publishes rate*secs transfers in 10 ms batches, as many each tick as the rate has
// made due since start.
func publishAtRate(res *result, start time.Time, rate, secs int, publish func(n int) error) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for res.published < rate*secs {
		<-tick.C
		due := min(int(time.Since(start).Seconds()*float64(rate)), rate*secs) - res.published
		if due <= 0 {
			continue
		}
		if err := publish(due); err != nil {
			return err
		}
		res.published += due
	}
	return nil
}

// finish waits until deliveries stop, then fills res from the tally and the CPU used since the
// load started, and closes the connections.
func finish(res *result, t *tally, server *exec.Cmd, start time.Time, cpu0, self0 time.Duration, cancel context.CancelFunc, conns []*websocket.Conn) {
	for prev := int64(-1); ; {
		time.Sleep(time.Second)
		n := t.delivered.Load()
		if n == prev {
			break
		}
		prev = n
	}
	_, cpu1 := proc(server.Process.Pid)
	_, self1 := proc(os.Getpid())
	wall := time.Since(start).Seconds()
	res.serverCores, res.benchCores = (cpu1-cpu0).Seconds()/wall, (self1-self0).Seconds()/wall
	res.deliveries = t.delivered.Load()
	res.seconds = time.Unix(0, t.last.Load()).Sub(start).Seconds()
	res.p50, res.p99 = t.lat.pct(0.50), t.lat.pct(0.99)
	res.cpuPerKDeliv = (cpu1 - cpu0).Seconds() / float64(max(res.deliveries, 1)) * 1000
	cancel()
	for _, c := range conns {
		_ = c.CloseNow()
	}
}
