package streamfanout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/chainintel/chainintel/services/edge/ledger"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
)

func keyHash(raw string) string {
	h := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(h[:])
}

// dialKey connects to path as the edge does for a caller whose key hashes to hash.
func (w *world) dialKey(r *replica, id httpx.Identity, hash, path string) (*client, *http.Response, error) {
	h := http.Header{}
	w.signer.SignWithKey(h, id, hash, time.Now())
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	c, resp, err := dialWS(ctx, r.url+path, h)
	if err != nil {
		return nil, resp, err
	}
	w.t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: w.t, c: c}, resp, nil
}

// callKey is call with the edge's key hash header.
func (w *world) callKey(r *replica, id httpx.Identity, hash, method, path, body string) answer {
	w.t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	w.signer.SignWithKey(req.Header, id, hash, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return answer{resp.StatusCode, b.String(), resp.Header}
}

// closedWith reads until the connection ends and returns its close status and reason.
func (c *client) closedWith(within time.Duration) (websocket.StatusCode, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		_, b, err := c.c.Read(ctx)
		if err == nil {
			if !strings.Contains(string(b), `"type":"transfer"`) {
				c.t.Fatalf("unexpected message before the close: %s", b)
			}
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("connection not closed within %s: %v", within, err)
		}
		return ce.Code, ce.Reason
	}
}

// TestRevokedKeyClosesItsStreams: an invalidation of the edge's (a revoke or a tier change)
// closes every connection of the key on every replica, with 4401; another
// key's streams go on; the key's connects and REST calls that an edge may still let through are
// refused for a moment after it.
func TestRevokedKeyClosesItsStreams(t *testing.T) {
	// The replicas' clock stands still from the invalidation to the refusals checked after it,
	// and then moves past the grace: whether the grace is open is decided by the test, not by
	// how fast a loaded machine gets from one step to the next.
	clock := &testClock{}
	w := newWorld(t)
	w.clock = clock.now
	channel := w.prefix + "keys:invalidate"
	tune := func(c *streamfanout.Config) { c.KeyInvalidateChannel = channel }
	r1, r2 := w.start(tune), w.start(tune)
	me, other := ident("krv1"), ident("krv2")
	mine, others := keyHash(w.prefix+"mine"), keyHash(w.prefix+"other")
	from := addr(90)
	var mineConns []*client
	for _, r := range []*replica{r1, r2} {
		c, resp, err := w.dialKey(r, me, mine, "/ws/transfers")
		if err != nil {
			t.Fatalf("dial: %v %v", err, resp)
		}
		c.subscribe(map[string]any{"from": []string{from}})
		mineConns = append(mineConns, c)
	}
	oc, resp, err := w.dialKey(r1, other, others, "/ws/transfers")
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	oc.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(91), 1))
	for _, c := range append(mineConns, oc) {
		c.transfer()
	}

	clock.stop()
	if err := w.rdb.Publish(context.Background(), channel, keyHash("unrelated")+","+strings.ToUpper(mine)).Err(); err != nil {
		t.Fatal(err)
	}
	for i, c := range mineConns {
		code, reason := c.closedWith(20 * time.Second)
		if code != 4401 || reason != "API key revoked or its tier changed; connect again (a revoked key is refused)" {
			t.Fatalf("replica %d closed with %d %q", i+1, code, reason)
		}
	}
	refused := `{"error":"the API key was just revoked or its tier changed; retry"}`
	expect(t, w.callKey(r2, me, mine, "POST", "/ws/v2/streams", `{"to":["binance"]}`), 503, refused)
	if _, resp, err := w.dialKey(r1, me, mine, "/ws/transfers"); err == nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("a connect right after the invalidation: %v %v", err, resp)
	}
	// Another key's stream goes on.
	tr := transferMsg(from, addr(91), 2)
	w.publish(tr)
	if id, _, _ := oc.transfer(); id != tr.Id {
		t.Fatalf("the other key got %s", id)
	}
	// Once the edges cannot hold the old verification any more, the key (with its new tier,
	// when that was the change) connects again.
	clock.resume(2100 * time.Millisecond)
	moved := me
	moved.Tier = "pro"
	if _, resp, err := w.dialKey(r1, moved, mine, "/ws/transfers"); err != nil {
		t.Fatalf("connect after the grace: %v %v", err, resp)
	}
}

