package streamfanout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestProtocol drives every client message and every error code over a real WebSocket, and
// checks that no bad message closes the connection.
func TestProtocol(t *testing.T) {
	w := newWorld(t)
	exch, user, other := addr(1), addr(2), addr(3)
	w.attribute(exch, "exch", "cex", "")
	r := w.start(nil)
	c := w.dial(r, ident("k1"), "")

	// Bad messages: each answered with an error, the connection stays usable.
	c.sendRaw(`not json`)
	c.expectError("INVALID_PAYLOAD")
	c.sendRaw(`{"type":"dance","id":"x","payload":{}}`)
	c.expectError("INVALID_PAYLOAD")
	c.sendRaw(`{"type":"subscribe","payload":{"filters":{"to":["exch"]}}}`)
	c.expectError("INVALID_PAYLOAD")
	c.send("subscribe", map[string]any{"filters": map[string]any{"chains": []string{"ethereum"}}})
	m := c.expectError("INVALID_FILTER")
	if m.Payload["messageId"] != "m1" {
		t.Fatalf("error does not name the message: %s", m.raw)
	}
	c.send("subscribe", map[string]any{"filters": map[string]any{"usdGte": 9_999_999}})
	c.expectError("INVALID_FILTER")
	c.send("subscribe", map[string]any{"filters": map[string]any{"from": []string{"0x12"}}})
	c.expectError("INVALID_FILTER")
	c.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{"exch"}, "colour": "red"}})
	c.expectError("INVALID_FILTER")
	c.send("unsubscribe", map[string]any{"filterId": "nope"})
	c.expectError("NO_SESSION")
	c.send("reconnect", map[string]any{"sessionId": "00000000-0000-0000-0000-000000000000"})
	c.expectError("NO_SESSION")

	// Two filters: an entity (deposits into exch) and a large-value filter.
	fEx, sess := c.subscribe(map[string]any{"to": []string{"exch"}})
	fBig, sess2 := c.subscribe(map[string]any{"usdGte": 20_000_000})
	if sess != sess2 {
		t.Fatalf("one connection, two sessions: %s %s", sess, sess2)
	}
	c.send("unsubscribe", map[string]any{"filterId": "nope"})
	c.expectError("FILTER_NOT_FOUND")

	miss := transferMsg(user, other, 100)
	dep := transferMsg(user, exch, 250)
	big := transferMsg(other, user, 30_000_000)
	w.publish(miss, dep, big)
	got := map[string]string{}
	for range 2 {
		id, alert, m := c.transfer()
		got[id] = alert
		if id == dep.Id {
			want := `{"id":"` + dep.Id + `","transactionHash":"` + dep.TransactionHash + `","blockHash":"` + dep.BlockHash +
				`","blockNumber":` + jsonNum(dep.BlockNumber) + `,"blockTimestamp":"` + time.UnixMilli(dep.BlockTimeMs).UTC().Format(time.RFC3339Nano) +
				`","chain":"ethereum","fromAddress":{"address":"` + user + `","chain":"ethereum","contract":false,"isUserAddress":false},` +
				`"toAddress":{"address":"` + exch + `","chain":"ethereum","serviceEntity":{"id":"exch","name":"EXCH","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false},` +
				`"fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH","tokenDecimals":18,"unitValue":1.5,"historicalUSD":250,"type":"external"}`
			tr, _ := json.Marshal(m.Payload["transfer"])
			if !jsonEqual(t, tr, []byte(want)) {
				t.Fatalf("transfer\n got %s\nwant %s", tr, want)
			}
		}
	}
	if got[dep.Id] != fEx || got[big.Id] != fBig || len(got) != 2 {
		t.Fatalf("deliveries %v, want %s→%s and %s→%s", got, dep.Id, fEx, big.Id, fBig)
	}

	// Unsubscribed: the entity filter delivers no more; the other one still does.
	id := c.send("unsubscribe", map[string]any{"filterId": fEx})
	if m := c.next(); m.Type != "ack" || m.Payload["messageId"] != id {
		t.Fatalf("unsubscribe: %s", m.raw)
	}
	dep2, big2 := transferMsg(user, exch, 300), transferMsg(user, other, 40_000_000)
	w.publish(dep2, big2)
	if id, alert, _ := c.transfer(); id != big2.Id || alert != fBig {
		t.Fatalf("after unsubscribe got %s (%s), want %s", id, alert, big2.Id)
	}
}

