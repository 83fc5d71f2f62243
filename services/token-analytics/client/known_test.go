package client_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/client"
)

// fakeRegistry knows some names, records the calls it gets, and can fail or hang (until the
// call's context ends).
type fakeRegistry struct {
	mu         sync.Mutex
	known      map[string]bool
	calls      [][]string
	down, hang bool
}

func (f *fakeRegistry) Known(ctx context.Context, ids []string) (map[string]bool, error) {
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(ids))
	down, hang := f.down, f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if down {
		return nil, errors.New("503")
	}
	out := map[string]bool{}
	for _, id := range ids {
		if f.known[id] {
			out[id] = true
		}
	}
	return out, nil
}

func (f *fakeRegistry) took() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeRegistry) set(fn func()) { f.mu.Lock(); fn(); f.mu.Unlock() }

type testClock struct{ t time.Time }

func (c *testClock) now() time.Time      { return c.t }
func (c *testClock) add(d time.Duration) { c.t = c.t.Add(d) }

// Names are asked in one call (distinct, sorted), answers are cached (known ones longer than
// unknown ones), natives are known without asking, and a registry that cannot answer (down, or
// past the timeout) leaves the names it was asked about unchecked (reported each time, logged at
// most once a minute, not asked again until the retry delay has passed), while cached answers
// still hold.
func TestKnownCache(t *testing.T) {
	reg := &fakeRegistry{known: map[string]bool{"usd-coin": true, "weth": true}}
	clk := &testClock{t: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	var logs bytes.Buffer
	unchecked := 0
	kc := client.NewKnownCache(reg, client.KnownOptions{KnownTTL: 10 * time.Minute, UnknownTTL: 30 * time.Second,
		Timeout: 20 * time.Millisecond, Retry: 5 * time.Second, Native: client.NativePricingIDs(),
		Log: slog.New(slog.NewTextHandler(&logs, nil)), Warn: "registry down", Now: clk.now,
		Unchecked: func(context.Context) { unchecked++ }})
	steps := []struct {
		name    string
		ids     string
		unknown string
		calls   [][]string
		before  func()
	}{
		{"one call for every id", "weth,nope,usd-coin,nope2,weth", "nope", [][]string{{"nope", "nope2", "usd-coin", "weth"}}, nil},
		{"cached", "usd-coin,weth", "", nil, nil},
		{"unknown cached", "nope2,weth", "nope2", nil, nil},
		{"natives known without asking", "ethereum,matic-network,weth", "", nil, nil},
		{"unknown asked again after its ttl", "nope,weth", "nope", [][]string{{"nope"}}, func() { clk.add(31 * time.Second) }},
		{"listed since", "nope2", "", [][]string{{"nope2"}},
			func() { clk.add(31 * time.Second); reg.set(func() { reg.known["nope2"] = true }) }},
		{"known asked again after its ttl", "weth,nope3", "nope3", [][]string{{"nope3", "weth"}}, func() { clk.add(10 * time.Minute) }},
		{"down: unchecked", "fresh1", "", [][]string{{"fresh1"}}, func() { reg.set(func() { reg.down = true }) }},
		{"down: not asked again at once", "fresh1,fresh2", "", nil, nil},
		{"down: cached answers need no call", "weth", "", nil, nil},
		{"down: a cached unknown id stays unknown", "fresh4,nope3", "nope3", nil, nil},
		{"down: asked again after the retry delay", "fresh3", "", [][]string{{"fresh3"}}, func() { clk.add(61 * time.Second) }},
		{"up again", "fresh1,weth", "fresh1", [][]string{{"fresh1"}}, func() { clk.add(6 * time.Second); reg.set(func() { reg.down = false }) }},
		{"hung: unchecked past the timeout", "fresh5", "", [][]string{{"fresh5"}}, func() { reg.set(func() { reg.hang = true }) }},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		got, err := kc.Unknown(context.Background(), strings.Split(s.ids, ","))
		if err != nil || got != s.unknown {
			t.Fatalf("%s: got %q %v, want %q", s.name, got, err, s.unknown)
		}
		if calls := reg.took(); !reflect.DeepEqual(calls, s.calls) {
			t.Fatalf("%s: registry calls %v, want %v", s.name, calls, s.calls)
		}
	}
	if n := strings.Count(logs.String(), "\n"); n != 2 || !strings.Contains(logs.String(), `msg="registry down"`) {
		t.Errorf("%d log lines, want 2 (at most one a minute while down):\n%s", n, logs.String())
	}
	if unchecked != 5 {
		t.Errorf("unchecked reported %d times, want 5", unchecked)
	}
}

// Names beyond Batch are asked in several calls; when one fails the rest are taken unchecked
// without asking.
func TestKnownCacheBatch(t *testing.T) {
	reg := &fakeRegistry{known: map[string]bool{"a": true, "c": true, "e": true}}
	kc := client.NewKnownCache(reg, client.KnownOptions{Batch: 2})
	if got, err := kc.Unknown(context.Background(), []string{"e", "d", "c", "b", "a"}); err != nil || got != "d" {
		t.Fatalf("got %q %v, want d", got, err)
	}
	if calls := reg.took(); !reflect.DeepEqual(calls, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}) {
		t.Fatalf("calls %v", calls)
	}
	reg.set(func() { reg.down = true })
	if got, err := kc.Unknown(context.Background(), []string{"x1", "x2", "x3", "b"}); err != nil || got != "b" {
		t.Fatalf("down: got %q %v, want b (cached)", got, err)
	}
	if calls := reg.took(); !reflect.DeepEqual(calls, [][]string{{"x1", "x2"}}) {
		t.Fatalf("down: calls %v", calls)
	}
}

