package ws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// keysWorld is a hub behind the identity middleware, as the service serves it, with a
// Redis database of its own.
type keysWorld struct {
	t      *testing.T
	h      *Hub
	rdb    *redis.Client
	url    string
	signer *httpx.Signer
}

func newKeysWorld(t *testing.T, now func() time.Time) *keysWorld {
	t.Helper()
	rdb, _ := redistest.Client(t)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: store.New(rdb, "kt:", now), Now: now})
	signer := httpx.NewSigner("keys-test-secret-0123456789abcdef")
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(httpx.IdentityMiddleware(signer))
	e.GET("/ws", func(c *gin.Context) {
		id, _ := httpx.IdentityFrom(c.Request.Context())
		err := h.Serve(c.Writer, c.Request, id, Connect{})
		var ref *Refusal
		if errors.As(err, &ref) {
			c.String(ref.Status, ref.Message)
		} else if err != nil {
			c.String(http.StatusServiceUnavailable, err.Error())
		}
	})
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return &keysWorld{t: t, h: h, rdb: rdb, url: srv.URL, signer: signer}
}

func testKeyHash(raw string) string {
	s := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(s[:])
}

// dial connects as the edge does for a caller of key hash hash.
func (w *keysWorld) dial(keyID, hash string) *websocket.Conn {
	w.t.Helper()
	h := http.Header{}
	w.signer.SignWithKey(h, Identity{KeyID: keyID, UserID: "u-" + keyID, Role: httpx.RoleIndividual, Tier: "basic"}, hash, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, strings.Replace(w.url, "http", "ws", 1)+"/ws", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		w.t.Fatalf("dial: %v %v", err, resp)
	}
	w.t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// record records an invalidation of hash as the edge does.
func (w *keysWorld) record(channel, hash string) {
	w.t.Helper()
	ctx := context.Background()
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		keyevents.Record(ctx, p, channel, []string{hash})
		return nil
	}); err != nil {
		w.t.Fatal(err)
	}
}

// resync reads the record as the service does when its subscription comes back.
func (w *keysWorld) resync(channel string) int {
	w.t.Helper()
	missed, now, err := keyevents.Recent(context.Background(), w.rdb, channel, time.Now().Add(-time.Hour))
	if err != nil {
		w.t.Fatal(err)
	}
	return w.h.KeysMissed(missed, now)
}

func closeCode(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			t.Fatalf("connection not closed: %v", err)
		}
	}
}

// TestMissedRevokeUnskewedByClocks: the revoking edge's clock a minute behind this replica's
// (equivalently, this replica's ahead) does not keep a connection admitted before the revoke
// open when the revoke is read from the record: both times are the Redis server's.
func TestMissedRevokeUnskewedByClocks(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(time.Minute) }
	w := newKeysWorld(t, ahead)
	mine := testKeyHash("skew")
	c := w.dial("k-skew", mine)
	// The handshake's answer can reach the client before the hub holds the connection; a
	// resync before that closes it when it is added (keyInvalidatedSince), not from its
	// snapshot, which this test reads.
	for deadline := time.Now().Add(10 * time.Second); w.h.Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hub never held the connection")
		}
	}
	w.record("skew:keys", mine)
	if n := w.resync("skew:keys"); n != 1 {
		t.Fatalf("closed %d connections, want the revoked key's one", n)
	}
	if code := closeCode(t, c); code != CloseKeyChanged {
		t.Fatalf("closed with %d, want %d", code, CloseKeyChanged)
	}
}

// TestAdmittedBeforeMissedRecordClosesAfterAdd: a connection admitted before an invalidation
// read from the record, but added to the hub after KeysMissed's snapshot (it was between its
// admission and the hub), closes when it is added, even when the invalidation is older than
// keyChangeGrace by then.
func TestAdmittedBeforeMissedRecordClosesAfterAdd(t *testing.T) {
	w := newKeysWorld(t, nil)
	mine, other := testKeyHash("late"), testKeyHash("other")
	server := w.rdb.Time(context.Background()).Val()
	admitted := server.Add(-10 * time.Second)
	w.h.KeysMissed(map[string]time.Time{mine: server.Add(-5 * time.Second), other: server.Add(-time.Hour)}, server)
	if w.h.KeyJustChanged(mine) {
		t.Fatal("an invalidation 5 s old counts as just changed")
	}
	if !w.h.keyInvalidatedSince(mine, admitted) {
		t.Fatal("a connection admitted before its key's recorded invalidation was kept")
	}
	if w.h.keyInvalidatedSince(other, admitted) || w.h.keyInvalidatedSince(testKeyHash("unrelated"), admitted) {
		t.Fatal("a connection admitted after its key's invalidation, or of another key, was closed")
	}
}

// TestKeylessConnectRefused: a connect whose signature covers no key hash is refused before
// any upgrade.
func TestKeylessConnectRefused(t *testing.T) {
	w := newKeysWorld(t, nil)
	h := http.Header{}
	w.signer.Sign(h, Identity{KeyID: "k", UserID: "u", Role: httpx.RoleIndividual, Tier: "basic"}, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, strings.Replace(w.url, "http", "ws", 1)+"/ws", &websocket.DialOptions{HTTPHeader: h})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("keyless connect: %v %v, want refused", err, resp)
	}
}
