package streamfanout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
)

type answer struct {
	status int
	body   string
	header http.Header
}

func (w *world) call(r *replica, id httpx.Identity, method, path, body string) answer {
	w.t.Helper()
	req, _ := http.NewRequest(method, r.url+path, bytes.NewBufferString(body))
	w.sign(req.Header, id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), resp.Header}
}

func (a answer) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(a.body), v); err != nil {
		t.Fatalf("%d %s: %v", a.status, a.body, err)
	}
}

func expect(t *testing.T, got answer, status int, body string) {
	t.Helper()
	if got.status != status || !jsonEqual(t, []byte(got.body), []byte(body)) {
		t.Fatalf("got %d %s\nwant %d %s", got.status, got.body, status, body)
	}
}

// TestRESTSessions: a session made over REST, connected to with ?session_id=, listed, replayed
// on a reconnect, dropped with fresh=true, deleted; invisible to other keys. Each reconnect
// comes at once after the client closed, before the replica may have noticed: the new
// connection ends the old one and waits for its save (conn.takeOver).
func TestRESTSessions(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	me, other := ident("kr1"), ident("kr2")
	var made struct {
		SessionID string `json:"sessionId"`
		CreatedAt string `json:"createdAt"`
	}
	a := w.call(r, me, "POST", "/ws/sessions", "")
	a.json(t, &made)
	expect(t, a, 200, `{"sessionId":"`+made.SessionID+`","transfersUsed":0,"createdAt":"`+made.CreatedAt+`","isActive":true}`)
	expect(t, w.call(r, me, "GET", "/ws/sessions", ""), 200,
		`[{"sessionId":"`+made.SessionID+`","transfersUsed":0,"createdAt":"`+made.CreatedAt+`","isActive":true,"isConnected":false}]`)
	expect(t, w.call(r, other, "GET", "/ws/sessions/"+made.SessionID, ""), 404, `{"error":"no such session"}`)
	expect(t, w.call(r, other, "GET", "/ws/sessions", ""), 200, `[]`)

	from := addr(70)
	c := w.dial(r, me, "?session_id="+made.SessionID)
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	if sess != made.SessionID {
		t.Fatalf("subscribe went to session %s, not %s", sess, made.SessionID)
	}
	expect(t, w.call(r, me, "GET", "/ws/sessions/"+sess, ""), 200,
		`{"sessionId":"`+sess+`","transfersUsed":0,"createdAt":"`+made.CreatedAt+`","isActive":true,"isConnected":true}`)
	expect(t, w.call(r, me, "GET", "/ws/active_connections", ""), 200, `{"activeConnections":1}`)
	w.publish(transferMsg(from, addr(71), 1))
	c.transfer()
	_ = c.c.CloseNow()

	// Away: two matches, replayed on connecting again, with no message sent.
	away := []string{}
	for range 2 {
		tr := transferMsg(from, addr(71), 2)
		away = append(away, tr.Id)
		w.publish(tr)
	}
	c2 := w.dial(r, me, "?session_id="+sess)
	for _, want := range away {
		if id, alert, _ := c2.transfer(); id != want || alert != fid {
			t.Fatalf("replayed %s (%s), want %s (%s)", id, alert, want, fid)
		}
	}
	_ = c2.c.CloseNow()

	// fresh=true drops what was owed. The connection binds to its session after the handshake
	// and before it reads a message, and a fresh session is owed nothing published before it is
	// bound: the answer to a message says it is, so the sentinel is published after.
	w.publish(transferMsg(from, addr(71), 3))
	c3 := w.dial(r, me, "?session_id="+sess+"&fresh=true")
	id := c3.send("reconnect", map[string]any{"sessionId": sess})
	if m := c3.next(); m.Type != "ack" || m.Payload["messageId"] != id {
		t.Fatalf("a message on a fresh connection: %s, want its ack", m.raw)
	}
	sentinel(t, w, c3, from)

	var info map[string]any
	a = w.call(r, me, "GET", "/ws/session-info", "")
	a.json(t, &info)
	if info["creditPerTransfer"] != 1.0 || info["creditPerSession"] != 0.0 || info["nextRenewalDate"] == nil {
		t.Fatalf("session-info %s", a.body)
	}
	expect(t, w.call(r, other, "DELETE", "/ws/sessions/"+sess, ""), 404, `{"error":"no such session"}`)
	expect(t, w.call(r, me, "DELETE", "/ws/sessions/"+sess, ""), 200, `{"message":"session deleted"}`)
	expect(t, w.call(r, me, "GET", "/ws/sessions/"+sess, ""), 404, `{"error":"no such session"}`)
	_, resp, err := w.tryDial(r, me, "?session_id="+sess)
	if err == nil || resp.StatusCode != 404 {
		t.Fatalf("connect to a deleted session: %v %v", err, resp)
	}
	expect(t, w.call(r, me, "GET", "/ws/transfers?fresh=maybe", ""), 400, `{"error":"fresh: must be true or false"}`)
}

