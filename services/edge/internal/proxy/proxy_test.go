package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
)

// A service's 426 reaches the client with its Upgrade header, which the reverse proxy would drop
// as hop-by-hop.
func TestUpgradeRequiredKeepsUpgradeHeader(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUpgradeRequired)
		_, _ = w.Write([]byte(`{"error":"not a WebSocket handshake"}`))
	}))
	defer up.Close()
	h, err := New(Options{Service: "stream-fanout", Target: up.URL, Signer: httpx.NewSigner("s")})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ws/transfers", nil))
	if rec.Code != http.StatusUpgradeRequired || rec.Header().Get("Upgrade") != "websocket" {
		t.Fatalf("status %d, Upgrade %q; want 426 with Upgrade: websocket", rec.Code, rec.Header().Get("Upgrade"))
	}
	if got := rec.Body.String(); got != `{"error":"not a WebSocket handshake"}` {
		t.Fatalf("body %q", got)
	}
}

// IsUpgrade reads Connection as the reverse proxy does: comma-separated tokens, any case, any
// of its lines, and only with an Upgrade header.
func TestIsUpgrade(t *testing.T) {
	for _, c := range []struct {
		upgrade    string
		connection []string
		want       bool
	}{
		{"websocket", []string{"Upgrade"}, true},
		{"websocket", []string{"keep-alive, upgrade"}, true},
		{"websocket", []string{"keep-alive", " UPGRADE "}, true},
		{"websocket", []string{"Upgrade-Insecure"}, false},
		{"websocket", []string{"keep-alive"}, false},
		{"websocket", nil, false},
		{"", []string{"Upgrade"}, false},
	} {
		h := http.Header{"Connection": c.connection}
		if c.upgrade != "" {
			h.Set("Upgrade", c.upgrade)
		}
		if got := IsUpgrade(h); got != c.want {
			t.Errorf("Upgrade %q, Connection %q: %v, want %v", c.upgrade, c.connection, got, c.want)
		}
	}
}
