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

// TestFreshTakeOverOverlapChargedOnce: after a fresh take-over on another replica, the first
// connection goes on delivering until it notices (its next checkpoint or its end); what it
// delivers after the fresh claim is delivered, and charged, by the fresh connection too, so the
// first connection's refused save charges only what it delivered before the claim and gives
// back the quota credits of the rest: 8 credits for the session's 8 distinct transfers.
func TestFreshTakeOverOverlapChargedOnce(t *testing.T) {
	w := newWorld(t)
	a := w.start(func(c *streamfanout.Config) { c.Checkpoint = time.Hour })
	b := w.start(func(c *streamfanout.Config) { c.Checkpoint = 100 * time.Millisecond })
	me := ident("kover")
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(a, me, "POST", "/ws/sessions", "").json(t, &made)
	from := addr(90)
	c := w.dial(a, me, "?session_id="+made.SessionID)
	c.subscribe(map[string]any{"from": []string{from}})
	for range 5 {
		tr := transferMsg(from, addr(91), 1)
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
	for range 3 {
		tr := transferMsg(from, addr(91), 1)
		w.publish(tr)
		if id, _, _ := c.transfer(); id != tr.Id {
			t.Fatalf("a: delivery %s want %s", id, tr.Id)
		}
		if id, _, _ := c2.transfer(); id != tr.Id {
			t.Fatalf("b: delivery %s want %s", id, tr.Id)
		}
	}
	time.Sleep(500 * time.Millisecond) // b's checkpoint charges its 3
	a.stop()
	if got := w.keyCredits(t, 8*time.Second, "kover")["kover"]; got != 8 {
		t.Fatalf("charged %d credits for 8 distinct transfers of the session", got)
	}
}
