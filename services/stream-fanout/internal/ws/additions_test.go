package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// gatedLabels is user-labels answering a caller's additions to any operator entity with addrs
// as they are when asked, or with fail; while gate is not nil each read waits for it to
// close after telling entered.
type gatedLabels struct {
	mu      sync.Mutex
	addrs   []string
	fail    bool
	gate    chan struct{}
	entered chan struct{}
	calls   atomic.Int64
	// entityCalls counts the user entity reads that failed.
	entityCalls atomic.Int64
}

func (l *gatedLabels) Book(context.Context) (Book, error) { return Book{}, nil }
func (l *gatedLabels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	l.mu.Lock()
	fail := l.fail
	l.mu.Unlock()
	if fail {
		l.entityCalls.Add(1)
		return nil, errors.New("user-labels timed out")
	}
	return map[string]ulclient.UserEntity{}, nil
}
func (l *gatedLabels) Additions(ctx context.Context, ids []string) (map[string]map[string][]string, error) {
	l.calls.Add(1)
	l.mu.Lock()
	addrs, fail, gate := append([]string{}, l.addrs...), l.fail, l.gate
	l.mu.Unlock()
	if gate != nil {
		l.entered <- struct{}{}
		<-gate
	}
	if fail {
		return nil, errors.New("user-labels timed out")
	}
	out := map[string]map[string][]string{}
	for _, id := range ids {
		out[id] = map[string][]string{"evm": addrs}
	}
	return out, nil
}

func (l *gatedLabels) set(fn func(l *gatedLabels)) {
	l.mu.Lock()
	fn(l)
	l.mu.Unlock()
}

func testAddr(n int) string { return fmt.Sprintf("0x%040x", 0xadd000+n) }

// additionsHub is a hub on a running engine, with user-labels l.
func additionsHub(t *testing.T, l Labels) *Hub {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := engine.New(engine.Options{})
	go func() { _ = e.Run(ctx) }()
	return NewHub(Options{Engine: e, Labels: l, Log: slog.New(slog.DiscardHandler)})
}

// liveConn is a connection of user's on h serving a session whose filters are raws, built
// without additions.
func liveConn(t *testing.T, h *Hub, user string, raws ...string) (*conn, *engine.Sub) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &conn{h: h, ctx: ctx, cancel: cancel, id: Identity{UserID: user, KeyID: "k-" + user}}
	var fs []*engine.Filter
	for i, r := range raws {
		var raw filter.Raw
		if err := json.Unmarshal([]byte(r), &raw); err != nil {
			t.Fatal(err)
		}
		spec, err := filter.Parse(raw, filter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("f%d", i)
		fs = append(fs, engine.Compile(id, spec, nil))
		c.filters = append(c.filters, store.FilterRec{ID: id, Raw: json.RawMessage(r)})
	}
	e := h.o.Engine
	e.Do(ctx, func() {
		c.sub = e.NewSub(nil, nil)
		for _, f := range fs {
			e.AddFilter(c.sub, f)
		}
	})
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	return c, c.sub
}

// settled waits until no rebuild of user's filters is pending or running.
func settled(t *testing.T, h *Hub, user string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		h.addMu.Lock()
		_, busy := h.callers[user]
		h.addMu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the caller's rebuild never ended")
		}
		time.Sleep(time.Millisecond)
	}
}

// matches says which of froms a transfer from each to a stranger's address matches for sub.
func matches(h *Hub, sub *engine.Sub, froms ...string) []bool {
	out := make([]bool, len(froms))
	h.o.Engine.Do(context.Background(), func() {
		for i, from := range froms {
			tr := &eventsv1.Transfer{Id: fmt.Sprint(i), Chain: "ethereum", From: from, To: testAddr(99), Amount: "1"}
			out[i] = len(h.o.Engine.MatchOne(sub, []engine.Record{{Part: 0, Off: int64(i), Msg: tr}}, nil)) > 0
		}
	})
	return out
}

