package streamfanout_test

import (
	"testing"
	"time"

	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestFreshTakeOverChargesTheFirstReplica: a REST session taken over on another replica with
// fresh=true starts at the topic's end and sends nothing of what the first replica delivered
// since its last save again, so the first replica, whose save at its end is refused as taken over
// fresh, charges those deliveries: 5 credits for 5 transfers. Before, it dropped them and gave
// their quota credits back (0): a client reconnecting fresh before each save got transfers free,
// past its hourly quota.
func TestFreshTakeOverChargesTheFirstReplica(t *testing.T) {
	w := newWorld(t)
	a := w.start(func(c *streamfanout.Config) { c.Checkpoint = time.Hour })
	b := w.start(func(c *streamfanout.Config) { c.Checkpoint = 100 * time.Millisecond })
	me := ident("kfresh")
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(a, me, "POST", "/ws/sessions", "").json(t, &made)
	from := addr(80)
	c := w.dial(a, me, "?session_id="+made.SessionID)
	c.subscribe(map[string]any{"from": []string{from}})
	for range 5 {
		tr := transferMsg(from, addr(81), 1)
		w.publish(tr)
		if id, _, _ := c.transfer(); id != tr.Id {
			t.Fatalf("delivery %s want %s", id, tr.Id)
		}
	}
	c2 := w.dial(b, me, "?session_id="+made.SessionID+"&fresh=true")
	c2.send("reconnect", map[string]any{"sessionId": made.SessionID})
	if m := c2.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	a.stop()
	if got := w.keyCredits(t, 8*time.Second, "kfresh")["kfresh"]; got != 5 {
		t.Fatalf("charged %d credits for the 5 transfers the client received (none sent again)", got)
	}
}
