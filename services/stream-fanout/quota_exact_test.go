package streamfanout_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/coder/websocket"
)

// TestQuotaDeliversTheLimitExactly: a key of 500 stream transfers an hour, with 5 connections of
// 10 filters each matching every transfer, is delivered 100 and closes them all; 5 new
// connections are offered 1,000 more deliveries and are delivered exactly the 400 left, each
// told TIER_RATE_LIMITED once it is refused, and a connection opened after is told the quota is
// spent at its subscribe.
func TestQuotaDeliversTheLimitExactly(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	id := ident("kqx")
	id.Tier = "q500"
	from := addr(95)
	round := func(transfers int) (delivered int, limited int) {
		var cs []*client
		for range 5 {
			c := w.dial(r, id, "")
			for i := range 10 {
				c.subscribe(map[string]any{"from": []string{from}, "usdGte": i})
			}
			cs = append(cs, c)
		}
		var ts []*eventsv1.Transfer
		for range transfers {
			ts = append(ts, transferMsg(from, addr(96), 100))
		}
		w.publish(ts...)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, lim := readQuiet(c, 2*time.Second)
				mu.Lock()
				delivered += n
				limited += lim
				mu.Unlock()
			}()
		}
		wg.Wait()
		for _, c := range cs {
			_ = c.c.Close(websocket.StatusNormalClosure, "")
		}
		return delivered, limited
	}
	if n, lim := round(2); n != 100 || lim != 0 {
		t.Fatalf("first connections: %d delivered, %d told the quota is spent; want 100, 0", n, lim)
	}
	if n, lim := round(20); n != 400 || lim == 0 {
		t.Fatalf("after them: %d delivered, %d told the quota is spent; want the 400 left, then refusals", n, lim)
	}
	c := w.dial(r, id, "")
	c.subscribe(map[string]any{"from": []string{from}})
	c.expectError("TIER_RATE_LIMITED")
}

// readQuiet reads c until nothing comes for quiet, counting transfers and TIER_RATE_LIMITED
// notices.
func readQuiet(c *client, quiet time.Duration) (transfers, limited int) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), quiet)
		_, b, err := c.c.Read(ctx)
		cancel()
		if err != nil {
			return transfers, limited
		}
		var m msg
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		switch {
		case m.Type == "transfer":
			transfers++
		case m.Type == "error" && m.Payload["code"] == "TIER_RATE_LIMITED":
			limited++
		}
	}
}
