package ws

import (
	"context"
	"log/slog"
	"sync"
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
type Meter struct {
	pub   Publisher
	every time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	keys map[string]*meterEntry // key id and route → count
}

type meterEntry struct {
	id    Identity
	route string
	n     int64
	first time.Time
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

// Add counts n transfers delivered to id on route.
func (m *Meter) Add(id Identity, route string, n int64, at time.Time) {
	m.add(meterKey(id, route), id, route, n, at)
}

// meterKey is the meter's entry for a key and route: a connection makes it once, not per batch.
func meterKey(id Identity, route string) string { return id.KeyID + " " + route }

func (m *Meter) add(k string, id Identity, route string, n int64, at time.Time) {
	m.mu.Lock()
	e := m.keys[k]
	if e == nil {
		e = &meterEntry{id: id, route: route, first: at}
		m.keys[k] = e
	}
	e.n += n
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

// Flush publishes what was counted; a failed publish is kept for the next flush.
func (m *Meter) Flush(ctx context.Context) {
	m.mu.Lock()
	keys := m.keys
	m.keys = map[string]*meterEntry{}
	m.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	evs := make([]eventbus.Event, 0, len(keys))
	for _, e := range keys {
		evs = append(evs, eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: e.id.KeyID, ID: uuid.Must(uuid.NewV7()).String(),
			Msg: &eventsv1.UsageCall{KeyId: e.id.KeyID, UserId: e.id.UserID, OrgId: e.id.OrgID, Route: e.route, Method: "GET",
				Status: 101, Credits: e.n, Rows: e.n, TimeMs: e.first.UnixMilli(), Unit: "row", Tier: e.id.Tier}})
	}
	if err := m.pub.Publish(ctx, evs...); err != nil {
		m.log.Warn("publishing stream usage failed; kept for the next flush", "keys", len(keys), "error", err)
		m.mu.Lock()
		for k, e := range keys {
			if cur := m.keys[k]; cur != nil {
				cur.n += e.n
				if e.first.Before(cur.first) {
					cur.first = e.first
				}
			} else {
				m.keys[k] = e
			}
		}
		m.mu.Unlock()
	}
}