// TestRevokeMissedWhileUnsubscribed: a revoke whose message a replica missed (its
// subscription was down when the edge published it) still closes the key's connections when
// the subscription comes back, from the edge's record of recent invalidations; a connection
// admitted after its key's invalidation stays.
func TestRevokeMissedWhileUnsubscribed(t *testing.T) {
	w := newWorld(t)
	channel := w.prefix + "keys:invalidate"
	r := w.start(func(c *streamfanout.Config) { c.KeyInvalidateChannel = channel })
	me, other := ident("kms1"), ident("kms2")
	mine, others := keyHash(w.prefix+"mine"), keyHash(w.prefix+"other")
	ctx := context.Background()
	// A tier change a minute before its connection (scored by the Redis server's clock, as
	// keyevents records it).
	if err := w.rdb.ZAdd(ctx, channel+":recent", redis.Z{Score: float64(w.rdb.Time(ctx).Val().Add(-time.Minute).UnixMilli()), Member: others}).Err(); err != nil {
		t.Fatal(err)
	}
	from := addr(97)
	var conns []*client
	for _, k := range []struct {
		id   httpx.Identity
		hash string
	}{{me, mine}, {other, others}} {
		c, resp, err := w.dialKey(r, k.id, k.hash, "/ws/transfers")
		if err != nil {
			t.Fatalf("dial: %v %v", err, resp)
		}
		c.subscribe(map[string]any{"from": []string{from}})
		conns = append(conns, c)
	}
	w.publish(transferMsg(from, addr(98), 1))
	for _, c := range conns {
		c.transfer()
	}

	// The revoke is recorded but its message never reaches the replica.
	w.record(channel, mine)
	w.publish(transferMsg(from, addr(98), 2))
	for _, c := range conns {
		c.transfer()
	}
	// The replica's subscription drops and comes back.
	w.resubscribe(channel)
	code, reason := conns[0].closedWith(20 * time.Second)
	if code != 4401 || reason != "API key revoked or its tier changed; connect again (a revoked key is refused)" {
		t.Fatalf("the revoked key's connection closed with %d %q", code, reason)
	}
	tr := transferMsg(from, addr(98), 3)
	w.publish(tr)
	if id, _, _ := conns[1].transfer(); id != tr.Id {
		t.Fatalf("the key changed before its connection got %s", id)
	}
}

// record records an invalidation of hash as the edge does beside its publish.
func (w *world) record(channel, hash string) {
	w.t.Helper()
	ctx := context.Background()
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		keyevents.Record(ctx, p, channel, []string{hash})
		return nil
	}); err != nil {
		w.t.Fatal(err)
	}
}

