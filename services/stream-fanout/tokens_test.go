package streamfanout_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestUnknownTokenRefused: a pricing id the token registry (token-analytics) does not know is
// refused by a subscribe (INVALID_FILTER) and by POST /ws/v2/streams (400) in the words of
// GET /transfers; a known one, a chain's native pricing id (not asked about) and a contract
// address (never checked) are accepted. While the registry cannot answer, the filter is taken
// unchecked.
func TestUnknownTokenRefused(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var asked [][]string
	down := false
	reg := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var in struct{ IDs []string }
		if r.URL.Path != "/internal/tokens/known" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(rw, `{"error":"bad request"}`, 400)
			return
		}
		mu.Lock()
		asked = append(asked, in.IDs)
		isDown := down
		mu.Unlock()
		if isDown {
			http.Error(rw, `{"error":"unavailable"}`, 503)
			return
		}
		known := []string{}
		for _, id := range in.IDs {
			if id == "token-1" {
				known = append(known, id)
			}
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"known": known})
	}))
	defer reg.Close()
	r := w.start(func(c *streamfanout.Config) { c.TokenAnalyticsURL = reg.URL })
	me := ident("ktok")
	c := w.dial(r, me, "")
	for body, want := range map[string]string{
		`{"tokens":["no-such-token"]}`:            `tokens: unknown token "no-such-token"`,
		`{"tokens":"no-such-token"}`:              `tokens: unknown token "no-such-token"`,
		`{"tokens":["token-1","nosuchtoken"]}`:    `tokens: unknown token "nosuchtoken"`,
		`{"tokens":["ethereum","no-such-token"]}`: `tokens: unknown token "no-such-token"`,
	} {
		c.sendRaw(`{"type":"subscribe","id":"t1","payload":{"filters":` + body + `}}`)
		ws, _ := json.Marshal(map[string]any{"type": "error", "payload": map[string]any{"code": "INVALID_FILTER", "message": want, "messageId": "t1"}})
		if m := c.next(); !jsonEqual(t, m.raw, ws) {
			t.Errorf("subscribe %s: got %s\nwant %s", body, m.raw, ws)
		}
		v2, _ := json.Marshal(map[string]string{"error": want})
		if a := w.call(r, me, "POST", "/ws/v2/streams", body); a.status != 400 || !jsonEqual(t, []byte(a.body), v2) {
			t.Errorf("v2 %s: got %d %s\nwant 400 %s", body, a.status, a.body, v2)
		}
	}
	for _, f := range []map[string]any{
		{"tokens": []string{"token-1"}},
		{"tokens": []string{"ethereum"}},
		{"tokens": []string{addr(80)}},
	} {
		c.subscribe(f)
		b, _ := json.Marshal(f)
		if a := w.call(r, me, "POST", "/ws/v2/streams", string(b)); a.status != 200 {
			t.Errorf("v2 %s: got %d %s", b, a.status, a.body)
		}
	}
	mu.Lock()
	for _, ids := range asked {
		if slices.Contains(ids, "ethereum") {
			t.Errorf("the registry was asked about a native pricing id: %v", ids)
		}
	}
	down = true
	mu.Unlock()
	// The registry fails: a pricing id it was not asked about yet is taken unchecked.
	c.subscribe(map[string]any{"tokens": []string{"not-listed-yet"}})
}
