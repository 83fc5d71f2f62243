package ws

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/google/uuid"
)

// Route is the route pattern stream credits are metered under, as the edge's route table and
// /analytics/endpoint-calls name it.
const Route = "/ws/transfers"

// RouteV2 is the same for v2 streams.
const RouteV2 = "/ws/v2/transfers"

// Publisher writes events (eventbus.Publisher).
type Publisher interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// Meter sums delivered transfers per key and publishes them on usage.calls.v1 as the edge's
// metering does for calls: one UsageCall per key and flush, one credit per transfer, unit "row".
// A connection holds its key's entry (acquire, release) and counts into it without a lock
// shared by every connection.
type Meter struct {
	pub   Publisher
	every time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	keys map[string]*meterEntry // key id and route → count
	// charged is told, after each flush that published, whose deliveries were charged (the
	// hub checks their credits there); nil: nobody.
	charged func(ctx context.Context, ids []Identity)
}

type meterEntry struct {
	id    Identity
	route string
	n     atomic.Int64
	// first is when the first transfer counted since the last flush was delivered (unix ns, 0
	// while none is).
	first atomic.Int64
	refs  int // connections holding the entry (m.mu)
}

// add counts n transfers delivered at at.
func (e *meterEntry) add(n int64, at time.Time) {
	e.first.CompareAndSwap(0, at.UnixNano())
	e.n.Add(n)
}

// NewMeter returns a meter publishing through pub every period.
func NewMeter(pub Publisher, every time.Duration, log *slog.Logger) *Meter {
	if every <= 0 {
		every = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Meter{pub: pub, every: every, log: log, keys: map[string]*meterEntry{}}
}

// acquire returns id's entry on route, held until release: a flush keeps it while held.
func (m *Meter) acquire(id Identity, route string) *meterEntry {
	k := id.KeyID + " " + route
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.keys[k]
	if e == nil {
		e = &meterEntry{id: id, route: route}
		m.keys[k] = e
	}
	e.refs++
	return e
}

func (m *Meter) release(e *meterEntry) {
	m.mu.Lock()
	e.refs--
	m.mu.Unlock()
}

// Run publishes every period until ctx ends, then once more.
func (m *Meter) Run(ctx context.Context) error {
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			m.Flush(fctx)
			cancel()
			return nil
		case <-t.C:
			m.Flush(ctx)
		}
	}
}

// counted is one entry's count taken by a flush.
type counted struct {
	e     *meterEntry
	n     int64
	first int64
}

// take takes every entry's count, and drops the entries nobody holds and nothing was counted in.
func (m *Meter) take() []counted {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []counted
	for k, e := range m.keys {
		n := e.n.Swap(0)
		if n == 0 {
			if e.refs == 0 {
				delete(m.keys, k)
			}
			continue
		}
		first := e.first.Swap(0)
		if first == 0 {
			first = time.Now().UnixNano() // counted between the two swaps of the last flush
		}
		out = append(out, counted{e, n, first})
	}
	return out
}

// Flush publishes what was counted; a failed publish is kept for the next flush.
func (m *Meter) Flush(ctx context.Context) {
	cs := m.take()
	if len(cs) == 0 {
		return
	}
	evs := make([]eventbus.Event, 0, len(cs))
	for _, c := range cs {
		id := c.e.id
		evs = append(evs, eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: id.KeyID, ID: uuid.Must(uuid.NewV7()).String(),
			Msg: &eventsv1.UsageCall{KeyId: id.KeyID, UserId: id.UserID, OrgId: id.OrgID, Route: c.e.route, Method: "GET",
				Status: 101, Credits: c.n, Rows: c.n, TimeMs: time.Unix(0, c.first).UnixMilli(), Unit: "row", Tier: id.Tier}})
	}
	err := m.pub.Publish(ctx, evs...)
	if err == nil && m.charged != nil {
		ids := make([]Identity, len(cs))
		for i, c := range cs {
			ids[i] = c.e.id
		}
		m.charged(ctx, ids)
	}
	if err != nil {
		m.log.Warn("publishing stream usage failed; kept for the next flush", "keys", len(cs), "error", err)
		m.mu.Lock()
		for _, c := range cs {
			// Into the key's entry: the one taken from, or, when that was dropped meanwhile,
			// the one made since.
			k := c.e.id.KeyID + " " + c.e.route
			e := m.keys[k]
			if e == nil {
				e = c.e
				m.keys[k] = e
			}
			e.n.Add(c.n)
			if f := e.first.Load(); f == 0 || c.first < f {
				e.first.Store(c.first)
			}
		}
		m.mu.Unlock()
	}
}
