package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A stream does not outlive its key: through the edge, a subscribed connection is closed with
// 4401 after `edge admin revoke`, and connecting again is refused.
func TestStreamEndsWithItsKey(t *testing.T) {
	p := Get(t)
	if p.DBURL == "" {
		t.Skip("needs the edge's database to make and revoke a key")
	}
	key := p.NewKey(t, "pro", "individual")
	h := http.Header{}
	h.Set("API-Key", key)
	url := strings.Replace(p.URL, "http", "ws", 1) + "/ws/transfers"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial the stream through the edge: %v (%v)", err, resp)
	}
	defer ws.CloseNow()
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "s1", "payload": map[string]any{"filters": map[string]any{"to": []string{"binance-sim"}}}})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	if _, b, err := ws.Read(ctx); err != nil || !strings.Contains(string(b), `"type":"ack"`) {
		t.Fatalf("subscribe: %s %v", b, err)
	}
	p.RevokeKey(t, key)
	// The close must come (ctx bounds the wait); how soon is no claim of a test on a shared machine.
	var ce websocket.CloseError
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue // a transfer matched before the close
		}
		if !errors.As(err, &ce) {
			t.Fatalf("the stream of a revoked key did not close: %v", err)
		}
		break
	}
	if ce.Code != 4401 {
		t.Fatalf("closed with %d %q after the revoke", ce.Code, ce.Reason)
	}
	time.Sleep(1100 * time.Millisecond) // the edges' local verification cache
	if _, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("a revoked key connected again: %v (%v)", err, resp)
	}
}
