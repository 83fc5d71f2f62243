package streamfanout_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestReplayLimitKeepsTheOldestAndTellsTheRest: a client that stops reading is dropped as slow
// with 300 transfers of about 8 KiB published; its session's replay buffer is bounded to 64 KiB
// (STREAM_REPLAY_MAX_BYTES), so the save keeps the oldest owed that fit and drops the rest. The
// reconnect's ack tells how many were dropped and the block times of the first and last of
// them; the replay sends the kept ones in order, right after those delivered before the drop,
// then the catch-up what was published after the disconnect: nothing twice, the dropped ones
// never, and only the deliveries charged. stream_replay_dropped_total counts the dropped ones.
func TestReplayLimitKeepsTheOldestAndTellsTheRest(t *testing.T) {
	w := newWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	defer func() {
		if t.Failed() {
			t.Logf("replica logs:\n%s", logs.String())
		}
	}()
	r := w.start(func(c *streamfanout.Config) {
		c.QueueSize, c.QueuePerFilter, c.ReplayMaxBytes = 64, 0, 64<<10
	})
	slow := w.dial(r, ident("rl"), "")
	from := addr(80)
	fid, sess := slow.subscribe(map[string]any{"from": []string{from}})
	var all []*eventsv1.Transfer
	for range 300 {
		tr := transferMsg(from, addr(81), 100)
		tr.TokenName = strings.Repeat("n", 8<<10)
		all = append(all, tr)
	}
	// Published in batches until the replica has dropped the client: a replica reading the
	// topic behind the publisher would otherwise offer the batches to a client reading them.
	for i := 0; i < len(all); i += 50 {
		w.publishUnder("rl", all[i:i+50]...) // one partition: the order owed is the order published
		for wait := time.Now().Add(500 * time.Millisecond); i+50 < len(all) && r.metric(t, "stream_slow_clients_dropped_total") == 0 && time.Now().Before(wait); {
			time.Sleep(20 * time.Millisecond)
		}
	}
	got, _ := readTransfers(t, slow, nil, nil)
	if len(got) >= len(all) {
		t.Fatalf("the slow client got all %d before being dropped", len(got))
	}
	before := len(got)
	w.waitReleased(sess)
	// The replica has read every transfer published: the reconnect's catch-up reads them all
	// again, and none comes live to the queue (of 64) while the catch-up is queued.
	for wait := time.Now().Add(20 * time.Second); r.metric(t, "stream_feed_lag") != 0; {
		if time.Now().After(wait) {
			t.Fatal("the replica never read the whole topic")
		}
		time.Sleep(20 * time.Millisecond)
	}

	again := w.dial(r, ident("rl"), "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	ack := again.next()
	var a struct {
		Payload struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
			Data    struct {
				Dropped *struct {
					Count int    `json:"count"`
					From  string `json:"fromBlockTime"`
					To    string `json:"toBlockTime"`
				} `json:"replayDropped"`
			} `json:"data"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(ack.raw, &a); err != nil || ack.Type != "ack" || !a.Payload.Success || a.Payload.Data.Dropped == nil {
		t.Fatalf("reconnect ack without replayDropped: %s", ack.raw)
	}
	d := a.Payload.Data.Dropped
	last := transferMsg(from, addr(81), 100)
	w.publishUnder("rl", last)
	got, err := readTransfers(t, again, got, func(d []delivery) bool { return len(d) > 0 && d[len(d)-1].transfer == last.Id })
	if err != nil {
		t.Fatalf("after the reconnect %d deliveries: %v", len(got), err)
	}
	first := checkReplayHead(t, all, last, got, before, d.Count)
	for _, g := range got {
		if g.alert != fid {
			t.Fatalf("a delivery for alert %s, want %s", g.alert, fid)
		}
	}
	blockTime := func(tr *eventsv1.Transfer) string {
		return time.UnixMilli(tr.BlockTimeMs).UTC().Format(time.RFC3339Nano)
	}
	if d.From != blockTime(all[first]) || d.To != blockTime(all[first+d.Count-1]) {
		t.Fatalf("replayDropped spans %s to %s, want %s to %s", d.From, d.To, blockTime(all[first]), blockTime(all[first+d.Count-1]))
	}
	// Charged: every delivery, and those written before the drop that the client lost with the
	// connection (written counts as delivered).
	charged := indexOf(all, got[before].transfer) + len(got) - before
	if c := w.credits(t, "rl", charged); c != charged {
		t.Fatalf("credits metered %d, deliveries %d", c, charged)
	}
	if n := r.metric(t, "stream_replay_dropped_total"); int(n) != d.Count {
		t.Fatalf("stream_replay_dropped_total %v, want %d", n, d.Count)
	}
}

func indexOf(all []*eventsv1.Transfer, id string) int {
	for i, tr := range all {
		if tr.Id == id {
			return i
		}
	}
	return -1
}

// checkReplayHead checks the deliveries of a session dropped as slow and resumed with dropped
// deliveries over its replay limit: got[:before], read before the drop, are the first owed;
// those written then but lost with the connection are not sent again; then the replay's kept
// head (at least one), the catch-up from the session's position (what was published after the
// drop), and last. It returns the index in all of the first dropped.
func checkReplayHead(t *testing.T, all []*eventsv1.Transfer, last *eventsv1.Transfer, got []delivery, before, dropped int) int {
	t.Helper()
	for i := range before {
		if got[i].transfer != all[i].Id {
			t.Fatalf("delivery %d before the drop is %s, want %s", i, got[i].transfer, all[i].Id)
		}
	}
	if len(got) <= before+1 || got[len(got)-1].transfer != last.Id {
		t.Fatalf("after the reconnect %d deliveries, want the replay's head and then the last transfer", len(got)-before)
	}
	s := indexOf(all, got[before].transfer)
	if s < before {
		t.Fatalf("the replay starts at %d, before what was read before the drop (%d)", s, before)
	}
	rest := got[before : len(got)-1]
	for kept := 1; kept <= len(rest); kept++ {
		want := append(append([]*eventsv1.Transfer{}, all[s:s+kept]...), all[min(s+kept+dropped, len(all)):]...)
		if len(want) != len(rest) {
			continue
		}
		ok := true
		for i := range rest {
			ok = ok && rest[i].transfer == want[i].Id
		}
		if ok {
			return s + kept
		}
	}
	t.Fatalf("the %d deliveries after the reconnect are not a head of what was owed from #%d, %d dropped, then the rest", len(rest), s, dropped)
	return 0
}
