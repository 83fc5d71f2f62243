package streamfanout_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestFilterNamesAndNumbers: a filter naming an operator entity, deposit:<entityId> or
// type:<entityType> the read model does not hold, or a user entity the caller does not have, is
// refused as GET /transfers refuses it, naming the field and the value, by a subscribe
// (INVALID_FILTER) and by POST /ws/v2/streams (400); so is a number that is not a finite
// number, naming the rule. Known names, documented types and the caller's own user entity are
// accepted, a type: reference alone among them.
func TestFilterNamesAndNumbers(t *testing.T) {
	w := newWorld(t)
	const mine = "6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"
	const theirs = "0b7e6a52-93c4-4f0e-9d3a-2c1b0a9f8e7d"
	signer := httpx.NewSigner(secret)
	ul := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id, err := signer.Verify(r.Header, timeNow())
		switch {
		case err != nil:
			http.Error(rw, "no identity", 401)
		case r.URL.Path == "/internal/entities" && id.UserID == "user-kfn1":
			writeEntities(rw, r, map[string]any{mine: map[string]any{"id": mine, "name": "Desk", "note": "", "type": "user",
				"shareable": false, "addresses": map[string][]string{"evm": {addr(73)}}}})
		case r.URL.Path == "/internal/entities":
			writeEntities(rw, r, nil)
		case r.URL.Path == "/internal/additions":
			writeAdditions(rw, r, nil)
		case r.URL.Path == "/user/labels" || r.URL.Path == "/user/entities":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`[]`))
		default:
			http.Error(rw, `{"error":"not found"}`, 404)
		}
	}))
	defer ul.Close()
	w.attribute(addr(70), "exch", "cex", "")
	w.attribute(addr(71), "", "", "exch")
	w.attribute(addr(72), "bridgeco", "bridge", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.URL })
	me := ident("kfn1")
	c := w.dial(r, me, "")
	types := "bridge, cex, dex, fund, individual, user"
	for body, want := range map[string]string{
		`{"from":["no-such-entity-zz"]}`:              `from: unknown entity "no-such-entity-zz"`,
		`{"from":["type:zzz"]}`:                       `from: type:zzz is not an entity type (one of ` + types + `)`,
		`{"from":["deposit:no-such"]}`:                `from: unknown entity "no-such" in deposit:no-such`,
		`{"from":["deposit:` + theirs + `"]}`:         `from: unknown entity "` + theirs + `" in deposit:` + theirs,
		`{"from":["` + theirs + `"]}`:                 `from: unknown entity "` + theirs + `"`,
		`{"to":["exch","!ghost"]}`:                    `to: unknown entity "ghost"`,
		`{"base":"ghost","counterparties":["exch"]}`:  `base: unknown entity "ghost"`,
		`{"base":"exch","counterparties":["ghost"]}`:  `counterparties: unknown entity "ghost"`,
		`{"from":["exch"],"to":["type:zzz","ghost"]}`: `to: type:zzz is not an entity type (one of ` + types + `)`,
		`{"to":["exch"],"usdGte":1e999}`:              `usdGte: must be a finite number, got 1e999`,
		`{"to":["exch"],"usdGte":"1e400"}`:            `usdGte: must be a finite number, got "1e400"`,
		`{"to":["exch"],"valueLte":"abc"}`:            `valueLte: must be a number or a decimal string, got "abc"`,
	} {
		c.sendRaw(`{"type":"subscribe","id":"f1","payload":{"filters":` + body + `}}`)
		m := c.next()
		ws, _ := json.Marshal(map[string]any{"type": "error", "payload": map[string]any{"code": "INVALID_FILTER", "message": want, "messageId": "f1"}})
		if !jsonEqual(t, m.raw, ws) {
			t.Errorf("subscribe %s: got %s\nwant %s", body, m.raw, ws)
		}
		v2, _ := json.Marshal(map[string]string{"error": want})
		if a := w.call(r, me, "POST", "/ws/v2/streams", body); a.status != 400 || !jsonEqual(t, []byte(a.body), v2) {
			t.Errorf("v2 %s: got %d %s\nwant 400 %s", body, a.status, a.body, v2)
		}
	}
	for _, f := range []map[string]any{
		{"from": []string{"type:cex"}},
		{"to": []string{"type:bridge", "type:fund", "!type:user"}},
		{"to": []string{"deposit:exch", "bridgeco", mine}},
		{"base": "exch", "flow": "in", "counterparties": []string{"bridgeco"}, "usdGte": "1e3"},
	} {
		c.subscribe(f)
		b, _ := json.Marshal(f)
		if a := w.call(r, me, "POST", "/ws/v2/streams", string(b)); a.status != 200 {
			t.Errorf("v2 %s: got %d %s", b, a.status, a.body)
		}
	}
	// A type: reference alone matches the addresses of that type.
	tr := transferMsg(addr(70), addr(74), 3)
	w.publish(tr)
	if id, _, _ := c.transfer(); id != tr.Id {
		t.Fatalf("type:cex delivered %s, want %s", id, tr.Id)
	}
}
