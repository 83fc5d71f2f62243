package streamfanout_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestOwnLabels: a transfer carries the caller's own label and entity on its addresses (and
// another caller's stream does not), as /transfers attaches them; a filter on the caller's
// user entity matches its addresses.
func TestOwnLabels(t *testing.T) {
	w := newWorld(t)
	from, to := addr(90), addr(91)
	const ent = "6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"
	var calls atomic.Int64
	signer := httpx.NewSigner(secret)
	ul := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		id, err := signer.Verify(r.Header, timeNow())
		if err != nil {
			http.Error(rw, "no identity", 401)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		mine := id.UserID == "user-owner"
		switch {
		case r.URL.Path == "/user/labels" && mine:
			_, _ = rw.Write([]byte(`[{"name":"my hot wallet","note":"","address":"` + to + `","chainType":"evm"}]`))
		case r.URL.Path == "/user/entities" && mine:
			_, _ = rw.Write([]byte(`[{"id":"` + ent + `","name":"Desk","note":"n","type":"user","shareable":false,"addresses":{"evm":["` + from + `"]}}]`))
		case r.URL.Path == "/internal/entities" && mine:
			writeEntities(rw, r, map[string]any{ent: map[string]any{"id": ent, "name": "Desk", "note": "n", "type": "user", "shareable": false,
				"addresses": map[string][]string{"evm": {from}}}})
		case r.URL.Path == "/internal/entities":
			writeEntities(rw, r, nil)
		case r.URL.Path == "/internal/additions":
			writeAdditions(rw, r, nil)
		case r.URL.Path == "/user/labels" || r.URL.Path == "/user/entities":
			_, _ = rw.Write([]byte(`[]`))
		default:
			http.Error(rw, `{"error":"not found"}`, 404)
		}
	}))
	defer ul.Close()
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.URL })
	owner := w.dial(r, httpx.Identity{KeyID: "ko", UserID: "user-owner", Role: httpx.RoleIndividual, Tier: "basic"}, "")
	other := w.dial(r, ident("kother"), "")
	owner.subscribe(map[string]any{"from": []string{ent}})
	other.subscribe(map[string]any{"from": []string{from}})
	other.send("subscribe", map[string]any{"filters": map[string]any{"from": []string{ent}}})
	other.expectError("INVALID_FILTER")
	tr := transferMsg(from, to, 7)
	w.publish(tr)
	_, _, m := owner.transfer()
	ft := m.Payload["transfer"].(map[string]any)
	fa, ta := ft["fromAddress"].(map[string]any), ft["toAddress"].(map[string]any)
	if ue, _ := fa["userEntity"].(map[string]any); ue == nil || ue["id"] != ent || ue["type"] != "user" || fa["isUserAddress"] != true {
		t.Fatalf("owner's from address %v", fa)
	}
	if ul, _ := ta["userLabel"].(map[string]any); ul == nil || ul["name"] != "my hot wallet" || ul["chainType"] != "evm" {
		t.Fatalf("owner's to address %v", ta)
	}
	_, _, m = other.transfer()
	ot := m.Payload["transfer"].(map[string]any)
	if ot["fromAddress"].(map[string]any)["userEntity"] != nil || ot["toAddress"].(map[string]any)["userLabel"] != nil {
		t.Fatalf("another caller sees the owner's labels: %s", m.raw)
	}
	// A second transfer reads no book again.
	before := calls.Load()
	w.publish(transferMsg(from, to, 8))
	owner.transfer()
	if calls.Load() != before {
		t.Fatalf("user-labels asked again for a delivery (%d calls)", calls.Load()-before)
	}
}