// TestQuotaLimited: a tier of 3 transfers an hour gets 3, then TIER_RATE_LIMITED once with the
// window and when it resets, and the connection stays open.
func TestQuotaLimited(t *testing.T) {
	clearOfHourTurn(t)
	w := newWorld(t)
	r := w.start(nil)
	id := ident("kq")
	id.Tier = "tiny"
	c := w.dial(r, id, "")
	from := addr(10)
	c.subscribe(map[string]any{"from": []string{from}})
	var ts []*eventsv1.Transfer
	for range 5 {
		ts = append(ts, transferMsg(from, addr(11), 5))
	}
	w.publish(ts...)
	for i := range 3 {
		if id, _, _ := c.transfer(); id != ts[i].Id {
			t.Fatalf("delivery %d: %s, want %s", i, id, ts[i].Id)
		}
	}
	m := c.expectError("TIER_RATE_LIMITED")
	reset, _ := m.Payload["resetIn"].(float64)
	if m.Payload["limitType"] != "hourly" || reset < 1 || reset > 3600 {
		t.Fatalf("limit error %s", m.raw)
	}
	// Still open: the next client message is answered.
	c.send("unsubscribe", map[string]any{"filterId": "x"})
	c.expectError("FILTER_NOT_FOUND")
}

// TestInternalError: a dependency failing is INTERNAL_ERROR and the connection goes on.
func TestInternalError(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = "http://127.0.0.1:1" })
	c := w.dial(r, ident("ki"), "")
	c.send("subscribe", map[string]any{"filters": map[string]any{"base": "6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"}})
	c.expectError("INTERNAL_ERROR")
	c.subscribe(map[string]any{"to": []string{addr(1)}})
}

// TestConnectionLimit: a key over its connection limit is refused before the upgrade, with a
// Retry-After.
func TestConnectionLimit(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.MaxConnsPerKey = 2 })
	w.dial(r, ident("kc"), "")
	w.dial(r, ident("kc"), "")
	_, resp, err := w.tryDial(r, ident("kc"), "")
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection: %v %v", err, resp)
	}
	if got := resp.Header.Get("Retry-After"); got != "5" {
		t.Fatalf("third connection's Retry-After %q, want 5", got)
	}
	w.dial(r, ident("other"), "")
}

// TestUsageMetered: delivered transfers are published on usage.calls.v1 as the edge meters
// stream credits.
func TestUsageMetered(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	c := w.dial(r, ident("km"), "")
	from := addr(20)
	c.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(21), 5), transferMsg(from, addr(21), 6))
	c.transfer()
	c.transfer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var credits int64
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: w.brokers, Group: "test-usage", Topic: eventsv1.TopicUsageCalls, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, b []eventbus.Message[*eventsv1.UsageCall]) error {
			for _, m := range b {
				u := m.Msg
				if u.KeyId != "km" || u.UserId != "user-km" || u.Route != "/ws/transfers" || u.Unit != "row" || u.Rows != u.Credits || m.EventID == "" {
					t.Errorf("usage event %v", u)
				}
				credits += u.Credits
			}
			if credits >= 2 {
				cancel()
			}
			return nil
		})
	_ = cons.Run(ctx)
	if credits != 2 {
		t.Fatalf("credits metered %d, want 2", credits)
	}
}

// TestSlowClientDropped: a client that does not read is dropped without holding the others
// back, and its session owes it exactly what it did not get: after a reconnect it has every
// transfer once, in order.
func TestSlowClientDropped(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.QueueSize, c.QueuePerFilter = 64, 0 })
	slow := w.dial(r, ident("ks"), "")
	fast := w.dial(r, ident("kf"), "")
	from := addr(30)
	_, sess := slow.subscribe(map[string]any{"from": []string{from}})
	fast.subscribe(map[string]any{"from": []string{from}})
	// Rounds the fast client keeps up with; the slow one's socket buffers fill, then its queue.
	var all []string
	for range 100 {
		var ts []*eventsv1.Transfer
		for range 32 {
			tr := transferMsg(from, addr(31), 1)
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
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		_, b, err := slow.c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal("the slow client was not dropped")
			}
			break
		}
		var m msg
		if json.Unmarshal(b, &m) == nil && m.Type == "transfer" {
			got = append(got, m.Payload["transfer"].(map[string]any)["id"].(string))
		}
	}
	if len(got) >= len(all) {
		t.Fatalf("the slow client got everything (%d) before being dropped", len(got))
	}
	again := w.dial(r, ident("ks"), "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer rcancel()
	for len(got) < len(all) {
		_, b, err := again.c.Read(rctx)
		if err != nil {
			t.Fatalf("after the reconnect %d of %d transfers: %v", len(got), len(all), err)
		}
		var m msg
		if json.Unmarshal(b, &m) != nil || m.Type != "transfer" {
			t.Fatalf("after the reconnect: %s", b)
		}
		got = append(got, m.Payload["transfer"].(map[string]any)["id"].(string))
	}
	for i := range all {
		if got[i] != all[i] {
			t.Fatalf("delivery %d is %s, want %s (exactly once, in order)", i, got[i], all[i])
		}
	}
}

func jsonNum(v uint64) string { b, _ := json.Marshal(v); return string(b) }

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
