package streamfanout_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// TestQuotaExactAcrossReplicas: five connections of one key (tier "small", 200 transfers an
// hour) on two replicas sharing Redis. First every connection is sent the transfers; then only
// the three on the second replica are (the first replica's two go idle, holding credits of
// their lease). The second replica is refused once the credits it can lease are spent, which
// flags the key starved; the first gives back what it holds, the second asks Redis again and is
// sent the rest. The connections are delivered exactly the hourly limit, and no more however
// many transfers follow.
func TestQuotaExactAcrossReplicas(t *testing.T) {
	clearOfHourTurn(t)
	// The replicas' hour starts just before the test, so it does not turn during it.
	now := time.Now()
	clock := &testClock{ahead: now.Truncate(time.Hour).Add(time.Hour + 30*time.Second).Sub(now)}
	w := newWorld(t)
	w.clock = clock.now
	r1, r2 := w.start(nil), w.start(nil)
	id := ident("kex")
	id.Tier = "small"
	both, second := addr(70), addr(71)
	var total atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dial := func(r *replica, from ...string) {
		c := w.dial(r, id, "")
		c.subscribe(map[string]any{"from": from})
		go func() {
			for {
				_, b, err := c.c.Read(ctx)
				if err != nil {
					return
				}
				var m msg
				if json.Unmarshal(b, &m) == nil && m.Type == "transfer" {
					total.Add(1)
				}
			}
		}()
	}
	for range 2 {
		dial(r1, both)
	}
	for range 3 {
		dial(r2, both, second)
	}
	// A connection of another key on each replica says when a wave has been matched there.
	var paces []*client
	for i, r := range []*replica{r1, r2} {
		p := w.dial(r, ident("kexp"+strconv.Itoa(i)), "")
		p.subscribe(map[string]any{"from": []string{both, second}})
		paces = append(paces, p)
	}
	wave := func(from string) {
		t.Helper()
		ts := []*eventsv1.Transfer{transferMsg(from, addr(72), 1), transferMsg(from, addr(72), 1)}
		w.publish(ts...)
		for _, p := range paces {
			for range ts {
				p.transfer()
			}
		}
		if n := total.Load(); n > 200 {
			t.Fatalf("delivered %d, past the hourly limit of 200", n)
		}
	}
	for total.Load() < 60 {
		wave(both)
	}
	// A generous bound for a failure's sake (the refusal stands a second, the sweep runs every
	// second): not a measure of how fast the credits come back.
	deadline := time.Now().Add(30 * time.Second)
	for total.Load() < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of the hourly 200: credits stayed with the idle replica", total.Load())
		}
		wave(second)
		time.Sleep(20 * time.Millisecond)
	}
	// More transfers, to every connection, for longer than a refusal stands: nothing more is
	// delivered.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		wave(both)
		wave(second)
		time.Sleep(20 * time.Millisecond)
	}
	if n := total.Load(); n != 200 {
		t.Fatalf("delivered %d, want exactly the hourly limit 200", n)
	}
}