// TestV2Streams: a stream with its filter fixed at creation delivers without any message,
// replays what matched while away on a reconnect, and is listed and deleted over REST.
func TestV2Streams(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	me := ident("kv1")
	from := addr(80)
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", `{"chains":["mars"],"from":["`+from+`"]}`), 400, `{"error":"chains: \"mars\" is not a known chain"}`)
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", `{"chains":["ethereum"]}`), 400,
		`{"error":"filters: give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least 10000000"}`)
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", `{"colour":"red"}`), 400,
		`{"error":"colour: unknown field; a filter has from, to, base, flow, counterparties, tokens, chains, usdGte, usdLte, valueGte, valueLte"}`)
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", `[]`), 400, `{"error":"filters: want a JSON object (a TransferFilter), not an array"}`)
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", `{"from":["`+from+`"],"usdGte":true}`), 400,
		`{"error":"usdGte: want a number or a decimal string, not a boolean"}`)
	var made struct {
		StreamID  string `json:"streamId"`
		ID        int64  `json:"id"`
		CreatedAt string `json:"createdAt"`
	}
	a := w.call(r, me, "POST", "/ws/v2/streams", `{"from":["`+from+`"],"usdGte":"1","flow":"all"}`)
	a.json(t, &made)
	expect(t, a, 200, `{"streamId":"`+made.StreamID+`","id":1,"createdAt":"`+made.CreatedAt+`"}`)
	// Each key numbers its own streams: another key's first is 1 too, its second 2 (a counter
	// shared by every key would tell a caller how many streams the others make).
	other := ident("kv2")
	for want := 1; want <= 2; want++ {
		var o struct {
			ID int64 `json:"id"`
		}
		w.call(r, other, "POST", "/ws/v2/streams", `{"from":["`+from+`"]}`).json(t, &o)
		if o.ID != int64(want) {
			t.Fatalf("another key's stream %d has id %d", want, o.ID)
		}
	}
	// Listed with every StreamV2Response field; lastActive null until a connection serves it.
	expect(t, w.call(r, me, "GET", "/ws/v2/streams", ""), 200,
		`[{"streamId":"`+made.StreamID+`","id":1,"createdAt":"`+made.CreatedAt+`","lastActive":null,"transfersUsed":0,"isConnected":false}]`)

	c := w.v2dial(r, me, made.StreamID)
	// The filter is fixed: messages changing it are refused, the stream goes on.
	c.send("subscribe", map[string]any{"filters": map[string]any{"to": []string{"x"}}})
	c.expectError("INVALID_PAYLOAD")
	tr := transferMsg(from, addr(81), 5)
	w.publish(tr)
	if id, alert, _ := c.transfer(); id != tr.Id || alert != made.StreamID {
		t.Fatalf("v2 delivery %s (%s)", id, alert)
	}
	_ = c.c.CloseNow()
	var away []string
	for range 3 {
		tr := transferMsg(from, addr(81), 6)
		away = append(away, tr.Id)
		w.publish(tr)
	}
	c2 := w.v2dial(r, me, made.StreamID)
	for _, want := range away {
		if id, _, _ := c2.transfer(); id != want {
			t.Fatalf("v2 replay %s, want %s", id, want)
		}
	}
	// Connected, lastActive is when a connection last claimed or saved it (at the latest this
	// connect) and transfersUsed what the saves have counted so far (the first connection's one
	// at least); the rest of the body is fixed.
	var list []struct {
		LastActive    time.Time `json:"lastActive"`
		TransfersUsed int64     `json:"transfersUsed"`
	}
	a = w.call(r, me, "GET", "/ws/v2/streams", "")
	a.json(t, &list)
	created, _ := time.Parse(time.RFC3339Nano, made.CreatedAt)
	if len(list) != 1 || list[0].LastActive.Before(created) || list[0].TransfersUsed < 1 || list[0].TransfersUsed > 4 {
		t.Fatalf("streams %s", a.body)
	}
	expect(t, a, 200, fmt.Sprintf(`[{"streamId":"%s","id":1,"createdAt":"%s","lastActive":"%s","transfersUsed":%d,"isConnected":true}]`,
		made.StreamID, made.CreatedAt, list[0].LastActive.Format(time.RFC3339Nano), list[0].TransfersUsed))
	// A stream is not a session, and the other way round.
	expect(t, w.call(r, me, "GET", "/ws/sessions", ""), 200, `[]`)
	expect(t, w.call(r, me, "DELETE", "/ws/sessions/"+made.StreamID, ""), 404, `{"error":"no such session"}`)
	expect(t, w.call(r, me, "DELETE", "/ws/v2/streams/"+made.StreamID, ""), 200, `{"message":"stream deleted"}`)
	expect(t, w.call(r, me, "GET", "/ws/v2/transfers", ""), 400, `{"error":"stream_id: required, the streamId from POST /ws/v2/streams"}`)
}

func (w *world) v2dial(r *replica, id httpx.Identity, stream string) *client {
	w.t.Helper()
	h := http.Header{}
	w.sign(h, id)
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	c, resp, err := dialWS(ctx, r.url+"/ws/v2/transfers?stream_id="+stream, h)
	if err != nil {
		w.t.Fatalf("v2 dial: %v %v", err, resp)
	}
	w.t.Cleanup(func() { _ = c.CloseNow() })
	// The stream binds to the connection after the handshake; a transfer published before that
	// is not the stream's (nothing matched it while away), so wait until the stream is listed
	// connected (its claim; its filters attach right after, long before a publish is read).
	for deadline := time.Now().Add(10 * time.Second); !w.streamConnected(r, id, stream); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			w.t.Fatalf("v2 stream %s not connected after 10s", stream)
		}
	}
	return &client{t: w.t, c: c}
}

// streamConnected reports whether GET /ws/v2/streams lists stream as connected.
func (w *world) streamConnected(r *replica, id httpx.Identity, stream string) bool {
	var list []struct {
		StreamID    string `json:"streamId"`
		IsConnected bool   `json:"isConnected"`
	}
	w.call(r, id, "GET", "/ws/v2/streams", "").json(w.t, &list)
	for _, s := range list {
		if s.StreamID == stream && s.IsConnected {
			return true
		}
	}
	return false
}

// TestSessionCap: a key holds at most STREAM_MAX_SESSIONS_PER_KEY live sessions and v2 streams
// together; over it POST /ws/sessions and POST /ws/v2/streams are 429 naming the limit, even when
// sent at once, and deleting one makes room. Other keys are not affected.
func TestSessionCap(t *testing.T) {
	w := newWorld(t)
	w.attribute(addr(99), "binance", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.MaxSessionsPerKey = 3 })
	me, other := ident("kc1"), ident("kc2")
	stream := `{"to":["binance"]}`
	over := `{"error":"too many sessions and v2 streams for this key (limit 3 live at once); delete one or let one expire"}`
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(r, me, "POST", "/ws/sessions", "").json(t, &made)
	if a := w.call(r, me, "POST", "/ws/v2/streams", stream); a.status != 200 {
		t.Fatalf("stream: %d %s", a.status, a.body)
	}
	if a := w.call(r, me, "POST", "/ws/sessions", ""); a.status != 200 {
		t.Fatalf("session: %d %s", a.status, a.body)
	}
	capped := w.call(r, me, "POST", "/ws/sessions", "")
	expect(t, capped, 429, over)
	if got := capped.header.Get("Retry-After"); got != "300" { // the session window (5m)
		t.Fatalf("Retry-After %q, want 300", got)
	}
	expect(t, w.call(r, me, "POST", "/ws/v2/streams", stream), 429, over)
	if a := w.call(r, other, "POST", "/ws/v2/streams", stream); a.status != 200 {
		t.Fatalf("another key's stream: %d %s", a.status, a.body)
	}
	expect(t, w.call(r, me, "DELETE", "/ws/sessions/"+made.SessionID, ""), 200, `{"message":"session deleted"}`)

	// Ten at once for the one free place: exactly one is made (the store counts and stores in
	// one step), the others refused.
	codes := make(chan int, 10)
	for range 10 {
		go func() {
			req, _ := http.NewRequest("POST", r.url+"/ws/v2/streams", bytes.NewBufferString(stream))
			w.sign(req.Header, me)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	made200 := 0
	for range 10 {
		switch c := <-codes; c {
		case 200:
			made200++
		case 429:
		default:
			t.Errorf("concurrent create answered %d", c)
		}
	}
	var streams []map[string]any
	w.call(r, me, "GET", "/ws/v2/streams", "").json(t, &streams)
	var sessions []map[string]any
	w.call(r, me, "GET", "/ws/sessions", "").json(t, &sessions)
	if made200 != 1 || len(streams)+len(sessions) != 3 {
		t.Fatalf("%d of 10 concurrent creates made; the key holds %d streams and %d sessions (cap 3)", made200, len(streams), len(sessions))
	}
}

// TestReconnectTakesOverAtOnce: connecting to a session another connection of this replica
// still serves (its client gone, the replica not yet aware) ends that connection with 1008 at
// once, not at the next checkpoint (an hour here), and resumes where it was served up to: the
// transfer it was sent is not sent again, the next one is delivered.
func TestReconnectTakesOverAtOnce(t *testing.T) {
	w := newWorld(t)
	r := w.start(func(c *streamfanout.Config) { c.Checkpoint = time.Hour })
	me := ident("kt1")
	var made struct {
		SessionID string `json:"sessionId"`
	}
	w.call(r, me, "POST", "/ws/sessions", "").json(t, &made)
	from := addr(75)
	c := w.dial(r, me, "?session_id="+made.SessionID)
	c.subscribe(map[string]any{"from": []string{from}})
	first := transferMsg(from, addr(76), 1)
	w.publish(first)
	if id, _, _ := c.transfer(); id != first.Id {
		t.Fatalf("delivered %s, want %s", id, first.Id)
	}

	c2 := w.dial(r, me, "?session_id="+made.SessionID)
	id := c2.send("reconnect", map[string]any{"sessionId": made.SessionID})
	if m := c2.next(); m.Type != "ack" || m.Payload["messageId"] != id {
		t.Fatalf("a message on the new connection: %s, want its ack", m.raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, b, err := c.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the replaced connection read %q (%v), want it closed with 1008", b, err)
	}
	sentinel(t, w, c2, from)
}

// TestRefusedReconnectLeavesOwnerAlone: a reconnect the claim would refuse (a v1 connection
// naming a v2 stream served by another connection of the key) is answered NO_SESSION and
// leaves that connection serving the stream; it was closed first, leaving the stream unowned.
func TestRefusedReconnectLeavesOwnerAlone(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	me := ident("kt2")
	from := addr(77)
	var made struct {
		StreamID string `json:"streamId"`
	}
	w.call(r, me, "POST", "/ws/v2/streams", `{"from":["`+from+`"]}`).json(t, &made)
	v2 := w.v2dial(r, me, made.StreamID)
	first := transferMsg(from, addr(78), 1)
	w.publish(first) // delivered once the stream is bound to the connection
	if id, _, _ := v2.transfer(); id != first.Id {
		t.Fatalf("delivered %s, want %s", id, first.Id)
	}

	c := w.dial(r, me, "")
	c.send("reconnect", map[string]any{"sessionId": made.StreamID})
	c.expectError("NO_SESSION")
	sentinel(t, w, v2, from)
}
