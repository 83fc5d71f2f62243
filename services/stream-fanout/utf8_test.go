package streamfanout_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestInvalidUTF8TextCloses1007: a text message that is not valid UTF-8 is not processed (a
// subscribe in it is not answered) and fails the connection with 1007 (RFC 6455 8.1); a binary
// message is not text and is answered as any message that is not JSON.
func TestInvalidUTF8TextCloses1007(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	c := w.dial(r, ident("kutf"), "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageBinary, []byte("\xff")); err != nil {
		t.Fatal(err)
	}
	c.expectError("INVALID_PAYLOAD")
	bad := `{"type":"subscribe","id":"u1","payload":{"filters":{"from":["` + addr(1) + `"]},"note":"` + "\xff\xfe" + `"}}`
	if err := c.c.Write(ctx, websocket.MessageText, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("after a text message that is not UTF-8: read %q, %v; want close 1007", b, err)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Reason != "text message is not valid UTF-8" {
		t.Fatalf("close reason %q", ce.Reason)
	}
}
