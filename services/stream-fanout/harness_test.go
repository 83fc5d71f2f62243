package streamfanout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/tiers"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
)

const secret = "stream-fanout-test-secret-0123456789"

// world is a broker, a Redis database and a key prefix of one test.
type world struct {
	t       *testing.T
	brokers []string
	rdb     *redis.Client
	redis   string
	prefix  string
	pub     *eventbus.Publisher
	signer  *httpx.Signer
	// logs, when set, receives the replicas' logs (info and above); otherwise they are dropped.
	logs io.Writer
	// clock, when set, is the replicas' clock (service.Deps.Clock).
	clock func() time.Time
}

// waitForLog waits until the log b holds text, failing the test after 20s.
func waitForLog(t *testing.T, b *logtest.Buffer, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if strings.Contains(b.String(), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never logged %q", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clearOfHourTurn waits, when the UTC hour turns within a minute, until it has turned: the
// hourly quota window follows the Redis server's clock (this machine's), and a test that
// spends a tier's hour must not see the window turn under it.
func clearOfHourTurn(t *testing.T) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Hour).Add(time.Hour).Sub(now); left < time.Minute {
		t.Logf("waiting %s for the hour to turn", left)
		time.Sleep(left + time.Second)
	}
}

// worldTopics are the topics a world's broker holds.
var worldTopics = []string{eventsv1.TopicTransfers, eventsv1.TopicAttributions, eventsv1.TopicReorgs, eventsv1.TopicUsageCalls, eventsv1.TopicUserChanges}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOn(t, kafkatest.Broker(t, worldTopics...))
}

// newWorldOn is newWorld on the broker at brokers, holding worldTopics.
func newWorldOn(t *testing.T, brokers []string) *world {
	t.Helper()
	rdb, url := redistest.Client(t)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })
	return &world{t: t, brokers: brokers, rdb: rdb, redis: url, prefix: fmt.Sprintf("st%d:", rand.Uint64()), pub: pub, signer: httpx.NewSigner(secret)}
}

// replica is one running stream-fanout.
type replica struct {
	url, ops string
	cancel   context.CancelFunc
	done     chan error
}

