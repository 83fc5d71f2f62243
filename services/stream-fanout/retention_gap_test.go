package streamfanout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// waitReleased waits until the disconnect's save of session sess has released it (so that what
// the test does next is not written over by that save) and returns its saved position.
func (w *world) waitReleased(sess string) map[int]int64 {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for w.rdb.HGet(ctx, w.prefix+"s:"+sess, "owner").Val() != "" {
		if ctx.Err() != nil {
			w.t.Fatal("the session was never released")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cursor := map[int]int64{}
	if err := json.Unmarshal([]byte(w.rdb.HGet(ctx, w.prefix+"s:"+sess, "cursor").Val()), &cursor); err != nil {
		w.t.Fatal(err)
	}
	return cursor
}

// publishUnder publishes ts under key, so every batch under one key lands in one partition.
func (w *world) publishUnder(key string, ts ...*eventsv1.Transfer) {
	w.t.Helper()
	evs := make([]eventbus.Event, len(ts))
	for i, tr := range ts {
		evs[i] = eventbus.Event{Topic: eventsv1.TopicTransfers, Key: key, Msg: tr}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, evs...); err != nil {
		w.t.Fatal(err)
	}
}

// metricWith sums the replica's /metrics lines of counter name that carry every label given
// (`reason="retention"`).
func (r *replica) metricWith(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(r.ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v float64
	sc := bufio.NewScanner(resp.Body)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		if f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			v += f
		}
	}
	return v
}

// transfers makes n transfers from from.
func transfers(from string, n int) []*eventsv1.Transfer {
	ts := make([]*eventsv1.Transfer, n)
	for i := range ts {
		ts[i] = transferMsg(from, addr(99), 1)
	}
	return ts
}

// expectTransfers reads len(ts) transfers, which must be ts in order, for filter fid.
func (c *client) expectTransfers(fid string, ts ...*eventsv1.Transfer) {
	c.t.Helper()
	for i, tr := range ts {
		if got, alert, _ := c.transfer(); got != tr.Id || alert != fid {
			c.t.Fatalf("transfer %d: got %s (%s), want %s (%s)", i, got, alert, tr.Id, fid)
		}
	}
}

// reconnectAck is the ack of a reconnect of session sess (one filter fid on from) whose replay
// could not start at the saved position on partition part.
func reconnectAck(mid, sess, fid, from string, part int, saved, resumed int64, reason string) string {
	return `{"type":"ack","payload":{"messageId":"` + mid + `","success":true,` +
		`"message":"reconnected; what was matched while away could not be replayed on every partition (see replayGaps)",` +
		`"data":{"sessionId":"` + sess + `","filters":[{"filterId":"` + fid + `","filters":{"from":["` + from + `"]}}],"replayGaps":[` +
		fmt.Sprintf(`{"partition":%d,"savedOffset":%d,"resumedAt":%d,"reason":"%s"}]}}}`, part, saved, resumed, reason)
}

// TestRetentionGapToldWhereverFound: records a session was owed, deleted (as retention does)
// between its disconnect and its reconnect, are a gap its reconnect's ack tells of (replayGaps,
// reason retention, resumedAt the first record kept), and the records after them are sent,
// whether the replica reads the log's start after the deletion (the saved position is found
// before the start) or shares a read of it from before the deletion (STREAM_OFFSETS_TTL; the
// replay's reader, asking for the saved position, gets a later record: kafka-go skips to the
// first kept record without an error), and when every record owed was deleted and none written
// after them to skip to. Each gap counts in stream_replay_gaps_total, by where it was found.
func TestRetentionGapToldWhereverFound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cached bool // the replica's read of the log's start is from before the deletion
		kept   int  // of the 4 transfers published while away, how many the deletion keeps
	}{
		{"start read after the deletion", false, 2},
		{"start read before the deletion", true, 2},
		{"every owed record deleted, start read before", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			r := w.start(func(c *streamfanout.Config) { c.OffsetsTTL = time.Hour })
			from := addr(80)
			id := ident("kret")
			const key = "retention-gap"
			c := w.dial(r, id, "")
			fid, sess := c.subscribe(map[string]any{"from": []string{from}})
			// Stays connected: once it has a transfer, the replica's own reader has read it
			// (records deleted before that reader reads them are another gap, which sessions
			// connected at the time are not told of).
			watcher := w.dial(r, ident("kwatch"), "")
			wfid, _ := watcher.subscribe(map[string]any{"from": []string{from}})
			served := transfers(from, 2)
			w.publishUnder(key, served...)
			c.expectTransfers(fid, served...)
			watcher.expectTransfers(wfid, served...)
			_ = c.c.CloseNow()
			cursor := w.waitReleased(sess)
			part := -1
			for p, off := range cursor {
				if off == 2 {
					part = p
				}
			}
			if part < 0 {
				t.Fatalf("saved position %v: no partition at 2", cursor)
			}
			if tc.cached {
				// A resume reads the log's start; the replica shares that read for the TTL.
				c1 := w.dial(r, id, "")
				mid := c1.send("reconnect", map[string]any{"sessionId": sess})
				if m := c1.next(); m.Type != "ack" || m.Payload["messageId"] != mid || m.Payload["data"].(map[string]any)["replayGaps"] != nil {
					t.Fatalf("first reconnect: %s", m.raw)
				}
				_ = c1.c.CloseNow()
				if again := w.waitReleased(sess); again[part] != 2 {
					t.Fatalf("saved position %v after the first reconnect, want %d at 2", again, part)
				}
			}
			away := transfers(from, 4)
			w.publishUnder(key, away...)
			watcher.expectTransfers(wfid, away...)
			deleted := int64(len(away) - tc.kept)
			kafkatest.DeleteRecords(t, w.brokers, eventsv1.TopicTransfers, int32(part), 2+deleted)

			c2 := w.dial(r, id, "")
			mid := c2.send("reconnect", map[string]any{"sessionId": sess})
			want := reconnectAck(mid, sess, fid, from, part, 2, 2+deleted, "retention")
			if m := c2.next(); !jsonEqual(t, m.raw, []byte(want)) {
				t.Fatalf("reconnect: got %s\nwant %s", m.raw, want)
			}
			c2.expectTransfers(fid, away[deleted:]...)
			after := transfers(from, 1)
			w.publishUnder(key, after...)
			c2.expectTransfers(fid, after...)

			found := `found="cursor"`
			if tc.cached {
				found = `found="read"`
			}
			if n := r.metricWith(t, "stream_replay_gaps_total", `reason="retention"`, found); n != 1 {
				t.Errorf("stream_replay_gaps_total{reason=retention,%s} = %v, want 1", found, n)
			}
			if n := r.metricWith(t, "stream_replay_gaps_total"); n != 1 {
				t.Errorf("stream_replay_gaps_total = %v in all, want 1", n)
			}
		})
	}
}
