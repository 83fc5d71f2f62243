package http_test

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// clock is a settable time for the token cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lines counts the log's records (one JSON line each).
func lines(b *logtest.Buffer) int { return strings.Count(b.String(), "\n") }

// unchecked is the transfers_token_checks_unchecked_total counter.
func unchecked(t *testing.T, rd *sdkmetric.ManualReader) int64 {
	t.Helper()
	return counter(t, rd, "transfers_token_checks_unchecked_total")
}

// counter is the value of the int64 counter name collected from rd; the test fails when it is
// not exported (the unchecked counters are exported at 0 from the start, so increase() in an
// alert sees the first filter taken unchecked).
func counter(t *testing.T, rd *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := rd.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name && len(s.DataPoints) == 1 {
				return s.DataPoints[0].Value
			}
		}
	}
	t.Fatalf("%s is not exported", name)
	return 0
}

// The pricing ids of a tokens filter are checked in one registry call, answers are cached
// (known ones longer than unknown ones), the chains' native pricing ids are known without
// asking, and a registry that cannot answer (down, or past the timeout) leaves the ids it was
// asked about unchecked (200; logged at most once a minute, counted; not asked again until the
// retry delay has passed), while cached answers still hold. Whole bodies.
func TestTokenRegistry(t *testing.T) {
	reg := newRegistry("usd-coin", "weth") // no native pricing id: they are known without it
	clk := &clock{t: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	var logs logtest.Buffer
	rd := sdkmetric.NewManualReader()
	set := func(b *bool, v bool) { reg.mu.Lock(); *b = v; reg.mu.Unlock() }
	r := tokensRouter(t, reg, app.TokenOptions{KnownTTL: 10 * time.Minute, UnknownTTL: 30 * time.Second, Now: clk.now,
		Timeout: 20 * time.Millisecond, Retry: 5 * time.Second,
		Log: slog.New(slog.NewTextHandler(&logs, nil)), Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(rd)).Meter("t")})
	const empty = `{"transfers":[],"count":0}` // a16z has no deposit addresses: the token check decides the status
	if n := unchecked(t, rd); n != 0 {
		t.Fatalf("unchecked counter %d before any check, want 0", n)
	}
	unknown := func(id string) string { return `{"error":"tokens: unknown token \"` + id + `\""}` }
	steps := []struct {
		name   string
		tokens string
		status int
		body   string
		calls  [][]string
		before func()
	}{
		{"one call for every id", "weth,nope,usd-coin,nope2,weth", 404, unknown("nope"), [][]string{{"nope", "nope2", "usd-coin", "weth"}}, nil},
		{"cached", "usd-coin,weth", 200, empty, nil, nil},
		{"unknown cached", "nope2,weth", 404, unknown("nope2"), nil, nil},
		{"natives known without asking", "ethereum,matic-network,weth", 200, empty, nil, nil},
		{"unknown asked again after its ttl", "nope,weth", 404, unknown("nope"), [][]string{{"nope"}},
			func() { clk.add(31 * time.Second) }},
		{"listed since", "nope2", 200, empty, [][]string{{"nope2"}},
			func() { clk.add(31 * time.Second); reg.mu.Lock(); reg.known["nope2"] = true; reg.mu.Unlock() }},
		{"known asked again after its ttl", "weth,nope3", 404, unknown("nope3"), [][]string{{"nope3", "weth"}}, func() { clk.add(10 * time.Minute) }},
		{"down: unchecked", "fresh1", 200, empty, [][]string{{"fresh1"}}, func() { set(&reg.down, true) }},
		{"down: not asked again at once", "fresh1,fresh2", 200, empty, nil, nil},
		{"down: cached answers need no call", "weth", 200, empty, nil, nil},
		{"down: a cached unknown id stays a 404", "fresh4,nope3", 404, unknown("nope3"), nil, nil},
		{"down: asked again after the retry delay", "fresh3", 200, empty, [][]string{{"fresh3"}}, func() { clk.add(61 * time.Second) }},
		{"up again", "fresh1,weth", 404, unknown("fresh1"), [][]string{{"fresh1"}}, func() { clk.add(6 * time.Second); set(&reg.down, false) }},
		{"hung: unchecked past the timeout", "fresh5", 200, empty, [][]string{{"fresh5"}}, func() { set(&reg.hang, true) }},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		w := serve(r, &alice, "GET", "/transfers?to=deposit:a16z&tokens="+s.tokens, "")
		if w.Code != s.status || w.Body.String() != s.body {
			t.Fatalf("%s: got %d %s\nwant %d %s", s.name, w.Code, w.Body.String(), s.status, s.body)
		}
		if got := reg.took(); !reflect.DeepEqual(got, s.calls) {
			t.Fatalf("%s: registry calls %v, want %v", s.name, got, s.calls)
		}
	}
	if n := lines(&logs); n != 2 {
		t.Errorf("%d log lines, want 2 (at most one a minute while down)", n)
	}
	if n := unchecked(t, rd); n != 5 {
		t.Errorf("unchecked counter %d, want 5", n)
	}
	set(&reg.hang, false)
	clk.add(6 * time.Second) // past the retry delay the hung call started
	// The public histogram takes no tokens (TestSimpleHistogramFilters): the registry is not asked.
	w := serve(r, nil, "GET", "/transfers/histogram/simple?tokens=nope,fresh1", "")
	if w.Code != 200 {
		t.Errorf("histogram/simple: %d %s", w.Code, w.Body.String())
	}
	if got := reg.took(); got != nil {
		t.Errorf("histogram/simple asked the registry %v; it takes no tokens", got)
	}
}
