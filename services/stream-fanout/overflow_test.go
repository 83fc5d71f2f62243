package streamfanout_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// delivery is one (alertId, transfer) a client read.
type delivery struct{ alert, transfer string }

// readTransfers reads c's transfers until its connection ends (until, when set, says to stop
// earlier).
func readTransfers(t *testing.T, c *client, got []delivery, until func([]delivery) bool) ([]delivery, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for until == nil || !until(got) {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("no end to the reads after %d deliveries", len(got))
			}
			return got, err
		}
		var m msg
		if json.Unmarshal(b, &m) != nil || m.Type != "transfer" {
			continue
		}
		got = append(got, delivery{m.Payload["alertId"].(string), m.Payload["transfer"].(map[string]any)["id"].(string)})
	}
	return got, nil
}

// TestOverflowMidTransferOwesItOnce: 50 filters of one session match every transfer, and the
// client never reads, so its queue (64) overflows in the middle of a transfer's 50 matches.
// After the 1008 and a reconnect, every (alertId, transfer) arrives exactly once, the
// transfers in order, and the credits metered equal the deliveries.
func TestOverflowMidTransferOwesItOnce(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.QueueSize, c.QueuePerFilter = 64, 0 })
	slow := w.dial(r, ident("kd"), "")
	fast := w.dial(r, ident("kd2"), "")
	from := addr(70)
	var sess string
	alerts := map[string]bool{}
	for i := range 50 {
		var fid string
		fid, sess = slow.subscribe(map[string]any{"from": []string{from}, "usdGte": i})
		alerts[fid] = true
	}
	if len(alerts) != 50 {
		t.Fatalf("%d distinct filters, want 50", len(alerts))
	}
	fast.subscribe(map[string]any{"from": []string{from}})
	var all []string
	for range 20 {
		var ts []*eventsv1.Transfer
		for range 4 {
			tr := transferMsg(from, addr(71), 100)
			tr.TokenName = string(make([]byte, 4<<10))
			ts = append(ts, tr)
			all = append(all, tr.Id)
		}
		w.publish(ts...)
		for i := range ts {
			if id, _, _ := fast.transfer(); id != ts[i].Id {
				t.Fatalf("fast client delivery %d out of order", i)
			}
		}
	}
	got, _ := readTransfers(t, slow, nil, nil)
	if len(got) >= 50*len(all) {
		t.Fatalf("the slow client got everything (%d) before being dropped", len(got))
	}
	again := w.dial(r, ident("kd"), "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	// A sentinel after the rest: whatever would come twice comes before it.
	last := transferMsg(from, addr(71), 100)
	w.publish(last)
	all = append(all, last.Id)
	got, err := readTransfers(t, again, got, func(d []delivery) bool { return len(d) > 0 && d[len(d)-1].transfer == last.Id })
	if err != nil {
		t.Fatalf("after the reconnect %d deliveries: %v", len(got), err)
	}
	got, _ = readTransfers(t, again, got, func(d []delivery) bool { return len(d) >= 50*len(all) })
	checkEachOnce(t, got, all, alerts)
	if c := w.credits(t, "kd", len(got)); c != len(got) {
		t.Fatalf("credits metered %d, deliveries %d", c, len(got))
	}
}

// checkEachOnce checks got holds every (alert, transfer) once, the transfers in order.
func checkEachOnce(t *testing.T, got []delivery, transfers []string, alerts map[string]bool) {
	t.Helper()
	seen := map[delivery]bool{}
	for i, d := range got {
		if seen[d] {
			t.Fatalf("delivery %d (%s, %s) came twice", i, d.alert, d.transfer)
		}
		seen[d] = true
		if !alerts[d.alert] {
			t.Fatalf("delivery %d names alert %s", i, d.alert)
		}
		if want := transfers[i/len(alerts)]; d.transfer != want {
			t.Fatalf("delivery %d is of %s, want %s (in order)", i, d.transfer, want)
		}
	}
	if len(got) != len(transfers)*len(alerts) {
		t.Fatalf("%d deliveries, want %d", len(got), len(transfers)*len(alerts))
	}
}

// credits sums the credits metered for key until they reach at least want.
func (w *world) credits(t *testing.T, key string, want int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var credits int
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: w.brokers, Group: "test-credits-" + key, Topic: eventsv1.TopicUsageCalls, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, b []eventbus.Message[*eventsv1.UsageCall]) error {
			for _, m := range b {
				if m.Msg.KeyId == key {
					credits += int(m.Msg.Credits)
				}
			}
			if credits >= want {
				cancel()
			}
			return nil
		})
	_ = cons.Run(ctx)
	return credits
}

// TestManyFiltersBurstFitsTheQueue: a client reading at full speed with 50 filters that all
// match a burst of 200 transfers (10,000 deliveries) gets every one: its queue is sized for
// its filters (STREAM_QUEUE_SIZE plus STREAM_QUEUE_PER_FILTER each), where the default bound
// of one filter's session (1,024) would drop it as slow.
func TestManyFiltersBurstFitsTheQueue(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	c := w.dial(r, ident("kq"), "")
	from := addr(80)
	alerts := map[string]bool{}
	for i := range 50 {
		fid, _ := c.subscribe(map[string]any{"from": []string{from}, "usdGte": i})
		alerts[fid] = true
	}
	ts := make([]*eventsv1.Transfer, 200)
	ids := make([]string, len(ts))
	for i := range ts {
		ts[i] = transferMsg(from, addr(81), 100)
		ids[i] = ts[i].Id
	}
	read := make(chan []delivery, 1)
	go func() {
		got, _ := readTransfers(t, c, nil, func(d []delivery) bool { return len(d) >= 50*len(ts) })
		read <- got
	}()
	w.publish(ts...)
	got := <-read
	checkEachOnce(t, got, ids, alerts)
}
