package streamfanout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
)

// TestSubscribeSessionCap: a subscribe that would make a new session is refused SESSION_LIMIT
// once the key has STREAM_MAX_SESSIONS_PER_KEY live sessions and v2 streams (those made by
// subscribes count), and the connection stays open; a subscribe on a connection that serves a
// session, and a reconnect to one of the key's sessions, are not refused. Ten connections
// subscribing at once for three places never leave the key over its cap.
func TestSubscribeSessionCap(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.MaxSessionsPerKey = 3 })
	me := ident("kcap1")
	from := addr(81)
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(r, me, "POST", "/ws/sessions", "").json(t, &made)
	a := w.dial(r, me, "")
	_, aSess := a.subscribe(map[string]any{"from": []string{from}})
	_ = a.c.Close(websocket.StatusNormalClosure, "")
	b := w.dial(r, me, "")
	b.subscribe(map[string]any{"from": []string{from}})

	c := w.dial(r, me, "")
	over := `{"type":"error","payload":{"code":"SESSION_LIMIT","messageId":"%s","message":"too many sessions and v2 streams for this key (limit 3 live at once): ` +
		`a subscribe on a connection without a session makes one; delete one, let one expire or reconnect to one"}}`
	for range 2 { // refused, and the connection stays open for the next message
		id := c.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{from}}})
		if m := c.next(); !jsonEqual(t, m.raw, fmt.Appendf(nil, over, id)) {
			t.Fatalf("subscribe over the cap: got %s\nwant %s", m.raw, fmt.Sprintf(over, id))
		}
	}
	b.subscribe(map[string]any{"to": []string{from}}) // its session exists: not a new one
	id := c.send("reconnect", map[string]any{"sessionId": aSess})
	if m := c.next(); m.Type != "ack" || m.Payload["messageId"] != id || m.Payload["success"] != true {
		t.Fatalf("reconnect at the cap: got %s, want its ack", m.raw)
	}
	c.subscribe(map[string]any{"to": []string{from}})
	var list []map[string]any
	w.call(r, me, "GET", "/ws/sessions", "").json(t, &list)
	if len(list) != 3 {
		t.Fatalf("the key lists %d sessions, want 3: %v", len(list), list)
	}
	expect(t, w.call(r, me, "DELETE", "/ws/sessions/"+made.SessionID, ""), 200, `{"message":"session deleted"}`)
	w.dial(r, me, "").subscribe(map[string]any{"from": []string{from}})

	// Ten connections of another key subscribe at once for its three places.
	other := ident("kcap2")
	clients := make([]*client, 10)
	for i := range clients {
		clients[i] = w.dial(r, other, "")
	}
	answers := make([]msg, len(clients))
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			b, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"filters": map[string]any{"from": []string{from}}}})
			if err := cl.c.Write(ctx, websocket.MessageText, b); err != nil {
				return
			}
			if _, got, err := cl.c.Read(ctx); err == nil {
				answers[i].raw = got
				_ = json.Unmarshal(got, &answers[i])
			}
		}()
	}
	wg.Wait()
	acked := 0
	for _, m := range answers {
		switch {
		case m.Type == "ack" && m.Payload["success"] == true:
			acked++
		case jsonEqual(t, m.raw, fmt.Appendf(nil, over, "1")):
		default:
			t.Errorf("a concurrent subscribe was answered %s", m.raw)
		}
	}
	list = nil
	w.call(r, other, "GET", "/ws/sessions", "").json(t, &list)
	if acked != 3 || len(list) != 3 {
		t.Fatalf("%d of 10 concurrent subscribes acked; the key lists %d sessions (cap 3)", acked, len(list))
	}
}

// storedFilters is the length of the JSON a session's filters raws are stored in (each with a
// filter id of 32 characters, as the replica makes them).
func storedFilters(raws ...[]byte) int {
	type rec struct {
		ID  string          `json:"filterId"`
		Raw json.RawMessage `json:"filters"`
	}
	recs := make([]rec, 0, len(raws))
	for _, r := range raws {
		recs = append(recs, rec{strings.Repeat("f", 32), r})
	}
	b, _ := json.Marshal(recs)
	return len(b)
}