// An additions change read from user.changes.v1 is only recorded on the change feed's
// goroutine: with user-labels not answering, AdditionsChanged and the Forget of another
// caller's change after it return while the rebuild waits on user-labels. The rebuild reads
// the entity's additions once for all the caller's connections and filters, and once that
// read failed, the next change's rebuild does not ask user-labels while it is backed off.
func TestAdditionsChangeDoesNotHoldTheFeed(t *testing.T) {
	l := &gatedLabels{gate: make(chan struct{}), entered: make(chan struct{}, 64), fail: true}
	h := additionsHub(t, l)
	var subs []*engine.Sub
	for range 3 {
		_, sub := liveConn(t, h, "owner", `{"base":["exch"]}`, `{"from":["exch"]}`, `{"to":["!exch"],"from":["exch"]}`)
		subs = append(subs, sub)
	}
	done := make(chan struct{})
	go func() { // the change feed's handler, one change after another
		h.Forget("owner")
		h.AdditionsChanged("owner", "exch")
		h.Forget("other")
		close(done)
	}()
	<-l.entered // the rebuild is waiting on user-labels
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the change feed's handler waited for user-labels")
	}
	close(l.gate)
	settled(t, h, "owner")
	if n := l.calls.Load(); n != 1 {
		t.Fatalf("user-labels asked %d times for one change of 9 filters naming one entity", n)
	}
	l.set(func(l *gatedLabels) { l.gate = nil })
	h.AdditionsChanged("owner", "exch")
	settled(t, h, "owner")
	if n := l.calls.Load(); n != 1 {
		t.Fatalf("user-labels asked again while backed off: %d calls", n)
	}
	for _, sub := range subs { // the filters failing to rebuild match as before
		if got := matches(h, sub, testAddr(1)); got[0] {
			t.Fatal("a filter that failed to rebuild changed")
		}
	}
}

// A rebuild's swap never puts older additions back in place of newer: of two changes, the
// first's read answering last (after the second change was announced) is followed by a round
// reading the second's, and a build in progress on the connection across the second change
// (a subscribe, a claim) has the filter rebuilt again, from what user-labels holds then.
func TestAdditionsSwapsKeepTheLatest(t *testing.T) {
	a1, a2 := testAddr(1), testAddr(2)
	l := &gatedLabels{entered: make(chan struct{}, 64)}
	h := additionsHub(t, l)
	_, sub := liveConn(t, h, "owner", `{"base":["exch"]}`)
	_, other := liveConn(t, h, "stranger", `{"base":["exch"]}`)

	gate := make(chan struct{})
	l.set(func(l *gatedLabels) { l.addrs, l.gate = []string{a1}, gate })
	h.Forget("owner")
	h.AdditionsChanged("owner", "exch")
	<-l.entered // the first change's read holds a1
	b := h.beginBuild("owner")
	l.set(func(l *gatedLabels) { l.addrs, l.gate = []string{a2}, nil })
	h.Forget("owner")
	h.AdditionsChanged("owner", "exch")
	close(gate)
	settled(t, h, "stranger")
	h.endBuild("owner", b)
	settled(t, h, "owner")
	if got := matches(h, sub, a1, a2); got[0] || !got[1] {
		t.Fatalf("the owner's filter matches a1, a2: %v, want [false true]", got)
	}
	if got := matches(h, other, a1, a2); got[0] || got[1] {
		t.Fatalf("another caller's filter matches a1, a2: %v", got)
	}
}

// While user-labels is backed off after a failure, a filter naming an operator entity fails
// to build at once (ErrLabelsUnavailable), without asking it.
func TestAdditionsFailFastWhileDown(t *testing.T) {
	l := &gatedLabels{fail: true}
	h := additionsHub(t, l)
	c, _ := liveConn(t, h, "owner")
	for i := range 2 {
		if _, err := c.additions(c.ctx, "exch"); !errors.Is(err, ErrLabelsUnavailable) {
			t.Fatalf("read %d: %v, want ErrLabelsUnavailable", i, err)
		}
	}
	if n := l.calls.Load(); n != 1 {
		t.Fatalf("user-labels asked %d times, want 1 (the failure backs it off)", n)
	}
	// Another caller's read is backed off too: user-labels is down, not the caller.
	c2, _ := liveConn(t, h, "other")
	if _, err := c2.compile(c2.ctx, "f", filter.Raw{Base: filter.List{"exch"}}); !errors.Is(err, ErrLabelsUnavailable) || l.calls.Load() != 1 {
		t.Fatalf("another caller's build while down: %v after %d calls", err, l.calls.Load())
	}
}

