package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
)

// additionsLabels is user-labels where user-owner has added addresses to operator entities exch
// and newco (only_add; the same addresses, set by the test); nobody has labels or user
// entities, and nobody else additions.
type additionsLabels struct {
	mu    sync.Mutex
	added []string
	down  bool // every call fails with a 500
	url   string
}

func newAdditionsLabels(t *testing.T) *additionsLabels {
	l := &additionsLabels{}
	signer := httpx.NewSigner(secret)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id, err := signer.Verify(r.Header, timeNow())
		if err != nil {
			http.Error(rw, "no identity", 401)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		l.mu.Lock()
		down := l.down
		l.mu.Unlock()
		switch {
		case down:
			http.Error(rw, `{"error":"internal"}`, 500)
		case r.URL.Path == "/user/labels" || r.URL.Path == "/user/entities":
			_, _ = rw.Write([]byte(`[]`))
		case r.URL.Path == "/internal/additions" && id.UserID == "user-owner":
			l.mu.Lock()
			added := map[string][]string{"evm": slices.Clone(l.added)}
			l.mu.Unlock()
			writeAdditions(rw, r, map[string]map[string][]string{"exch": added, "newco": added})
		case r.URL.Path == "/internal/additions":
			writeAdditions(rw, r, nil)
		default:
			http.Error(rw, `{"error":"not found"}`, 404)
		}
	}))
	t.Cleanup(srv.Close)
	l.url = srv.URL
	return l
}

// set makes addrs user-owner's additions to exch.
func (l *additionsLabels) set(addrs ...string) {
	l.mu.Lock()
	l.added = append([]string{}, addrs...)
	l.mu.Unlock()
}

// announce publishes what user-labels publishes after an only_add on exch by user.
func (w *world) announce(user string, addrs ...string) {
	w.t.Helper()
	w.announceOp(eventsv1.UserChange_OP_UPSERT, user, addrs...)
}

// announceOp publishes a change of user's additions to exch with op: OP_DELETE is what
// user-labels publishes when user removes them (DELETE /user/entities/exch), naming addrs.
func (w *world) announceOp(op eventsv1.UserChange_Op, user string, addrs ...string) {
	w.t.Helper()
	ch := &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_ENTITY_ADDITIONS, Op: op, EntityId: "exch"}
	for _, a := range addrs {
		ch.Addresses = append(ch.Addresses, &eventsv1.AddressRef{ChainType: "evm", Address: a})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicUserChanges, Key: user, Msg: ch}); err != nil {
		w.t.Fatal(err)
	}
}

// transferJSON is the Transfer a subscriber is sent for tr; attributed names the addresses the
// read model holds as exch's.
func transferJSON(tr *eventsv1.Transfer, attributed ...string) string {
	side := func(a string) string {
		ent := ""
		if slices.Contains(attributed, a) {
			ent = `"serviceEntity":{"id":"exch","name":"EXCH","note":"","type":"cex","service":null},`
		}
		return `{"address":"` + a + `","chain":"ethereum",` + ent + `"contract":false,"isUserAddress":false}`
	}
	return `{"id":"` + tr.Id + `","transactionHash":"` + tr.TransactionHash + `","blockHash":"` + tr.BlockHash +
		`","blockNumber":` + jsonNum(tr.BlockNumber) + `,"blockTimestamp":"` + time.UnixMilli(tr.BlockTimeMs).UTC().Format(time.RFC3339Nano) +
		`","chain":"ethereum","fromAddress":` + side(tr.From) + `,"toAddress":` + side(tr.To) +
		`,"fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH","tokenDecimals":18,"unitValue":1.5,` +
		fmt.Sprintf(`"historicalUSD":%v,"type":"external"}`, tr.GetHistoricalUsd())
}

// sent is one transfer message: tr for the filter alertId.
type sent struct {
	alertID string
	tr      *eventsv1.Transfer
}

