// Package e2e drives a running chainintel platform through the edge only, as a client would.
//
// By default the suite starts the whole local stack in-process (dev/stack) on a fresh database,
// an embedded broker and an embedded Redis. Set CHAININTEL_E2E_URL (and CHAININTEL_E2E_API_KEY)
// to run it against a deployed platform instead, e.g. a kind cluster behind its ingress; tests
// that need more than HTTP (publishing to Kafka, creating keys) skip there unless
// CHAININTEL_E2E_KAFKA / CHAININTEL_E2E_DATABASE_URL are set as well. A deployed platform's
// brokers may take TLS and SASL: CHAININTEL_E2E_KAFKA_TLS*, CHAININTEL_E2E_KAFKA_SASL_*, as a
// service reads its <PREFIX>KAFKA_TLS* and <PREFIX>KAFKA_SASL_* (docs/kubernetes.md).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
)

// Platform is the system under test.
type Platform struct {
	URL     string   // edge base URL
	APIKey  string   // a key on the API tier (org admin)
	Brokers []string // Kafka brokers, when reachable from the test
	// Kafka is the brokers with the TLS and SASL they take; KafkaSecurity is built from it
	// once, for every client the suite makes.
	Kafka         service.Kafka
	KafkaSecurity eventbus.Security
	DBURL         string       // the platform database, when reachable from the test
	Stack         *stack.Stack // nil against a deployed platform
	HTTP          *http.Client
	// Spans receives every service's traces when the suite started the stack (nil otherwise).
	Spans *spanSink
}

var current *Platform

// start brings the platform up for the test binary; stop tears it down.
func start() (p *Platform, stop func(), err error) {
	if u := os.Getenv("CHAININTEL_E2E_URL"); u != "" {
		p := &Platform{URL: strings.TrimRight(u, "/"), APIKey: os.Getenv("CHAININTEL_E2E_API_KEY"),
			DBURL: os.Getenv("CHAININTEL_E2E_DATABASE_URL"), HTTP: &http.Client{Timeout: 30 * time.Second}}
		if k := os.Getenv("CHAININTEL_E2E_KAFKA"); k != "" {
			if err := p.connectKafka(strings.Split(k, ",")); err != nil {
				return nil, nil, err
			}
		}
		return p, p.KafkaSecurity.Close, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "e2e")
	if err != nil {
		cancel()
		return nil, nil, err
	}
	logOut := io.Discard
	if path := os.Getenv("CHAININTEL_E2E_LOG"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			logOut = f
		}
	}
	sink, err := startSpanSink()
	if err != nil {
		cancel()
		drop()
		return nil, nil, err
	}
	st, err := stack.Start(ctx, stack.Options{HTTPAddr: "127.0.0.1:0", DatabaseURL: dbURL, LogLevel: "info", LogOutput: logOut, OTLPEndpoint: sink.url},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		cancel()
		drop()
		return nil, nil, err
	}
	// The stack's embedded broker is plaintext: the zero KafkaSecurity.
	p = &Platform{URL: st.URL, APIKey: st.APIKey, Brokers: st.Brokers, Kafka: service.Kafka{Brokers: st.Brokers}, DBURL: dbURL, Stack: st,
		HTTP: &http.Client{Timeout: 30 * time.Second}, Spans: sink}
	return p, func() {
		cancel()
		select {
		case <-st.Done():
		case <-time.After(40 * time.Second):
			fmt.Fprintln(os.Stderr, "e2e: stack did not stop within 40s")
		}
		drop()
		_ = sink.srv.Close()
	}, nil
}

// connectKafka sets the platform's brokers, with the TLS and SASL the CHAININTEL_E2E_KAFKA_*
// variables say they take.
func (p *Platform) connectKafka(brokers []string) error {
	k, err := service.KafkaFromEnv("CHAININTEL_E2E_", brokers)
	if err != nil {
		return err
	}
	sec, err := k.Security()
	if err != nil {
		return err
	}
	p.Brokers, p.Kafka, p.KafkaSecurity = brokers, k, sec
	return nil
}

// Get returns the platform for a test.
func Get(t testing.TB) *Platform {
	t.Helper()
	if current == nil {
		t.Fatal("e2e: platform not started (TestMain)")
	}
	return current
}

// Response is an answer from the platform.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response %d is not JSON (%v): %s", r.Status, err, r.Body)
	}
}

// Error returns the {"error": ...} message of the body ("" when there is none).
func (r Response) Error() string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error
}

// Do sends a request with key as API-Key (none when empty) and body as JSON (none when nil).
func (p *Platform) Do(t testing.TB, method, path, key string, body any) Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("API-Key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// DoPaced is Do, waiting out the key's rate limit: a 429 is sent again after its Retry-After.
func (p *Platform) DoPaced(t testing.TB, method, path, key string, body any) Response {
	t.Helper()
	r := p.Do(t, method, path, key, body)
	for r.Status == http.StatusTooManyRequests {
		wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
		r = p.Do(t, method, path, key, body)
	}
	return r
}

// Get sends GET path with the test's own key (see KeyFor).
func (p *Platform) Get(t testing.TB, path string) Response {
	t.Helper()
	return p.Do(t, http.MethodGet, path, p.KeyFor(t), nil)
}

var (
	testKeysMu sync.Mutex
	testKeys   = map[string]string{}
)

// KeyFor returns a key on the API tier (an org admin's) that belongs to t's top-level test
// alone, so tests polling the platform never share a rate budget. Against a platform whose
// database the suite cannot reach, every test shares p.APIKey.
func (p *Platform) KeyFor(t testing.TB) string {
	t.Helper()
	if p.DBURL == "" {
		return p.APIKey
	}
	name, _, _ := strings.Cut(t.Name(), "/")
	testKeysMu.Lock()
	defer testKeysMu.Unlock()
	if k, ok := testKeys[name]; ok {
		return k
	}
	k := p.NewKey(t, "api", "org_admin")
	testKeys[name] = k
	return k
}

// Publish sends events through the platform's broker (skips the test when it is unreachable).
func (p *Platform) Publish(t testing.TB, ctx context.Context, events ...eventbus.Event) {
	t.Helper()
	if len(p.Brokers) == 0 {
		t.Skip("Kafka is not reachable from the test (set CHAININTEL_E2E_KAFKA)")
	}
	pub := eventbus.NewPublisher(p.Brokers, eventbus.PublisherOptions{Security: p.KafkaSecurity})
	defer pub.Close()
	if err := pub.Publish(ctx, events...); err != nil {
		t.Fatal(err)
	}
}

// Eventually retries f every 100ms until it returns nil or timeout passes, then fails with f's
// last error.
func Eventually(t testing.TB, timeout time.Duration, f func() error) {
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
