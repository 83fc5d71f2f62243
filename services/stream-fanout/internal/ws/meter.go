package ws

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/metric"
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

// Meter sums charged transfers per key and publishes them on usage.calls.v1 as the edge's
// metering does for calls: one UsageCall per key, route, hour of delivery and flush, one credit
// per transfer, unit "row".
// Connections add what they delivered at each save of their session (charge), the alerts what their
// webhooks took (Add).
type Meter struct {
	pub   Publisher
	every time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	keys map[string]*meterEntry // key id and route → count

	// flushMu serialises flushes. pending is the batch the last publish failed on, retried
	// unchanged; npending its length, for the metric.
	flushMu  sync.Mutex
	pending  []eventbus.Event
	npending atomic.Int64
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

// acquire returns id's entry on route for the hour at is in, held until release: a flush keeps
// it while held.
func (m *Meter) acquire(id Identity, route string, at time.Time) *meterEntry {
	// The org and tier are part of the entry's key: an entry keeps the identity it was made with
	// while counts keep coming, and an alert's payer (or a key's tier) may change meanwhile. The
	// hour is too: a usage event is dated by its entry's first delivery, so counts of two hours
	// (of two billing periods) added between flushes go out as an event each.
	k := id.KeyID + " " + id.OrgID + " " + id.Tier + " " + route + " " + strconv.FormatInt(at.Unix()/3600, 10)
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

// Run publishes every period until ctx ends, then flushes until everything is published or a
// bounded wait ends.
func (m *Meter) Run(ctx context.Context) error {
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			m.finalFlush(fctx)
			cancel()
			return nil
		case <-t.C:
			_ = m.Flush(ctx)
		}
	}
}

// finalFlush retries Flush, backing off, until it publishes everything or ctx ends; what is
// left then is lost, and logged with its credits.
func (m *Meter) finalFlush(ctx context.Context) {
	wait := 100 * time.Millisecond
	for {
		err := m.Flush(ctx)
		if err == nil && m.Pending() == 0 {
			return
		}
		select {
		case <-ctx.Done():
			m.logLost()
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// logLost logs the credits not published at shutdown.
func (m *Meter) logLost() {
	m.flushMu.Lock()
	var credits int64
	for _, e := range m.pending {
		credits += e.Msg.(*eventsv1.UsageCall).GetCredits()
	}
	m.flushMu.Unlock()
	m.mu.Lock()
	for _, e := range m.keys {
		credits += e.n.Load()
	}
	m.mu.Unlock()
	m.log.Error("stream usage not published at shutdown; these deliveries are not charged", "credits", credits)
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

// Flush publishes the batch a publish failed on, if any, as it is, and then what was counted
// since. A failed batch is kept with its event ids and contents and retried by the next flush
// before anything new is taken: a failed Publish may have written some of its events, and the
// edge de-duplicates usage events by event id only, so re-counting them under new ids would
// charge twice. While a batch waits, new deliveries keep counting in their entries (no memory
// grows with the outage); they go into a later batch with ids of their own.
func (m *Meter) Flush(ctx context.Context) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	if len(m.pending) > 0 {
		if err := m.publishPending(ctx); err != nil {
			return err
		}
	}
	cs := m.take()
	if len(cs) == 0 {
		return nil
	}
	m.pending = make([]eventbus.Event, 0, len(cs))
	for _, c := range cs {
		id := c.e.id
		m.pending = append(m.pending, eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: id.KeyID, ID: uuid.Must(uuid.NewV7()).String(),
			Msg: &eventsv1.UsageCall{KeyId: id.KeyID, UserId: id.UserID, OrgId: id.OrgID, Route: c.e.route, Method: "GET",
				Status: 101, Credits: c.n, Rows: c.n, TimeMs: time.Unix(0, c.first).UnixMilli(), Unit: "row", Tier: id.Tier}})
	}
	m.npending.Store(int64(len(m.pending)))
	return m.publishPending(ctx)
}

// publishPending publishes the pending batch; on success it is forgotten, on failure it is kept
// unchanged for the next attempt.
func (m *Meter) publishPending(ctx context.Context) error {
	if err := m.pub.Publish(ctx, m.pending...); err != nil {
		m.log.Warn("publishing stream usage failed; the batch is kept and retried with the same event ids",
			"events", len(m.pending), "error", err)
		return err
	}
	m.pending = nil
	m.npending.Store(0)
	return nil
}

// Pending is the number of usage events of a failed batch waiting to be published again.
func (m *Meter) Pending() int64 { return m.npending.Load() }

// Instrument exports Pending as stream_usage_events_pending on mt.
func (m *Meter) Instrument(mt metric.Meter) error {
	_, err := mt.Int64ObservableGauge("stream_usage_events_pending",
		metric.WithDescription("usage events (one per key, route and hour of delivery) of a failed publish, retried with the same event ids; above 0 for long: deliveries are not being charged"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(m.npending.Load())
			return nil
		}))
	return err
}

// Add counts n transfers, the first delivered at at, to id on route: what a session's save
// covered, or what the alerts' webhooks delivered (their owner's identity has no key; the
// caller names one that keeps each alert's count apart).
func (m *Meter) Add(id Identity, route string, n int64, at time.Time) {
	e := m.acquire(id, route, at)
	e.add(n, at)
	m.release(e)
}