// expectDeliveries reads len(want) messages, which must be want's whole transfer messages, in
// the order of their transfers (the filters one transfer matched in any order); attributed as
// for transferJSON.
func (c *client) expectDeliveries(attributed []string, want ...sent) {
	c.t.Helper()
	var got, exp []string
	canon := func(b []byte) string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			c.t.Fatalf("not JSON: %s", b)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	flush := func() {
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			c.t.Fatalf("deliveries\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(exp, "\n     "))
		}
		got, exp = nil, nil
	}
	for i, d := range want {
		if i > 0 && want[i-1].tr != d.tr {
			flush()
		}
		got = append(got, canon(c.next().raw))
		exp = append(exp, canon([]byte(`{"type":"transfer","payload":{"alertId":"`+d.alertID+`","transfer":`+transferJSON(d.tr, attributed...)+`}}`)))
	}
	flush()
}

// subscribeAll subscribes filters in order and returns their filter ids and the session.
func (c *client) subscribeAll(filters ...map[string]any) ([]string, string) {
	c.t.Helper()
	var ids []string
	var sess string
	for _, f := range filters {
		id, s := c.subscribe(f)
		ids, sess = append(ids, id), s
	}
	return ids, sess
}

// TestOperatorAdditionsMatchTheirOwner: a filter naming an operator entity (base, from, to, an
// exclusion) matches the caller's own additions to it (PUT /user/entities/only_add/<entity>) as
// addresses of the entity, as /transfers?base=<entity> does for that caller, and never another
// caller's: another caller's identical filters match only what the read model attributes. The
// additions are those user-labels holds when the filter is subscribed. An operator entity the
// read model does not hold is accepted from a caller who has added addresses to it, as
// /transfers accepts it, and refused to another caller.
func TestOperatorAdditionsMatchTheirOwner(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	exch, added, other := addr(80), addr(81), addr(82)
	ul.set("0x" + strings.ToUpper(added[2:])) // matched in its canonical form
	w.attribute(exch, "exch", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	filters := []map[string]any{
		{"base": []string{"exch"}},
		{"from": []string{"exch"}},
		{"to": []string{"exch"}},
		{"from": []string{other}, "to": []string{"!exch"}},
	}
	owner := w.dial(r, ident("owner"), "")
	of, _ := owner.subscribeAll(filters...)
	stranger := w.dial(r, ident("stranger"), "")
	sf, _ := stranger.subscribeAll(filters...)
	newco, _ := owner.subscribe(map[string]any{"to": []string{"newco"}})
	stranger.sendRaw(`{"type":"subscribe","id":"n1","payload":{"filters":{"to":["newco"]}}}`)
	want := `{"type":"error","payload":{"code":"INVALID_FILTER","message":"to: unknown entity \"newco\"","messageId":"n1"}}`
	if m := stranger.next(); !jsonEqual(t, m.raw, []byte(want)) {
		t.Fatalf("another caller's subscribe to newco: got %s\nwant %s", m.raw, want)
	}
	if a := w.call(r, ident("stranger"), "POST", "/ws/v2/streams", `{"to":["newco"]}`); a.status != 400 || !jsonEqual(t, []byte(a.body), []byte(`{"error":"to: unknown entity \"newco\""}`)) {
		t.Fatalf("another caller's v2 stream on newco: %d %s", a.status, a.body)
	}

	out, in, marker := transferMsg(added, other, 5), transferMsg(other, added, 6), transferMsg(exch, other, 7)
	w.publish(out, in, marker)
	att := []string{exch}
	owner.expectDeliveries(att,
		sent{of[0], out}, sent{of[1], out},
		sent{of[0], in}, sent{of[2], in}, sent{newco, in},
		sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att,
		sent{sf[3], in},
		sent{sf[0], marker}, sent{sf[1], marker})
}

// probeRound publishes a transfer from → to and a marker from exch, and reports whether c was
// sent the probe's transfer before the marker's deliveries to its filters (each of them
// matches the marker); others, subscribed to the same filters, must be sent only the marker.
func (w *world) probeRound(c *client, from, to, exch string, filters int, others ...*client) bool {
	w.t.Helper()
	probe, marker := transferMsg(from, to, 1), transferMsg(exch, to, 2)
	w.publish(probe, marker)
	read := func(c *client) bool {
		seen := false
		for n := 0; n < filters; {
			id, _, m := c.transfer()
			switch id {
			case probe.Id:
				seen = true
			case marker.Id:
				n++
			default:
				w.t.Fatalf("unexpected delivery %s", m.raw)
			}
		}
		return seen
	}
	seen := read(c)
	for _, o := range others {
		if read(o) {
			w.t.Fatal("another caller's filter matched the owner's additions")
		}
	}
	return seen
}

// untilProbe runs probe rounds until c is sent the probe (matched true) or is no longer
// (false).
func (w *world) untilProbe(matched bool, c *client, from, to, exch string, filters int, others ...*client) {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.probeRound(c, from, to, exch, filters, others...) != matched {
		if time.Now().After(deadline) {
			w.t.Fatalf("the owner's filters did not follow its additions (matching them: want %v)", matched)
		}
	}
}

// TestAdditionsEditedLive: once user-labels announces a change of the caller's additions to an
// operator entity on user.changes.v1, the caller's live filters naming it match the addresses
// it holds then: an address added is delivered, one no longer held (a test's user-labels can
// drop one) is not; another caller's identical filters never match them.
func TestAdditionsEditedLive(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	exch, added, other := addr(83), addr(84), addr(85)
	w.attribute(exch, "exch", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	filters := []map[string]any{{"base": []string{"exch"}}, {"from": []string{"exch"}}}
	owner := w.dial(r, ident("owner"), "")
	of, _ := owner.subscribeAll(filters...)
	stranger := w.dial(r, ident("stranger"), "")
	sf, _ := stranger.subscribeAll(filters...)
	att := []string{exch}

	out, marker := transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	owner.expectDeliveries(att, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})

	ul.set(added)
	w.announce("user-owner", added)
	w.untilProbe(true, owner, added, other, exch, len(filters), stranger)
	out, in, marker := transferMsg(added, other, 5), transferMsg(other, added, 6), transferMsg(exch, other, 7)
	w.publish(out, in, marker)
	owner.expectDeliveries(att, sent{of[0], out}, sent{of[1], out}, sent{of[0], in}, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})

	ul.set()
	w.announce("user-owner")
	w.untilProbe(false, owner, added, other, exch, len(filters), stranger)
	out, marker = transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	owner.expectDeliveries(att, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})
}