// resubscribe drops the replica's subscription to key invalidations and waits until it is back.
func (w *world) resubscribe(channel string) {
	w.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for redistest.DropSubscribers(w.t, w.rdb) == 0 {
		if time.Now().After(deadline) {
			w.t.Fatal("the replica never subscribed to key invalidations")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		n, err := w.rdb.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			w.t.Fatal(err)
		}
		if n[channel] > 0 {
			return
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			w.t.Fatal("the replica never subscribed again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMissedReadRetried: a read of the record of invalidations that fails when the
// subscription comes back is retried until it succeeds, without waiting for another
// resubscribe, and closes the revoked key's connections then.
func TestMissedReadRetried(t *testing.T) {
	w := newWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	channel := w.prefix + "keys:invalidate"
	r := w.start(func(c *streamfanout.Config) { c.KeyInvalidateChannel = channel })
	me := ident("kmr1")
	mine := keyHash(w.prefix + "mine")
	c, resp, err := w.dialKey(r, me, mine, "/ws/transfers")
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	ctx := context.Background()
	// The record cannot be read (not a sorted set) when the subscription comes back.
	if err := w.rdb.Set(ctx, channel+":recent", "unreadable", 0).Err(); err != nil {
		t.Fatal(err)
	}
	w.resubscribe(channel)
	// The record becomes readable only once the resync's read has failed, so what closes the
	// connection below is a retry.
	waitForLog(t, logs, "were not read; retrying")
	if err := w.rdb.Del(ctx, channel+":recent").Err(); err != nil {
		t.Fatal(err)
	}
	w.record(channel, mine)
	code, reason := c.closedWith(20 * time.Second)
	if code != 4401 || reason != "API key revoked or its tier changed; connect again (a revoked key is refused)" {
		t.Fatalf("the revoked key's connection closed with %d %q", code, reason)
	}
}

// TestForgedKeyHeaderRefused: a key hash no edge signature covers (added to a keyless
// identity, or altered) is refused with 401, and so is an identity signed without one (the
// edge's keyless signatures for the other services, replayed here), so a pod without the
// internal secret can neither dodge a revoke nor pose as another key for its closes and
// refusals.
func TestForgedKeyHeaderRefused(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	me := ident("kfg1")
	mine, other := keyHash(w.prefix+"mine"), keyHash(w.prefix+"other")
	bad := `{"error":"invalid caller identity"}`
	for name, tc := range map[string]struct {
		forge func(http.Header)
		want  string
	}{
		"added": {func(h http.Header) { w.signer.Sign(h, me, time.Now()); h.Set(httpx.HeaderCallerKey, other) },
			`{"error":"invalid caller identity: a v1 signature with an unsigned X-Caller-Key header (an edge older than the service; roll both to the same version)"}`},
		"altered": {func(h http.Header) {
			w.signer.SignWithKey(h, me, mine, time.Now())
			h.Set(httpx.HeaderCallerKey, other)
		}, bad},
		"keyless": {func(h http.Header) { w.signer.Sign(h, me, time.Now()) },
			`{"error":"invalid caller identity: X-Caller-Key (the caller's key hash, signed by the edge) is required"}`},
	} {
		forge := tc.forge
		req, _ := http.NewRequest("POST", r.url+"/ws/v2/streams", strings.NewReader(`{"to":["binance"]}`))
		forge(req.Header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		expect(t, answer{resp.StatusCode, string(b), resp.Header}, 401, tc.want)
		h := http.Header{}
		forge(h)
		ctx, cancel := contextWithTimeout(10 * time.Second)
		_, resp, err = dialWS(ctx, r.url+"/ws/transfers", h)
		cancel()
		if err == nil || resp == nil || resp.StatusCode != 401 {
			t.Fatalf("%s key header: connect %v %v, want 401", name, err, resp)
		}
	}
	// Signed, the same key connects.
	if _, resp, err := w.dialKey(r, me, mine, "/ws/transfers"); err != nil {
		t.Fatalf("signed key: %v %v", err, resp)
	}
}

// TestCreditLimitStopsStreams: a caller of a tier without overage whose credits are spent gets
// 429 "credit limit reached" for a connect, a stream and a session; an open stream is closed
// with 4429 once its deliveries are charged past the limit; tiers with overage are not refused.
func TestCreditLimitStopsStreams(t *testing.T) {
	w := newWorld(t)
	w.attribute(addr(99), "binance", "cex", "")
	r := w.start(nil)
	me := httpx.Identity{KeyID: "kcl1", UserID: "user-kcl1", Role: httpx.RoleIndividual, Tier: "free"}
	name := ledger.Key(ledger.BilledEntity(me.UserID, ""), time.Now())
	ctx := context.Background()
	set := func(used int) { // as the edge's metering consumer publishes a period's total
		if err := w.rdb.HSet(ctx, name, ledger.FieldUsed, used, ledger.FieldThrough, time.Now().UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set(1000) // the free tier's included credits
	limit := `{"error":"credit limit reached"}`
	// Each refusal's Retry-After is the time to the next billing period, as the edge's.
	retry := func(h http.Header) {
		t.Helper()
		_, end := ledger.PeriodOf(time.Now())
		want := int(time.Until(end).Seconds())
		if got, err := strconv.Atoi(h.Get("Retry-After")); err != nil || got < want-5 || got > want+5 {
			t.Fatalf("Retry-After %q, want about %d (the next period)", h.Get("Retry-After"), want)
		}
	}
	_, resp, err := w.tryDial(r, me, "")
	if err == nil || resp.StatusCode != 429 {
		t.Fatalf("connect with credits spent: %v %v", err, resp)
	}
	retry(resp.Header)
	a := w.call(r, me, "POST", "/ws/v2/streams", `{"to":["binance"]}`)
	expect(t, a, 429, limit)
	retry(a.header)
	a = w.call(r, me, "POST", "/ws/sessions", "")
	expect(t, a, 429, limit)
	retry(a.header)
	pro := me
	pro.Tier = "pro"
	if a := w.call(r, pro, "POST", "/ws/v2/streams", `{"to":["binance"]}`); a.status != 200 {
		t.Fatalf("a tier with overage: %d %s", a.status, a.body)
	}

	set(995)
	c := w.dial(r, me, "")
	from := addr(95)
	c.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(96), 1))
	c.transfer()
	set(1000) // the edge's metering consumer counted the rest of the period's calls
	w.publish(transferMsg(from, addr(96), 1))
	code, reason := c.closedWith(5 * time.Second)
	if code != 4429 || reason != "credit limit reached" {
		t.Fatalf("closed with %d %q", code, reason)
	}
}

// testClock is the replicas' clock: the real time, or, while stopped, the time it was stopped at;
// resumed, it runs again, ahead of the real time by what it is told.
type testClock struct {
	mu      sync.Mutex
	stopped time.Time
	ahead   time.Duration
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped.IsZero() {
		return c.stopped
	}
	return time.Now().Add(c.ahead)
}

func (c *testClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = time.Now().Add(c.ahead)
}

// resume runs the clock again, by from the time it was stopped at.
func (c *testClock) resume(by time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead = c.stopped.Add(by).Sub(time.Now())
	c.stopped = time.Time{}
}

// TestCreditLimitHeldThroughQuotaReset: a key of a tier without overage that spent its hourly
// quota and, with it, its period's credits, charged while the ledger had not counted them yet,
// is delivered nothing past its credit limit when the hour's quota resets: it is closed with
// 4429 (by the writer's look at the ledger before deliveries resume, or by the periodic check
// of open connections, whichever comes first).
func TestCreditLimitHeldThroughQuotaReset(t *testing.T) {
	clearOfHourTurn(t)
	w := newWorld(t)
	r := w.start(nil)
	me := httpx.Identity{KeyID: "kcq1", UserID: "user-kcq1", Role: httpx.RoleIndividual, Tier: "tinyfree"}
	ctx := context.Background()
	c := w.dial(r, me, "")
	from := addr(70)
	c.subscribe(map[string]any{"from": []string{from}})
	var ts []*eventsv1.Transfer
	for range 4 {
		ts = append(ts, transferMsg(from, addr(71), 1))
	}
	w.publish(ts...)
	for i := range 3 {
		if got, _, _ := c.transfer(); got != ts[i].Id {
			t.Fatalf("delivery %d: %s, want %s", i, got, ts[i].Id)
		}
	}
	c.expectError("TIER_RATE_LIMITED")
	// The edge's metering consumer counts the 3 credits after the meter's flush that charged
	// them: the period's are spent.
	time.Sleep(1500 * time.Millisecond)
	name := ledger.Key(ledger.BilledEntity(me.UserID, ""), time.Now())
	if err := w.rdb.HSet(ctx, name, ledger.FieldUsed, 3, ledger.FieldThrough, time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	// The hour's quota resets (its counts are Redis's, named by the hour).
	keys, err := w.rdb.Keys(ctx, w.prefix+"q:"+me.KeyID+":[hs]:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("the hour's quota keys: %v %v", keys, err)
	}
	if err := w.rdb.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	// The refusal the replica read stood for a second, gone by now: these transfers match, and
	// the writer, taking credits of the new hour, must first find the credits spent.
	w.publish(transferMsg(from, addr(71), 1), transferMsg(from, addr(71), 1))
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, b, err := c.c.Read(rctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("want the connection closed 4429, got %s %v", b, err)
	}
	if ce.Code != 4429 || ce.Reason != "credit limit reached" {
		t.Fatalf("closed with %d %q", ce.Code, ce.Reason)
	}
}

// TestCreditLimitClosesIdleStream: an open stream of a tier without overage is closed with 4429
// once the ledger finds its entity's credits spent, though nothing is delivered to it (the
// periodic check of open connections, not a charge of its own, finds it).
func TestCreditLimitClosesIdleStream(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	me := httpx.Identity{KeyID: "kci1", UserID: "user-kci1", Role: httpx.RoleIndividual, Tier: "free"}
	c := w.dial(r, me, "")
	c.subscribe(map[string]any{"from": []string{addr(72)}})
	name := ledger.Key(ledger.BilledEntity(me.UserID, ""), time.Now())
	if err := w.rdb.HSet(context.Background(), name, ledger.FieldUsed, 1000, ledger.FieldThrough, time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	if code, reason := c.closedWith(5 * time.Second); code != 4429 || reason != "credit limit reached" {
		t.Fatalf("closed with %d %q", code, reason)
	}
}
