package streamfanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// TestCursorPastTheEndResumesAtTheStart: a session saved against an earlier broker (the local
// stack's in-memory broker restarted, or the topic deleted and recreated) has a cursor above
// every partition's end. The reconnect's ack says the replay from the saved position was not
// possible there (replayGaps: each partition resumes at the new log's start, 0 here), and the
// session receives the transfers published on the new topic while it was away, then those
// published after, instead of skipping every record below the old offsets or below the end.
func TestCursorPastTheEndResumesAtTheStart(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	from := addr(70)
	id := ident("kstale")
	c := w.dial(r, id, "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	_ = c.c.CloseNow()
	// The disconnect's save, which would write its cursor over ours, releases the session.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for w.rdb.HGet(ctx, w.prefix+"s:"+sess, "owner").Val() != "" {
		if ctx.Err() != nil {
			t.Fatal("the session was never released")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every partition of this broker ends far below the saved position.
	if err := w.rdb.HSet(context.Background(), w.prefix+"s:"+sess, "cursor", `{"0":310,"1":295,"2":305,"3":301}`, "hascursor", 1).Err(); err != nil {
		t.Fatal(err)
	}
	// Published while the client was away: the topic holds them, the session is owed them.
	away := map[string]bool{}
	for range 8 {
		tr := transferMsg(from, addr(71), 1)
		w.publish(tr)
		away[tr.Id] = true
	}

	c2 := w.dial(r, id, "")
	mid := c2.send("reconnect", map[string]any{"sessionId": sess})
	m := c2.next()
	want := `{"type":"ack","payload":{"messageId":"` + mid + `","success":true,` +
		`"message":"reconnected; what was matched while away could not be replayed on every partition (see replayGaps)",` +
		`"data":{"sessionId":"` + sess + `","filters":[{"filterId":"` + fid + `","filters":{"from":["` + from + `"]}}],"replayGaps":[` +
		`{"partition":0,"savedOffset":310,"resumedAt":0,"reason":"topicReset"},` +
		`{"partition":1,"savedOffset":295,"resumedAt":0,"reason":"topicReset"},` +
		`{"partition":2,"savedOffset":305,"resumedAt":0,"reason":"topicReset"},` +
		`{"partition":3,"savedOffset":301,"resumedAt":0,"reason":"topicReset"}]}}}`
	if !jsonEqual(t, m.raw, []byte(want)) {
		t.Fatalf("reconnect: got %s\nwant %s", m.raw, want)
	}
	for len(away) > 0 {
		got, alert, _ := c2.transfer()
		if !away[got] || alert != fid {
			t.Fatalf("replay: got %s (%s), want one of the %d transfers published while away not yet sent (%s)", got, alert, len(away), fid)
		}
		delete(away, got)
	}
	for i := range 3 {
		tr := transferMsg(from, addr(71), 1)
		w.publish(tr)
		if got, alert, _ := c2.transfer(); got != tr.Id || alert != fid {
			t.Fatalf("transfer %d after the resume: %s (%s), want %s (%s)", i, got, alert, tr.Id, fid)
		}
	}
}

// TestTopicRecreatedUnderARunningReplica: the transfer topic deleted and created again while a
// replica reads it (offsets start at 0 again, below the replica's position and the saved
// positions of its sessions). A connected session goes on receiving what the new topic holds,
// from its start, rather than waiting until the new log grows past the replica's old position;
// a session that was away is told of the reset in its reconnect's ack (replayGaps topicReset,
// resumed at the new log's start) and sent what the new topic holds, once, whether it
// reconnects before the replica's reader has found the reset (its replay finds it) or after.
func TestTopicRecreatedUnderARunningReplica(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	from := addr(90)
	const key = "recreated"
	live := w.dial(r, ident("klive"), "")
	lfid, _ := live.subscribe(map[string]any{"from": []string{from}})
	early, late := ident("kearly"), ident("klate")
	ce, cl := w.dial(r, early, ""), w.dial(r, late, "")
	efid, esess := ce.subscribe(map[string]any{"from": []string{from}})
	lafid, lsess := cl.subscribe(map[string]any{"from": []string{from}})
	old := transfers(from, 6)
	w.publishUnder(key, old...)
	for _, c := range []struct {
		c   *client
		fid string
	}{{live, lfid}, {ce, efid}, {cl, lafid}} {
		c.c.expectTransfers(c.fid, old...)
	}
	_, _ = ce.c.CloseNow(), cl.c.CloseNow()
	cursor := w.waitReleased(esess)
	w.waitReleased(lsess)
	part := -1
	for p, off := range cursor {
		if off == 6 {
			part = p
		}
	}
	if part < 0 {
		t.Fatalf("saved position %v: no partition at 6", cursor)
	}

	kafkatest.RecreateTopic(t, w.brokers, eventsv1.TopicTransfers)
	newer := transfers(from, 3)
	w.publishUnder(key, newer...) // the same partition, offsets 0 to 2
	// At once: the replica's reader has most likely not found the reset yet.
	c2 := w.dial(r, early, "")
	mid := c2.send("reconnect", map[string]any{"sessionId": esess})
	want := reconnectAck(mid, esess, efid, from, part, 6, 0, "topicReset")
	if m := c2.next(); !jsonEqual(t, m.raw, []byte(want)) {
		t.Fatalf("reconnect: got %s\nwant %s", m.raw, want)
	}
	c2.expectTransfers(efid, newer...)
	live.expectTransfers(lfid, newer...)
	// Now the replica reads the new topic.
	c3 := w.dial(r, late, "")
	mid = c3.send("reconnect", map[string]any{"sessionId": lsess})
	want = reconnectAck(mid, lsess, lafid, from, part, 6, 0, "topicReset")
	if m := c3.next(); !jsonEqual(t, m.raw, []byte(want)) {
		t.Fatalf("reconnect after the reset was read: got %s\nwant %s", m.raw, want)
	}
	c3.expectTransfers(lafid, newer...)

	after := transfers(from, 2)
	w.publishUnder(key, after...)
	for _, c := range []struct {
		c   *client
		fid string
	}{{live, lfid}, {c2, efid}, {c3, lafid}} {
		c.c.expectTransfers(c.fid, after...)
	}
	if n := r.metricWith(t, "stream_feed_gaps_total", `reason="topicReset"`); n != 1 {
		t.Errorf("stream_feed_gaps_total{reason=topicReset} = %v, want 1 (the partition that had records)", n)
	}
	if n := r.metricWith(t, "stream_replay_gaps_total", `reason="topicReset"`); n != 2 {
		t.Errorf("stream_replay_gaps_total{reason=topicReset} = %v, want 2", n)
	}
}