// A rebuild round reads an entity's additions once for all the caller's connections and
// filters, even when the answer is not cached (another change of the caller's was announced
// while it was read), and every filter gets that answer.
func TestAdditionsReadOncePerRound(t *testing.T) {
	a1 := testAddr(1)
	gate := make(chan struct{})
	l := &gatedLabels{addrs: []string{a1}, gate: gate, entered: make(chan struct{}, 64)}
	h := additionsHub(t, l)
	var subs []*engine.Sub
	for range 3 {
		_, sub := liveConn(t, h, "owner", `{"base":["exch"]}`, `{"from":["exch"]}`, `{"to":["exch"]}`)
		subs = append(subs, sub)
	}
	h.Forget("owner")
	h.AdditionsChanged("owner", "exch")
	<-l.entered
	h.Forget("owner") // a change of the caller's labels: the answer being read is not cached
	l.set(func(l *gatedLabels) { l.gate = nil })
	close(gate)
	settled(t, h, "owner")
	if n := l.calls.Load(); n != 1 {
		t.Fatalf("user-labels asked %d times for one round of 9 filters naming exch", n)
	}
	for i, sub := range subs {
		if got := matches(h, sub, a1); !got[0] {
			t.Fatalf("connection %d's filters do not match the additions read", i)
		}
	}
}

// A filter naming a user entity is refused at once while user-labels is backed off, as one
// naming an operator entity is: a failed read of a user entity backs it off, and the next
// build, of any caller, does not wait on it.
func TestUserEntityFailsFastWhileDown(t *testing.T) {
	l := &gatedLabels{fail: true}
	h := additionsHub(t, l)
	c, _ := liveConn(t, h, "owner")
	ue := filter.Raw{Base: filter.List{"0f8fad5b-d9cb-469f-a165-70867728950e"}}
	for i := range 2 {
		if _, err := c.compile(c.ctx, "f", ue); !errors.Is(err, ErrLabelsUnavailable) {
			t.Fatalf("build %d: %v, want ErrLabelsUnavailable", i, err)
		}
	}
	if n := l.entityCalls.Load(); n != 1 {
		t.Fatalf("user-labels asked %d times, want 1 (the failure backs it off)", n)
	}
	c2, _ := liveConn(t, h, "other")
	if _, err := c2.compile(c2.ctx, "f", filter.Raw{Base: filter.List{"exch"}}); !errors.Is(err, ErrLabelsUnavailable) || l.calls.Load() != 0 {
		t.Fatalf("another caller's build while down: %v after %d additions reads", err, l.calls.Load())
	}
}

// A rebuild parses each stored filter of the caller's once: the spec that says whether the
// filter names the changed entity is the one built.
func TestRebuildParsesEachFilterOnce(t *testing.T) {
	l := &gatedLabels{addrs: []string{testAddr(1)}}
	h := additionsHub(t, l)
	var parses atomic.Int64
	h.parse = func(r filter.Raw, o filter.Options) (filter.Spec, error) {
		parses.Add(1)
		return filter.Parse(r, o)
	}
	_, sub := liveConn(t, h, "owner", `{"base":["exch"]}`, `{"from":["exch"]}`, `{"from":["other"]}`)
	h.AdditionsChanged("owner", "exch")
	settled(t, h, "owner")
	if got := matches(h, sub, testAddr(1)); !got[0] {
		t.Fatal("the rebuilt filters do not match the addition")
	}
	if n := parses.Load(); n != 3 {
		t.Fatalf("%d parses rebuilding 2 of 3 filters, want 3 (one per stored filter)", n)
	}
}
