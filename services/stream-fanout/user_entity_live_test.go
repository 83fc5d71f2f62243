package streamfanout_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// entityLabels is user-labels where user-owner has one user entity, ent, whose addresses the
// test sets (or deletes: then it is not found); nobody has labels, and the book lists no
// entity, so deliveries carry no user entity and compare as transferJSON renders them.
type entityLabels struct {
	mu      sync.Mutex
	addrs   []string
	deleted bool
	url     string
}

const ent = "6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"

func newEntityLabels(t *testing.T) *entityLabels {
	l := &entityLabels{}
	signer := httpx.NewSigner(secret)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id, err := signer.Verify(r.Header, timeNow())
		if err != nil {
			http.Error(rw, "no identity", 401)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		l.mu.Lock()
		defer l.mu.Unlock()
		switch {
		case r.URL.Path == "/user/labels" || r.URL.Path == "/user/entities":
			_, _ = rw.Write([]byte(`[]`))
		case r.URL.Path == "/internal/entities" && id.UserID == "user-owner" && !l.deleted:
			writeEntities(rw, r, map[string]any{ent: map[string]any{"id": ent, "name": "Desk", "note": "", "type": "user", "shareable": false,
				"addresses": map[string][]string{"evm": l.addrs}}})
		case r.URL.Path == "/internal/entities":
			writeEntities(rw, r, nil)
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

// set makes addrs the addresses of user-owner's entity ent.
func (l *entityLabels) set(addrs ...string) {
	l.mu.Lock()
	l.addrs = append([]string{}, addrs...)
	l.mu.Unlock()
}

func (l *entityLabels) delete() {
	l.mu.Lock()
	l.deleted = true
	l.mu.Unlock()
}

// announceEntity publishes what user-labels publishes after a change of user's entity ent.
func (w *world) announceEntity(user string, op eventsv1.UserChange_Op) {
	w.t.Helper()
	ch := &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_ENTITY, Op: op, EntityId: ent}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicUserChanges, Key: user, Msg: ch}); err != nil {
		w.t.Fatal(err)
	}
}

// untilMatched publishes a transfer from probe and one from marker (which the marker filter
// matches) until c is sent the probe's before the marker's (matched true), or no longer is
// (false).
func (w *world) untilMatched(matched bool, c *client, probe, marker, to string) {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, m := transferMsg(probe, to, 1), transferMsg(marker, to, 2)
		w.publish(p, m)
		seen := false
		for {
			id, _, msg := c.transfer()
			if id == m.Id {
				break
			}
			if id != p.Id {
				w.t.Fatalf("unexpected delivery %s", msg.raw)
			}
			seen = true
		}
		if seen == matched {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the filter on the user entity did not follow its edit (matching %s: want %v)", probe, matched)
		}
	}
}

// TestUserEntityEditedLive: once user-labels announces a change of a caller's user entity on
// user.changes.v1 (an address added, one removed, the entity deleted), the caller's live filter
// naming it matches the addresses the entity holds then, without a resubscribe.
func TestUserEntityEditedLive(t *testing.T) {
	w := newWorld(t)
	ul := newEntityLabels(t)
	a, b, marker, other := addr(95), addr(96), addr(97), addr(98)
	ul.set(a)
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	owner := w.dial(r, ident("owner"), "")
	fids, sess := owner.subscribeAll(map[string]any{"from": []string{ent}}, map[string]any{"from": []string{marker}})

	in, notYet, mk := transferMsg(a, other, 5), transferMsg(b, other, 6), transferMsg(marker, other, 7)
	w.publish(in, notYet, mk)
	owner.expectDeliveries(nil, sent{fids[0], in}, sent{fids[1], mk})

	ul.set(a, b)
	w.announceEntity("user-owner", eventsv1.UserChange_OP_UPSERT)
	w.untilMatched(true, owner, b, marker, other)
	fromA, fromB, mk := transferMsg(a, other, 5), transferMsg(b, other, 6), transferMsg(marker, other, 7)
	w.publish(fromA, fromB, mk)
	owner.expectDeliveries(nil, sent{fids[0], fromA}, sent{fids[0], fromB}, sent{fids[1], mk})

	ul.set(b)
	w.announceEntity("user-owner", eventsv1.UserChange_OP_UPSERT)
	w.untilMatched(false, owner, a, marker, other)
	fromA, fromB, mk = transferMsg(a, other, 5), transferMsg(b, other, 6), transferMsg(marker, other, 7)
	w.publish(fromA, fromB, mk)
	owner.expectDeliveries(nil, sent{fids[0], fromB}, sent{fids[1], mk})

	ul.delete()
	w.announceEntity("user-owner", eventsv1.UserChange_OP_DELETE)
	w.untilMatched(false, owner, b, marker, other)
	fromB, mk = transferMsg(b, other, 6), transferMsg(marker, other, 7)
	w.publish(fromB, mk)
	owner.expectDeliveries(nil, sent{fids[1], mk})

	// The session resumes with the deleted entity's filter matching nothing, and is owed what
	// its other filter matched while away (a refusal would lose it).
	w.away(r, owner, ident("owner"), sess)
	fromB, mk = transferMsg(b, other, 6), transferMsg(marker, other, 7)
	w.publish(fromB, mk)
	back := w.back(r, ident("owner"), sess)
	back.expectDeliveries(nil, sent{fids[1], mk})
}
