package ws

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// redisGate stands between a Redis client and the server: up, it dials through; cut, it closes
// the connections made and its dials hang until fail lets them fail (a black-holed Redis).
type redisGate struct {
	mu    sync.Mutex
	cut   bool
	hang  chan struct{} // closed: dials while cut fail at once
	conns []net.Conn
}

func (g *redisGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	cut, hang := g.cut, g.hang
	g.mu.Unlock()
	if cut {
		// Past the client's dial timeout too: the save holding a turn stays under way until
		// the test lets it fail.
		<-hang
		return nil, errors.New("redis cut by the test")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		g.mu.Lock()
		g.conns = append(g.conns, c)
		g.mu.Unlock()
	}
	return c, err
}

func (g *redisGate) setCut(cut bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = cut
	if cut {
		g.hang = make(chan struct{})
		for _, c := range g.conns {
			_ = c.Close()
		}
		g.conns = nil
	}
}

func (g *redisGate) fail() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.hang:
	default:
		close(g.hang)
	}
}

// gatedHub is takeoverHub on a Redis behind a gate, with no retries.
func gatedHub(t *testing.T) (*Hub, *store.Store, *redisGate) {
	t.Helper()
	_, url := redistest.Client(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	g := &redisGate{hang: make(chan struct{})}
	opt.Dialer, opt.MaxRetries = g.dial, -1
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { g.fail(); _ = rdb.Close() })
	st := store.New(rdb, "tk:", nil)
	e := engine.New(engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return NewHub(Options{Engine: e, Store: st}), st, g
}

// served is a stand-in connection of key "k" serving a new session named after token.
func served(t *testing.T, h *Hub, st *store.Store, token string) *conn {
	t.Helper()
	id := "sess-" + token
	if err := st.Create(context.Background(), store.Session{ID: id, KeyID: "k", Kind: "rest", Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	c := standIn(t, h, token)
	if err := c.resume(id, false, func() {}); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkSaved fails unless session id was saved and let go (saved) or is still owned by the
// connection that ended (not saved).
func checkSaved(t *testing.T, st *store.Store, id, token string, saved bool) {
	t.Helper()
	ss, err := st.Get(context.Background(), id, "k")
	if err != nil {
		t.Fatal(err)
	}
	if saved != (ss.HasCursor && ss.Owner == "") || !saved && ss.Owner != token {
		t.Fatalf("session %s: cursor saved %v, owner %q; want saved %v", id, ss.HasCursor, ss.Owner, saved)
	}
}

// wsPair is a server-side WebSocket connection and the client's end of it.
func wsPair(t *testing.T) (server, client *websocket.Conn) {
	t.Helper()
	got := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		got <- c
	}))
	t.Cleanup(srv.Close)
	client, _, err := websocket.Dial(context.Background(), "ws"+srv.URL[len("http"):], nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CloseNow() })
	return <-got, client
}

// A connection ending while its save waits for a turn closes its client's socket at once: a
// backlog of saves holds no sockets. The save still happens once a turn is free.
func TestEndClosesTheSocketWhileTheSaveWaits(t *testing.T) {
	h, st, id := takeoverHub(t)
	c := standIn(t, h, "b")
	c.released.Store(false)
	var cli *websocket.Conn
	c.ws, cli = wsPair(t)
	c.start()
	if err := c.resume(id, false, func() {}); err != nil {
		t.Fatal(err)
	}
	for range cap(h.saves.turns) {
		h.saves.turns <- struct{}{}
	}
	go c.end(websocket.StatusPolicyViolation, "taken over")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, err := cli.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the client read %v; want the connection closed with 1008", err)
	}
	select {
	case <-c.ended:
		t.Fatal("the session was saved with every save turn taken")
	default:
	}
	for range cap(h.saves.turns) {
		<-h.saves.turns
	}
	<-c.ended
	checkSaved(t, st, id, "b", true)
}