// The cache holds at most MaxEntries: at its bound expired entries go, then, if it is still
// full, everything, so an answer is asked again.
func TestKnownCacheBound(t *testing.T) {
	reg := &fakeRegistry{known: map[string]bool{"a": true, "b": true, "c": true}}
	clk := &testClock{t: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	kc := client.NewKnownCache(reg, client.KnownOptions{MaxEntries: 2, Now: clk.now})
	ask := func(want string, ids ...string) [][]string {
		t.Helper()
		if got, err := kc.Unknown(context.Background(), ids); err != nil || got != want {
			t.Fatalf("%v: got %q %v, want %q", ids, got, err, want)
		}
		return reg.took()
	}
	if calls := ask("nope-x", "a", "nope-x"); !reflect.DeepEqual(calls, [][]string{{"a", "nope-x"}}) {
		t.Fatalf("a, nope-x: calls %v", calls)
	}
	clk.add(31 * time.Second) // nope-x expired: dropped to make room, a kept
	if calls := ask("", "b"); !reflect.DeepEqual(calls, [][]string{{"b"}}) {
		t.Fatalf("b: calls %v", calls)
	}
	if calls := ask("", "a", "b"); calls != nil {
		t.Fatalf("a, b cached: calls %v", calls)
	}
	if calls := ask("", "c"); !reflect.DeepEqual(calls, [][]string{{"c"}}) { // full of live entries: cleared
		t.Fatalf("c: calls %v", calls)
	}
	if calls := ask("", "a", "c"); !reflect.DeepEqual(calls, [][]string{{"a"}}) {
		t.Fatalf("a asked again after the clear: calls %v", calls)
	}
}

// The caller's cancellation is an error, not a fail open: the registry is asked again at once.
func TestKnownCacheCancel(t *testing.T) {
	reg := &fakeRegistry{known: map[string]bool{}, hang: true}
	unchecked := 0
	kc := client.NewKnownCache(reg, client.KnownOptions{Unchecked: func(context.Context) { unchecked++ }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := kc.Unknown(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	reg.set(func() { reg.hang = false })
	if got, err := kc.Unknown(context.Background(), []string{"x"}); err != nil || got != "x" {
		t.Fatalf("after cancel: got %q %v, want x asked and unknown", got, err)
	}
	if calls := reg.took(); len(calls) != 2 || unchecked != 0 {
		t.Errorf("calls %v, unchecked %d", calls, unchecked)
	}
}
