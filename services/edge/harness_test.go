package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	libconfig "github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/telemetry"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{})
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

const testSecret = "test-internal-secret-0123456789"

// backend stands in for every service behind the edge. It answers with the status in ?status
// (default 200), reports ?rows in X-Chainintel-Rows, blocks while ?block is set until release
// is closed, and echoes the verified caller identity and the path; with ?cut set it sends the
// header and part of the body and then drops the connection.
type backend struct {
	*httptest.Server
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func newBackend(t testing.TB) *backend {
	b := &backend{release: make(chan struct{})}
	signer := httpx.NewSigner(testSecret)
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.calls++
		b.mu.Unlock()
		if r.URL.Query().Get("block") != "" {
			<-b.release
		}
		id, err := signer.Verify(r.Header, time.Now())
		if err != nil && r.Header.Get(httpx.HeaderCaller) != "" {
			http.Error(w, "bad identity", 500)
			return
		}
		if rows := r.URL.Query().Get("rows"); rows != "" {
			w.Header().Set(httpx.HeaderRows, rows)
		}
		status := 200
		if s := r.URL.Query().Get("status"); s != "" {
			status, _ = strconv.Atoi(s)
		}
		w.Header().Set("Content-Type", "application/json")
		if n, _ := strconv.Atoi(r.URL.Query().Get("size")); n > 0 {
			// An answer of n bytes (a JSON string), for clients that stop reading it.
			_, _ = w.Write([]byte(`"` + strings.Repeat("x", n) + `"`))
			return
		}
		if r.URL.Query().Get("cut") != "" {
			w.WriteHeader(status) // no length: chunked, which the edge's proxy flushes as it goes
			_, _ = w.Write([]byte(`{"path":`))
			_ = http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler) // the server drops the connection
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "user": id.UserID, "apiKey": r.Header.Get("API-Key"), "traceparent": r.Header.Get("traceparent"), "baggage": r.Header.Get("baggage"), "tracestate": r.Header.Get("tracestate")})
	}))
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
		b.Close()
	})
	return b
}

// testEdge is a real edge (real PostgreSQL, Redis and in-process broker) in front of a backend.
type testEdge struct {
	*edge.Assembly
	svc     *service.Service
	cfg     edge.Config
	backend *backend
	brokers []string
	rdb     *redis.Client
	admin   *edge.Admin
}

type edgeOpts struct {
	tune      func(*edge.Config)
	redis     *redis.Client // share a Redis database between edges
	redisURL  string
	brokers   []string
	noConsume bool
}

func newEdge(t testing.TB, o edgeOpts) *testEdge {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var cfg edge.Config
	if err := libconfig.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.InternalSecret = testSecret
	cfg.DatabaseURL = pgtest.URL(t)
	rdb, rurl := o.redis, o.redisURL
	if rdb == nil {
		rdb, rurl = redistest.Client(t)
	}
	cfg.Redis.URL = rurl
	brokers := o.brokers
	if brokers == nil {
		brokers = kafkatest.Broker(t, eventsv1.TopicUsageCalls)
	}
	cfg.Brokers = brokers
	be := newBackend(t)
	cfg.UpstreamTransfers, cfg.UpstreamIntelligence, cfg.UpstreamUserLabels = be.URL, be.URL, be.URL
	cfg.UpstreamBalances, cfg.UpstreamTokenAnalytics, cfg.UpstreamStreamFanout = be.URL, be.URL, be.URL
	cfg.CreditSync = 50 * time.Millisecond
	// Rate-limit decisions are Redis's: on a loaded machine a decision slower than the default
	// 100 ms would be made in process (a fresh burst, by design), which no limit test expects.
	// Tests of Redis outages use refused connections, which fail at once whatever this is.
	cfg.LimiterTimeout = 10 * time.Second
	if o.tune != nil {
		o.tune(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ops, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ops.Close() })
	log := telemetry.NewLogger(io.Discard, "edge", "error")
	s, err := service.New(ctx, edge.Name, cfg.Base, service.Deps{Logger: log, Telemetry: telemetry.Nop("edge"), OpsListener: ops})
	if err != nil {
		t.Fatal(err)
	}
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	a, err := edge.Assemble(cfg, s, pgtest.Pool(t), rdb, pub)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, p := range a.Parts() {
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Run(ctx) }()
	}
	if !o.noConsume {
		c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "edge." + eventsv1.TopicUsageCalls, Topic: eventsv1.TopicUsageCalls, Logger: log},
			func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} }, a.Aggregator.Handle)
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Run(ctx) }()
	}
	admin, err := edge.OpenAdmin(ctx, cfg)
	if err != nil { // Redis deliberately unreachable: administer the database only
		noRedis := cfg
		noRedis.Redis.URL = ""
		if admin, err = edge.OpenAdmin(ctx, noRedis); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = pub.Close()
		admin.Close()
	})
	return &testEdge{Assembly: a, svc: s, cfg: cfg, backend: be, brokers: brokers, rdb: rdb, admin: admin}
}

// key creates a key per spec.
func (e *testEdge) key(t testing.TB, spec edge.KeySpec) (string, edge.KeyInfo) {
	t.Helper()
	raw, k, err := e.admin.CreateKey(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return raw, k
}

type result struct {
	Status int
	Header http.Header
	Body   string
}

// do sends one request through the edge's handler.
func (e *testEdge) do(method, path, key string, hdr ...string) result {
	return e.send(method, path, key, "", hdr...)
}

// send is do with a request body.
func (e *testEdge) send(method, path, key, body string, hdr ...string) result {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	r.RemoteAddr = "192.0.2.10:5555"
	if key != "" {
		r.Header.Set("API-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "remote" { // the client's address, not a header
			r.RemoteAddr = hdr[i+1]
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	e.Handler.ServeHTTP(w, r)
	return result{Status: w.Code, Header: w.Header(), Body: w.Body.String()}
}

func (e *testEdge) get(path, key string) result { return e.do(http.MethodGet, path, key) }

// backendCalls is how many requests the backend has received.
func (e *testEdge) backendCalls() int {
	e.backend.mu.Lock()
	defer e.backend.mu.Unlock()
	return e.backend.calls
}

// eventually retries f until it returns nil or timeout passes.
func eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