// With Redis failing, the saves waiting for a turn are given up at once once saves fail (here
// one: the threshold is 1), without waiting for the turns, and counted; the sessions stay as
// their last checkpoint left them. Once Redis works again, the next save (the probe) succeeds
// and so do the ones after it.
func TestFailingRedisGivesSavesUpUntilItRecovers(t *testing.T) {
	h, st, g := gatedHub(t)
	reader := sdkmetric.NewManualReader()
	m, err := NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	h.o.Metrics = m
	h.saves.failThreshold = 1
	var mu sync.Mutex
	now := time.Now()
	h.saves.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	conns := make([]*conn, 5)
	for i := range conns {
		conns[i] = served(t, h, st, "c"+strconv.Itoa(i))
	}
	for range cap(h.saves.turns) - 1 {
		h.saves.turns <- struct{}{}
	}
	g.setCut(true)
	done := make(chan struct{}, len(conns))
	go func() { conns[0].save(); done <- struct{}{} }()
	for len(h.saves.turns) < cap(h.saves.turns) {
		time.Sleep(time.Millisecond) // conns[0] holds the last turn, its save hanging
	}
	for _, c := range conns[1:] {
		go func() { c.save(); done <- struct{}{} }()
	}
	for h.saves.pending.Load() < int64(len(conns)) {
		time.Sleep(time.Millisecond)
	}
	g.fail()
	for range conns {
		<-done // every save ends while the test holds all but one turn
	}
	if n := h.saves.unsaved.Load(); n != int64(len(conns)) || !h.saves.isFailing() {
		t.Fatalf("%d sessions counted unsaved (Redis failing: %v); want %d", n, h.saves.isFailing(), len(conns))
	}
	if engineSubs(t, h) != 0 {
		t.Fatal("sessions given up are left in the engine")
	}
	// conns[0]'s save failed; the others were given up, but for any that took the turn it let
	// go in the instant between (then its save failed too).
	if failed, pending := saveMetrics(t, reader); failed["error"] < 1 || failed["error"]+failed["redis_failing"] != int64(len(conns)) || pending != 0 {
		t.Fatalf("stream_session_saves_failed_total %v, pending %d; want %d in all, 1+ failed, none pending", failed, pending, len(conns))
	}
	for range cap(h.saves.turns) - 1 {
		<-h.saves.turns
	}

	g.setCut(false)
	mu.Lock()
	now = now.Add(h.saves.cooldown)
	mu.Unlock()
	for _, c := range conns {
		checkSaved(t, st, "sess-"+c.token, c.token, false)
	}
	for _, token := range []string{"probe", "after"} {
		c := served(t, h, st, token)
		c.save()
		checkSaved(t, st, "sess-"+token, token, true)
	}
	if h.saves.isFailing() || h.saves.unsaved.Load() != int64(len(conns)) {
		t.Fatalf("after Redis recovered: failing %v, %d unsaved; want working and %d", h.saves.isFailing(), h.saves.unsaved.Load(), len(conns))
	}
}

// saveMetrics reads stream_session_saves_failed_total by reason and stream_session_saves_pending.
func saveMetrics(t *testing.T, r *sdkmetric.ManualReader) (failed map[string]int64, pending int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	failed = map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			s, _ := md.Data.(metricdata.Sum[int64])
			for _, dp := range s.DataPoints {
				switch md.Name {
				case "stream_session_saves_failed_total":
					reason, _ := dp.Attributes.Value("reason")
					failed[reason.AsString()] += dp.Value
				case "stream_session_saves_pending":
					pending += dp.Value
				}
			}
		}
	}
	return failed, pending
}

// A shutdown whose deadline passes while a session's save still waits logs that session as not
// saved, with the count.
func TestShutdownLogsSessionsNotSaved(t *testing.T) {
	h, st, _ := takeoverHub(t)
	var logs logtest.Buffer
	h.o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	c := served(t, h, st, "b")
	if err := h.add(c); err != nil {
		t.Fatal(err)
	}
	for range cap(h.saves.turns) {
		h.saves.turns <- struct{}{}
	}
	saved := make(chan struct{})
	go func() { c.save(); close(saved) }()
	for h.saves.pending.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.Shutdown(ctx)
	for range cap(h.saves.turns) {
		<-h.saves.turns
	}
	<-saved
	if got := logs.String(); !strings.Contains(got, `msg="connections not saved at shutdown`) || !strings.Contains(got, "saves_pending_or_failed=1") {
		t.Fatalf("shutdown logged %q; want the session not saved counted", got)
	}
}

// save is saveAfter with nothing to do before waiting: a connection's end, as the tests drive it.
func (c *conn) save() { c.saveAfter(nil) }
