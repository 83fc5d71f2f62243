package streamfanout_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestTakeOverChargesTheUnsavedTwiceAtMost: a session taken over on another replica resumes
// from its last save and sends again what the first replica delivered since. The first
// replica charges what it delivered (the client had it: whether the new connection sends it
// again is the client's choice), so what it delivered since its last save is charged twice,
// and nothing else: the 6 transfers owed once, plus a's 6 since its last save (it saves once
// an hour here; STREAM_CHECKPOINT is 5 s).
func TestTakeOverChargesTheUnsavedTwiceAtMost(t *testing.T) {
	w := newWorld(t)
	// a never saves before the take-over (so b sends all of it again); b saves often.
	a := w.start(func(c *streamfanout.Config) { c.Checkpoint = time.Hour })
	b := w.start(func(c *streamfanout.Config) { c.Checkpoint = 100 * time.Millisecond })
	from := addr(70)
	c := w.dial(a, ident("kdup"), "")
	_, sess := c.subscribe(map[string]any{"from": []string{from}})
	var ts []*eventsv1.Transfer
	for range 5 {
		ts = append(ts, transferMsg(from, addr(71), 1))
	}
	w.publish(ts...)
	for i, tr := range ts {
		if id, _, _ := c.transfer(); id != tr.Id {
			t.Fatalf("delivery %d on a: %s", i, id)
		}
	}
	// The client's network drops silently; it reconnects through the load balancer to b.
	c2 := w.dial(b, ident("kdup"), "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	if m := c2.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	sentinel := transferMsg(from, addr(71), 1)
	w.publish(sentinel)
	again := 0
	for {
		id, _, _ := c2.transfer()
		if id == sentinel.Id {
			break
		}
		again++
	}
	if again != len(ts) {
		t.Fatalf("b sent %d transfers again after the take-over; want %d (a never saved)", again, len(ts))
	}
	// a's connection still delivers the sentinel; a stops, and its save is refused as taken over.
	if id, _, _ := c.transfer(); id != sentinel.Id {
		t.Fatalf("a delivered %s; want the sentinel", id)
	}
	a.stop()
	owed, unsaved := int64(len(ts)+1), int64(len(ts)+1)
	if got := w.keyCredits(t, 8*time.Second, "kdup")["kdup"]; got != owed+unsaved {
		t.Fatalf("charged %d credits for %d transfers owed and %d a delivered since its last save; want %d", got, owed, unsaved, owed+unsaved)
	}
}

// keyCredits sums the credits metered for each of keys on usage.calls.v1 (each event id once)
// in what is published within d: a test comparing exact counts waits for what comes late too.
func (w *world) keyCredits(t *testing.T, d time.Duration, keys ...string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	credits := map[string]int64{}
	ids := map[string]bool{}
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: w.brokers, Group: "test-usage-" + strings.Join(keys, "-"), Topic: eventsv1.TopicUsageCalls, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, bt []eventbus.Message[*eventsv1.UsageCall]) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range bt {
				if slices.Contains(keys, m.Msg.KeyId) && !ids[m.EventID] {
					ids[m.EventID] = true
					credits[m.Msg.KeyId] += m.Msg.Credits
				}
			}
			return nil
		})
	_ = cons.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	return credits
}
