package streamfanout_test

import (
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// TestQuotaSpentReaderStaysOpen: a key whose quota is spent, with 50 filters matching a fast
// stream of transfers, reading everything it is sent, is told TIER_RATE_LIMITED once and
// kept open: the transfers over the quota are neither delivered nor owed, so they never fill
// its queue, and a reconnect to its session owes nothing.
func TestQuotaSpentReaderStaysOpen(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
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
	// Still open, and nothing else was sent before the answer.
	c.send("unsubscribe", map[string]any{"filterId": "x"})
	if m := c.next(); m.Type != "error" || m.Payload["code"] != "FILTER_NOT_FOUND" {
		t.Fatalf("after the notice: %s", m.raw)
	}
	_ = c.c.CloseNow()
	again := w.dial(r, id, "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	// Nothing is owed: the next message is the answer to the next request.
	again.send("unsubscribe", map[string]any{"filterId": "x"})
	if m := again.next(); m.Type != "error" || m.Payload["code"] != "FILTER_NOT_FOUND" {
		t.Fatalf("after the reconnect: %s", m.raw)
	}
}
