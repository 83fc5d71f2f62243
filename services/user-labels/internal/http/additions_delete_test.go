package http

import (
	"context"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"google.golang.org/protobuf/proto"
)

// outboxChanges are the change events written to the outbox for user, in order of writing.
func (ev *env) outboxChanges(t *testing.T, user string) []*eventsv1.UserChange {
	t.Helper()
	rows, err := ev.store.Pool().Query(context.Background(),
		`SELECT payload FROM userdata.outbox WHERE key = $1 ORDER BY id`, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*eventsv1.UserChange
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		var c eventsv1.UserChange
		if err := proto.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		c.TimeMs = 0
		out = append(out, &c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// versions reads user's stored versions.
func (ev *env) versions(t *testing.T, user string) app.Versions {
	t.Helper()
	v, err := ev.store.Versions(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// DELETE /user/entities/<operator slug> removes all of the caller's additions to that operator
// entity in one transaction with the entity set's version and a KIND_ENTITY_ADDITIONS OP_DELETE
// event naming the removed addresses, and frees the entity slot they took; a caller without
// additions to it (again, or never) gets the 404 of an absent user entity, and another caller's
// additions to the same entity stay.
func TestDeleteOperatorAdditions(t *testing.T) {
	ev := newEnvWith(t, app.WithOwnerLimits(5, 3))
	u, other := newUser(), newUser()
	own := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", `[{"name":"one","addresses":{}},{"name":"two","addresses":{}}]`))
	added := `{"bitcoin":["` + btcAddr + `"],"evm":["` + evmAddr(1) + `"]}`
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/binance", `{"addresses":`+added+`}`), 200,
		`{"id":"binance","addresses":`+added+`}`)
	expect(t, ev.do(t, other, "PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["`+evmAddr(9)+`"]}}`), 200,
		`{"id":"binance","addresses":{"evm":["`+evmAddr(9)+`"]}}`)
	// At the cap: two entities and binance.
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/kraken", `{"addresses":{"evm":["`+evmAddr(2)+`"]}}`), 400,
		"entities: at most 3 entities per user; you have 3 and this request adds 1")

	before, events := ev.versions(t, u), len(ev.outboxChanges(t, u))
	expect(t, ev.do(t, u, "DELETE", "/user/entities/binance", nil), 200, `{"deleted":1}`)
	if after := ev.versions(t, u); after != (app.Versions{Labels: before.Labels, Entities: before.Entities + 1}) {
		t.Fatalf("versions %+v after the delete, were %+v: want the entity set's moved", after, before)
	}
	changes := ev.outboxChanges(t, u)
	want := &eventsv1.UserChange{UserId: u, Kind: eventsv1.UserChange_KIND_ENTITY_ADDITIONS, Op: eventsv1.UserChange_OP_DELETE,
		EntityId: "binance", Addresses: []*eventsv1.AddressRef{{ChainType: "bitcoin", Address: btcAddr}, {ChainType: "evm", Address: evmAddr(1)}}}
	if len(changes) != events+1 || !proto.Equal(changes[events], want) {
		t.Fatalf("outbox after the delete: %v\nwant one more event: %v", changes[events:], want)
	}

	expect(t, ev.do(t, u, "GET", "/internal/additions/binance", nil), 200, `{"addresses":{}}`)
	expect(t, ev.do(t, u, "GET", "/user/entities", nil), 200,
		"["+entityJSON(own[0], "one", "", false, "")+","+entityJSON(own[1], "two", "", false, "")+"]")
	lookup := `{"addresses":[{"chainType":"evm","address":"` + evmAddr(1) + `"}]}`
	expect(t, ev.do(t, u, "POST", "/internal/lookup?additions=true", lookup), 200, `{"labels":{},"entities":{}}`)
	// The slot is free again.
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/kraken", `{"addresses":{"evm":["`+evmAddr(2)+`"]}}`), 200,
		`{"id":"kraken","addresses":{"evm":["`+evmAddr(2)+`"]}}`)

	// Nothing left to delete, never added, not an id: the 404 of an absent user entity, no event.
	events = len(ev.outboxChanges(t, u))
	expectError(t, ev.do(t, u, "DELETE", "/user/entities/binance", nil), 404, `no user entity "binance"`)
	expectError(t, ev.do(t, u, "DELETE", "/user/entities/okx", nil), 404, `no user entity "okx"`)
	expectError(t, ev.do(t, u, "DELETE", "/user/entities/Binance", nil), 404, `no user entity "Binance"`)
	expectError(t, ev.do(t, other, "DELETE", "/user/entities/kraken", nil), 404, `no user entity "kraken"`)
	if n := len(ev.outboxChanges(t, u)); n != events {
		t.Fatalf("%d events written by deletes of nothing", n-events)
	}

	// The other caller's additions to binance, and the caller's to kraken, are untouched.
	expect(t, ev.do(t, other, "GET", "/internal/additions/binance", nil), 200, `{"addresses":{"evm":["`+evmAddr(9)+`"]}}`)
	expect(t, ev.do(t, u, "GET", "/internal/additions/kraken", nil), 200, `{"addresses":{"evm":["`+evmAddr(2)+`"]}}`)
	expect(t, ev.do(t, u, "POST", "/internal/lookup?additions=true", lookup), 200,
		`{"labels":{},"entities":{},"additions":{"kraken":{"evm":["`+evmAddr(2)+`"]}}}`)
}