// TestAdditionsRemovedLive: once user-labels announces that the caller removed their additions
// to an operator entity (KIND_ENTITY_ADDITIONS, OP_DELETE, naming the removed addresses), the
// caller's live filters naming it stop matching them, and a filter the caller builds afterwards
// (the replica's kept additions dropped) does not match them either.
func TestAdditionsRemovedLive(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	exch, added, other := addr(86), addr(87), addr(88)
	w.attribute(exch, "exch", "cex", "")
	ul.set(added)
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	filters := []map[string]any{{"base": []string{"exch"}}, {"from": []string{"exch"}}}
	owner := w.dial(r, ident("owner"), "")
	of, _ := owner.subscribeAll(filters...)
	stranger := w.dial(r, ident("stranger"), "")
	sf, _ := stranger.subscribeAll(filters...)
	att := []string{exch}

	out, marker := transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	owner.expectDeliveries(att, sent{of[0], out}, sent{of[1], out}, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})

	ul.set()
	w.announceOp(eventsv1.UserChange_OP_DELETE, "user-owner", added)
	w.untilProbe(false, owner, added, other, exch, len(filters), stranger)
	out, in, marker := transferMsg(added, other, 5), transferMsg(other, added, 6), transferMsg(exch, other, 7)
	w.publish(out, in, marker)
	owner.expectDeliveries(att, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})

	again := w.dial(r, ident("owner"), "")
	af, _ := again.subscribeAll(filters...)
	// New transfers: the same ones published again would be copies, streamed to nobody.
	out, marker = transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	again.expectDeliveries(att, sent{af[0], marker}, sent{af[1], marker})
	owner.expectDeliveries(att, sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})
}

