package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// simTokens are the pricing ids of the simulator's native coins and common tokens.
var simTokens = []string{"bitcoin", "ethereum", "solana", "binancecoin", "matic-network", "avalanche-2", "tron",
	"dogecoin", "the-open-network", "usd-coin", "tether", "weth", "wrapped-bitcoin", "chainlink", "uniswap"}

// streamDelivery subscribes to the stream through the edge and reads until the first transfer
// arrives, so stream-fanout's delivery metrics (the delivered counter, the Kafka-to-client
// latency histogram, the read position lag) exist whether or not the stream tests ran first.
// The simulator writes transfers of these tokens continuously; the wait ends with the first one.
func streamDelivery(t *testing.T, p *Platform) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := http.Header{}
	h.Set("API-Key", p.KeyFor(t))
	ws, resp, err := websocket.Dial(ctx, strings.Replace(p.URL, "http", "ws", 1)+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial the stream through the edge: %v (%v)", err, resp)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "metrics", "payload": map[string]any{"filters": map[string]any{"tokens": simTokens}}})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no transfer streamed for the delivery metrics: %v", err)
		}
		var m struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("stream sent %s: %v", b, err)
		}
		switch {
		case m.Type == "ack" && m.Payload["success"] != true:
			t.Fatalf("subscribe: %s", b)
		case m.Type == "error":
			t.Fatalf("stream refused the subscription: %s", b)
		case m.Type == "transfer":
			_ = ws.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}