// TestSessionFilterBytesBound: a subscribe that would bring the JSON its session's filters are
// stored in past STREAM_MAX_SESSION_FILTER_BYTES is refused INVALID_FILTER naming the bound (a
// first one before any session is made); a smaller one still fits, and Redis holds no more.
func TestSessionFilterBytesBound(t *testing.T) {
	w := newWorld(t)
	const bound = 1500
	r := w.start(func(c *streamfanout.Config) { c.MaxSessionFilterBytes = bound })
	me := ident("kbytes")
	addrs := func(first, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = addr(first + i)
		}
		return out
	}
	filterJSON := func(as []string) []byte {
		b, _ := json.Marshal(map[string]any{"to": as})
		return b
	}
	refusal := func(id string, size int) []byte {
		return fmt.Appendf(nil, `{"type":"error","payload":{"code":"INVALID_FILTER","messageId":%q,"message":"a session's filters are stored in at most %d bytes of JSON; `+
			`with this one they would take %d: unsubscribe one or send a smaller one"}}`, id, bound, size)
	}

	big := addrs(100, 40)
	fresh := w.dial(r, me, "")
	id := fresh.send("subscribe", map[string]any{"filters": map[string]any{"to": big}})
	if m, want := fresh.next(), refusal(id, storedFilters(filterJSON(big))); !jsonEqual(t, m.raw, want) {
		t.Fatalf("a first filter over the bound: got %s\nwant %s", m.raw, want)
	}
	var list []map[string]any
	w.call(r, me, "GET", "/ws/sessions", "").json(t, &list)
	if len(list) != 0 {
		t.Fatalf("a refused first subscribe left sessions %v", list)
	}

	c := w.dial(r, me, "")
	first, second, small := addrs(200, 20), addrs(300, 20), addrs(400, 5)
	_, sess := c.subscribe(map[string]any{"to": first})
	id = c.send("subscribe", map[string]any{"filters": map[string]any{"to": second}})
	if m, want := c.next(), refusal(id, storedFilters(filterJSON(first), filterJSON(second))); !jsonEqual(t, m.raw, want) {
		t.Fatalf("a filter past the bound: got %s\nwant %s", m.raw, want)
	}
	c.subscribe(map[string]any{"to": small})
	stored := w.rdb.HGet(context.Background(), w.prefix+"s:"+sess, "filters").Val()
	if want := storedFilters(filterJSON(first), filterJSON(small)); len(stored) != want || want > bound {
		t.Fatalf("the session's filters take %d bytes in Redis, want %d (bound %d): %s", len(stored), want, bound, stored)
	}
}

// TestMessageRateLimit: a connection's client messages past its burst, with no time to earn
// another, are answered RATE_LIMITED naming the limit and not processed; as many in a row as the
// burst close it with 1008, and its session waits for a reconnect with what was subscribed. The
// limit is the connection's: another one of the key is not touched by it, and with the default
// limits a client subscribing a whole session at once (50 filters) is never refused.
func TestMessageRateLimit(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.MessageBurst, c.MessageRate = 3, 0.001 })
	me := ident("krate")
	from := addr(91)
	a := w.dial(r, me, "")
	var sess string
	for i := range 3 {
		_, sess = a.subscribe(map[string]any{"from": []string{addr(91 + i)}})
	}
	limited := `{"type":"error","payload":{"code":"RATE_LIMITED","messageId":"%s","message":"too many messages: a connection may send 0.001 a second (a burst of 3); ` +
		`this one was not processed, send it again later"}}`
	for range 2 {
		id := a.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{from}}})
		if m := a.next(); !jsonEqual(t, m.raw, fmt.Appendf(nil, limited, id)) {
			t.Fatalf("a message over the limit: got %s\nwant %s", m.raw, fmt.Sprintf(limited, id))
		}
	}
	b := w.dial(r, me, "")
	b.subscribe(map[string]any{"to": []string{from}})

	a.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{from}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, got, err := a.c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation ||
		ce.Reason != "too many messages: the client kept sending over its limit; reconnect with your sessionId" {
		t.Fatalf("the third message over the limit in a row: read %s (%v), want a close 1008", got, err)
	}

	c := w.dial(r, me, "")
	id := c.send("reconnect", map[string]any{"sessionId": sess})
	m := c.next()
	if m.Type != "ack" || m.Payload["messageId"] != id {
		t.Fatalf("reconnect: got %s", m.raw)
	}
	if fs := m.Payload["data"].(map[string]any)["filters"].([]any); len(fs) != 3 {
		t.Fatalf("the session resumed with %d filters, want the 3 subscribed before the limit: %s", len(fs), m.raw)
	}

	def := w.start(nil)
	d := w.dial(def, ident("kratedef"), "")
	for i := range 50 {
		d.subscribe(map[string]any{"from": []string{addr(500 + i)}})
	}
}

// TestMessageLimitAnswersBeforeClosing: messages sent at once past the limit get their answers
// before the close: those handled, and RATE_LIMITED for each refused before the one that closes.
func TestMessageLimitAnswersBeforeClosing(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.MessageBurst, c.MessageRate = 3, 0.001 })
	a := w.dial(r, ident("kdrain"), "")
	for range 6 { // 3 handled, 2 refused, the sixth closes
		a.send("unsubscribe", map[string]any{"filterId": "none"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var handled, limited int
	for {
		_, got, err := a.c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
				t.Fatalf("read: %v, want a close 1008", err)
			}
			break
		}
		if bytes.Contains(got, []byte(`"RATE_LIMITED"`)) {
			limited++
		} else {
			handled++
		}
	}
	if handled != 3 || limited != 2 {
		t.Fatalf("before the close: %d answers to handled messages and %d RATE_LIMITED, want 3 and 2", handled, limited)
	}
}