// away closes c and waits until its session sess is saved as not connected, so what is
// published next is matched for it only by its reconnect.
func (w *world) away(r *replica, c *client, id httpx.Identity, sess string) {
	w.t.Helper()
	_ = c.c.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := w.call(r, id, "GET", "/ws/sessions/"+sess, "")
		var v struct {
			IsConnected *bool `json:"isConnected"`
		}
		if a.status == 200 && json.Unmarshal([]byte(a.body), &v) == nil && v.IsConnected != nil && !*v.IsConnected {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("session %s still connected: %d %s", sess, a.status, a.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// back reconnects to session sess and reads the reconnect's ack.
func (w *world) back(r *replica, id httpx.Identity, sess string) *client {
	w.t.Helper()
	c := w.dial(r, id, "")
	mid := c.send("reconnect", map[string]any{"sessionId": sess})
	if m := c.next(); m.Type != "ack" || m.Payload["messageId"] != mid || m.Payload["message"] != "reconnected" {
		w.t.Fatalf("reconnect: %s", m.raw)
	}
	return c
}

// TestAdditionsOnReplay: what a session missed while away is matched at its reconnect with the
// caller's additions as user-labels holds them then: an address added while away is replayed
// to its owner, not to another caller; once no longer held it is not replayed.
func TestAdditionsOnReplay(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	exch, added, other := addr(86), addr(87), addr(88)
	w.attribute(exch, "exch", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	filters := []map[string]any{{"base": []string{"exch"}}, {"from": []string{"exch"}}}
	me, them := ident("owner"), ident("stranger")
	owner := w.dial(r, me, "")
	of, osess := owner.subscribeAll(filters...)
	stranger := w.dial(r, them, "")
	sf, ssess := stranger.subscribeAll(filters...)
	att := []string{exch}

	w.away(r, owner, me, osess)
	w.away(r, stranger, them, ssess)
	ul.set(added)
	w.announce("user-owner", added)
	out, marker := transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	owner = w.back(r, me, osess)
	owner.expectDeliveries(att, sent{of[0], out}, sent{of[1], out}, sent{of[0], marker}, sent{of[1], marker})
	stranger = w.back(r, them, ssess)
	stranger.expectDeliveries(att, sent{sf[0], marker}, sent{sf[1], marker})

	w.away(r, owner, me, osess)
	ul.set()
	w.announce("user-owner")
	out, marker = transferMsg(added, other, 5), transferMsg(exch, other, 7)
	w.publish(out, marker)
	owner = w.back(r, me, osess)
	owner.expectDeliveries(att, sent{of[0], marker}, sent{of[1], marker})
}

// A v2 stream naming an operator entity needs the caller's additions: with user-labels failing
// it is refused with a 503 naming user labels (not the session store), and, once it answers
// again, created after the replica's backoff from the failure (refused the same meanwhile).
func TestStreamWaitsForUserLabels(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	w.attribute(addr(80), "exch", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	ul.mu.Lock()
	ul.down = true
	ul.mu.Unlock()
	if a := w.call(r, ident("owner"), "POST", "/ws/v2/streams", `{"base":["exch"]}`); a.status != 503 ||
		!jsonEqual(t, []byte(a.body), []byte(`{"error":"user labels are unavailable; retry later"}`)) {
		t.Fatalf("v2 stream with user-labels down: %d %s", a.status, a.body)
	}
	ul.mu.Lock()
	ul.down = false
	ul.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := w.call(r, ident("owner"), "POST", "/ws/v2/streams", `{"base":["exch"]}`)
		if a.status == 200 {
			break
		}
		if a.status != 503 || time.Now().After(deadline) {
			t.Fatalf("v2 stream with user-labels back: %d %s", a.status, a.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