// tiersFile writes the edge's built-in tier table plus "tiny", a tier of 3 stream transfers an
// hour, "small", 200 an hour, and "tinyfree", 3 an hour and 3 credits a period without overage,
// for the replicas to read as the edge reads EDGE_TIERS_FILE.
func (w *world) tiersFile() string {
	def := tiers.Default()
	list := []tiers.Tier{{Name: "tiny", Rate: 1, Burst: 1, HeavyRate: 1, IncludedCredits: 1000, Overage: true, StreamHourly: 3, StreamMonthly: 1000},
		{Name: "small", Rate: 1, Burst: 1, HeavyRate: 1, IncludedCredits: 1000, Overage: true, StreamHourly: 200, StreamMonthly: 100_000},
		{Name: "tinyfree", Rate: 1, Burst: 1, HeavyRate: 1, IncludedCredits: 3, Overage: false, StreamHourly: 3, StreamMonthly: 1000}}
	for _, n := range def.Names() {
		t, _ := def.Get(n)
		list = append(list, t)
	}
	b, err := json.Marshal(list)
	if err != nil {
		w.t.Fatal(err)
	}
	p := filepath.Join(w.t.TempDir(), "tiers.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) start(tune func(*streamfanout.Config)) *replica {
	t := w.t
	t.Helper()
	var cfg streamfanout.Config
	if err := config.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Base = service.Base{LogLevel: "error", ShutdownTimeout: 20 * time.Second, InternalSecret: secret, Telemetry: telemetry.Config{}}
	cfg.Kafka = service.Kafka{Brokers: w.brokers, Partitions: 4, ReplicationFactor: 1}
	cfg.Redis = service.Redis{URL: w.redis}
	cfg.RedisPrefix = w.prefix
	cfg.UserLabelsURL = ""
	cfg.Alerts = "off" // on in the alerts' tests only (startAlerts): others' fake user-labels lack its routes
	cfg.TokenAnalyticsURL = ""
	cfg.TiersFile = w.tiersFile()
	if tune != nil {
		tune(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{url: "http://" + ln.Addr().String(), ops: "http://" + ops.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	logs := w.logs
	if logs == nil {
		logs = io.Discard
	}
	go func() {
		r.done <- streamfanout.Run(ctx, cfg, service.Deps{HTTPListener: ln, OpsListener: ops, Logger: slog.New(slog.NewTextHandler(logs, nil)), Clock: w.clock})
	}()
	t.Cleanup(r.stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(r.ops + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not ready: %v", err)
		}
		select {
		case err := <-r.done:
			t.Fatalf("replica stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop shuts the replica down gracefully and waits for it.
func (r *replica) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}

// sign signs id onto h as the edge does for a stream call: with the caller's key hash (a
// stand-in derived from the key id).
func (w *world) sign(h http.Header, id httpx.Identity) {
	w.signer.SignWithKey(h, id, keyHash(w.prefix+id.KeyID), time.Now())
}

func ident(key string) httpx.Identity {
	return httpx.Identity{KeyID: key, UserID: "user-" + key, Role: httpx.RoleIndividual, Tier: "basic"}
}

// client is a WebSocket client of one replica.
type client struct {
	t  *testing.T
	c  *websocket.Conn
	id int
}

func (w *world) dial(r *replica, id httpx.Identity, query string) *client {
	w.t.Helper()
	c, resp, err := w.tryDial(r, id, query)
	if err != nil {
		w.t.Fatalf("dial: %v (%v)", err, resp)
	}
	return c
}

func (w *world) tryDial(r *replica, id httpx.Identity, query string) (*client, *http.Response, error) {
	h := http.Header{}
	w.sign(h, id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, strings.Replace(r.url, "http", "ws", 1)+"/ws/transfers"+query, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	c.SetReadLimit(1 << 20)
	cl := &client{t: w.t, c: c}
	w.t.Cleanup(func() { _ = c.CloseNow() })
	return cl, resp, nil
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// send sends a message of type typ with payload and returns its id.
func (c *client) send(typ string, payload any) string {
	c.t.Helper()
	c.id++
	id := fmt.Sprintf("m%d", c.id)
	b, _ := json.Marshal(map[string]any{"type": typ, "id": id, "payload": payload})
	c.sendRaw(string(b))
	return id
}

type msg struct {
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
	raw     []byte
}

// next reads the next message (failing the test when none comes within a generous bound).
func (c *client) next() msg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("server sent non-JSON %q", b)
	}
	m.raw = b
	return m
}

// subscribe subscribes and returns the filter and session ids.
func (c *client) subscribe(filters map[string]any) (filterID, sessionID string) {
	c.t.Helper()
	id := c.send("subscribe", map[string]any{"filters": filters})
	m := c.next()
	if m.Type != "ack" || m.Payload["messageId"] != id || m.Payload["success"] != true {
		c.t.Fatalf("subscribe: got %s", m.raw)
	}
	d := m.Payload["data"].(map[string]any)
	return d["filterId"].(string), d["sessionId"].(string)
}

func (c *client) expectError(code string) msg {
	c.t.Helper()
	m := c.next()
	if m.Type != "error" || m.Payload["code"] != code {
		c.t.Fatalf("want error %s, got %s", code, m.raw)
	}
	return m
}

// transfer reads the next message, which must be a transfer, and returns its id and alertId.
func (c *client) transfer() (string, string, msg) {
	c.t.Helper()
	m := c.next()
	if m.Type != "transfer" {
		c.t.Fatalf("want a transfer, got %s", m.raw)
	}
	tr := m.Payload["transfer"].(map[string]any)
	return tr["id"].(string), m.Payload["alertId"].(string), m
}

var seq = rand.Uint64() % 1_000_000

// transferMsg is a transfer of value usd from → to on ethereum.
func transferMsg(from, to string, usd float64) *eventsv1.Transfer {
	seq++
	h := fmt.Sprintf("0x%064x", seq)
	return &eventsv1.Transfer{Id: h + "_0", Chain: "ethereum", TransactionHash: h, BlockHash: fmt.Sprintf("0x%064x", seq+1<<40),
		BlockNumber: seq, BlockTimeMs: 1_700_000_000_000 + int64(seq), From: from, To: to, TokenName: "Ether", TokenSymbol: "ETH",
		TokenDecimals: 18, TokenId: "ethereum", Amount: "1500000000000000000", HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL}
}

// publish publishes ts in one partition (all under the first one's key), so their order is
// the order a subscriber is owed them in.
func (w *world) publish(ts ...*eventsv1.Transfer) {
	w.t.Helper()
	evs := make([]eventbus.Event, len(ts))
	for i, tr := range ts {
		evs[i] = eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey(ts[0].Chain, ts[0].TransactionHash), Msg: tr}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, evs...); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) attribute(addr, entityID, entityType, deposit string) {
	w.t.Helper()
	a := &eventsv1.Attribution{ChainType: "evm", Address: addr, DepositServiceId: deposit, Version: time.Now().UnixNano()}
	if entityID != "" {
		a.Entity = &eventsv1.Entity{Id: entityID, Name: strings.ToUpper(entityID), Type: entityType}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", addr), Msg: a}); err != nil {
		w.t.Fatal(err)
	}
}

func addr(n int) string { return fmt.Sprintf("0x%040x", 0xabc000+n) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func dialWS(ctx context.Context, url string, h http.Header) (*websocket.Conn, *http.Response, error) {
	c, resp, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1), &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		c.SetReadLimit(1 << 20)
	}
	return c, resp, err
}

func timeNow() time.Time { return time.Now() }

// metric reads a counter of the replica's ops /metrics (0 while it is not exported).
func (r *replica) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(r.ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
			f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err == nil {
				v += f
			}
		}
	}
	return v
}
