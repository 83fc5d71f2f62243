package streamfanout_test

import (
	"github.com/chainintel/chainintel/libs/httpx"
	"testing"

	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// TestQuotaSpentReaderStaysOpen: a key whose quota is spent, with 50 filters matching a fast
// stream of transfers, reading everything it is sent, is told TIER_RATE_LIMITED once and
// kept open: the transfers over the quota are neither delivered nor owed, so they never fill
// its queue, and a reconnect to its session is told the quota is spent and owes nothing.
func TestQuotaSpentReaderStaysOpen(t *testing.T) {
	clearOfHourTurn(t)
	w := newWorld(t)
	// The client sends its 50 subscribes and the messages after them at once: more than the
	// default burst of client messages (STREAM_MESSAGE_BURST), which is not what this tests.
	r := w.start(func(c *streamfanout.Config) { c.MessageBurst = 100 })
	id := ident("kqs")
	id.Tier = "tiny"
	c := w.dial(r, id, "")
	pace := w.dial(r, ident("kqp"), "")
	from := addr(80)
	// The tier's 3 credits are spent, and the client told so.
	_, sess := c.subscribe(map[string]any{"from": []string{from}, "usdGte": 1000})
	var spend []*eventsv1.Transfer
	for range 4 {
		spend = append(spend, transferMsg(from, addr(81), 1000))
	}
	w.publish(spend...)
	for i := range 3 {
		if got, _, _ := c.transfer(); got != spend[i].Id {
			t.Fatalf("delivery %d of %s, want %s", i, got, spend[i].Id)
		}
	}
	m := c.expectError("TIER_RATE_LIMITED")
	if m.Payload["limitType"] != "hourly" {
		t.Fatalf("limit error %s", m.raw)
	}
	for i := range 49 {
		c.subscribe(map[string]any{"from": []string{from}, "usdGte": i})
	}
	pace.subscribe(map[string]any{"from": []string{from}})
	var ts []*eventsv1.Transfer
	for range 200 {
		ts = append(ts, transferMsg(from, addr(81), 100))
	}
	w.publish(ts...)
	for i := range ts {
		if got, _, _ := pace.transfer(); got != ts[i].Id {
			t.Fatalf("pacing client delivery %d out of order", i)
		}
	}
	stillOpenThenSpentOnReconnect(t, w, r, c, id, sess, "after the notice")
}

// TestQuotaSpentAtSubscribe: a key whose quota another of its connections has spent opens a
// new connection, subscribes 5 filters matching a burst of transfers far larger than its
// queue (each transfer owes it more deliveries than the queue holds), and the burst follows
// at once: the subscribe finds the quota spent, so the queue drops the burst rather than
// overflowing before the writer has checked the quota; the connection is told
// TIER_RATE_LIMITED, stays open, and a reconnect to its session owes nothing.
func TestQuotaSpentAtSubscribe(t *testing.T) {
	clearOfHourTurn(t)
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.QueueSize, c.QueuePerFilter = 8, 0 })
	id := ident("kqb")
	id.Tier = "tiny"
	from := addr(90)
	spender := w.dial(r, id, "")
	spender.subscribe(map[string]any{"from": []string{from}})
	var spend []*eventsv1.Transfer
	for range 4 {
		spend = append(spend, transferMsg(from, addr(91), 10))
	}
	w.publish(spend...)
	for i := range 3 {
		if got, _, _ := spender.transfer(); got != spend[i].Id {
			t.Fatalf("delivery %d of %s, want %s", i, got, spend[i].Id)
		}
	}
	spender.expectError("TIER_RATE_LIMITED")

	c := w.dial(r, id, "")
	for i := range 5 {
		c.send("subscribe", map[string]any{"filters": map[string]any{"from": []string{from}, "usdGte": i}})
	}
	var ts []*eventsv1.Transfer
	for range 100 {
		ts = append(ts, transferMsg(from, addr(91), 10))
	}
	w.publish(ts...)
	var sess string
	var acks, notices int
	for range 6 {
		switch m := c.next(); {
		case m.Type == "ack":
			acks++
			sess = m.Payload["data"].(map[string]any)["sessionId"].(string)
		case m.Type == "error" && m.Payload["code"] == "TIER_RATE_LIMITED" && m.Payload["limitType"] == "hourly":
			notices++
		default:
			t.Fatalf("after subscribing: %s", m.raw)
		}
	}
	if acks != 5 || notices != 1 {
		t.Fatalf("%d acks and %d notices", acks, notices)
	}
	// The pacing connection of another key sees the whole burst, so it has been matched.
	pace := w.dial(r, ident("kqbp"), "")
	pace.subscribe(map[string]any{"from": []string{from}})
	mark := transferMsg(from, addr(91), 10)
	w.publish(mark)
	if got, _, _ := pace.transfer(); got != mark.Id {
		t.Fatalf("pacing client got %s, want %s", got, mark.Id)
	}
	// The spender's queue, refusing since its writer found the quota spent, dropped the burst
	// and the mark as they were matched: counted apart from the delivered ones.
	if n := r.metric(t, "stream_quota_discarded_total"); n < 101 {
		t.Fatalf("stream_quota_discarded_total %v, want at least the spender's 101", n)
	}
	stillOpenThenSpentOnReconnect(t, w, r, c, id, sess, "after the burst")
}

// stillOpenThenSpentOnReconnect checks that c, whose key's quota is spent, is still open with
// nothing sent before the answer to its next request; then that a reconnect of its session sess
// is told the quota is still spent and owes nothing.
func stillOpenThenSpentOnReconnect(t *testing.T, w *world, r *replica, c *client, id httpx.Identity, sess, when string) {
	t.Helper()
	c.send("unsubscribe", map[string]any{"filterId": "x"})
	if m := c.next(); m.Type != "error" || m.Payload["code"] != "FILTER_NOT_FOUND" {
		t.Fatalf("%s: %s", when, m.raw)
	}
	_ = c.c.CloseNow()
	again := w.dial(r, id, "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect %s: %s", when, m.raw)
	}
	again.expectError("TIER_RATE_LIMITED")
	// Nothing is owed: the next message is the answer to the next request.
	again.send("unsubscribe", map[string]any{"filterId": "x"})
	if m := again.next(); m.Type != "error" || m.Payload["code"] != "FILTER_NOT_FOUND" {
		t.Fatalf("after the reconnect %s: %s", when, m.raw)
	}
}
