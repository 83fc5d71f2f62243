package streamfanout_test

import (
	"context"
	"strings"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestStoppedReaderReplayBufferIsBounded: a client of 10 filters matching every transfer stops
// reading and is dropped as slow with far more owed than STREAM_REPLAY_MAX_BYTES (64 KiB). Its
// session's replay buffer in Redis holds at most that many bytes, its saved position stays
// behind the rest, and the reconnect gets every (alertId, transfer) once, in order (the part
// past the buffer read again from the topic), the credits metered equal to the deliveries.
func TestStoppedReaderReplayBufferIsBounded(t *testing.T) {
	const capBytes = 64 << 10
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.QueueSize, c.QueuePerFilter, c.ReplayMaxBytes = 256, 0, capBytes })
	slow := w.dial(r, ident("kr"), "")
	fast := w.dial(r, ident("kr2"), "")
	from := addr(90)
	var sess string
	alerts := map[string]bool{}
	for i := range 10 {
		var fid string
		fid, sess = slow.subscribe(map[string]any{"from": []string{from}, "usdGte": i})
		alerts[fid] = true
	}
	fast.subscribe(map[string]any{"from": []string{from}})
	var all []string
	for range 20 {
		var ts []*eventsv1.Transfer
		for range 4 {
			tr := transferMsg(from, addr(91), 100)
			tr.TokenName = strings.Repeat("x", 4<<10)
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
	w.waitReleased(sess)

	buf := w.rdb.LRange(context.Background(), w.prefix+"r:"+sess, 0, -1).Val()
	stored := 0
	for _, m := range buf {
		stored += len(m)
	}
	if len(buf) == 0 || stored > capBytes {
		t.Fatalf("replay buffer: %d messages, %d bytes; want some, at most %d bytes", len(buf), stored, capBytes)
	}
	if owed := 10*len(all) - len(got); len(buf) >= owed {
		t.Fatalf("the replay buffer holds all %d deliveries owed (%d bytes)", owed, stored)
	}

	again := w.dial(r, ident("kr"), "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	last := transferMsg(from, addr(91), 100)
	w.publish(last)
	all = append(all, last.Id)
	got, err := readTransfers(t, again, got, func(d []delivery) bool { return len(d) >= 10*len(all) })
	if err != nil {
		t.Fatalf("after the reconnect %d deliveries: %v", len(got), err)
	}
	checkEachOnce(t, got, all, alerts)
	if c := w.credits(t, "kr", len(got)); c != len(got) {
		t.Fatalf("credits metered %d, deliveries %d", c, len(got))
	}
}
