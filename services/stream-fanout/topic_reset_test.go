package streamfanout_test

import (
	"context"
	"testing"
	"time"
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
