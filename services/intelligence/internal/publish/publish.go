// Package publish turns attribution changes into intel.attributions.v1 events: an outbox relay
// that follows the store's attribution versions, and the full re-publication for new consumers.
package publish

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/outbox"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// Bus publishes events.
type Bus interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// Source is the store as the relay reads it.
type Source interface {
	PublishPending(ctx context.Context, limit int, publish func(context.Context, []store.AttributionRow) error) (int, error)
	RepublishPage(ctx context.Context, afterType, afterAddr string, limit int, publish func(context.Context, []store.AttributionRow) error) ([]store.AttributionRow, error)
}

// Backlogger is the store as the relay's gauges read it.
type Backlogger interface {
	PublishBacklog(ctx context.Context) (outbox.Backlog, error)
}

// OutboxName labels the relay's metrics: the attribution versions above the publish cursor are
// this service's outbox, exported as libs/outbox relays export theirs (outbox_pending_rows and
// the rest), so the same dashboards and alerts watch it.
const OutboxName = "intel.attributions"

// backlogEvery is how often the relay reads the backlog: more often adds queries, not news.
const backlogEvery = 15 * time.Second

const page = 1000

// Event returns the attribution event of a row: a tombstone when nothing is known of the
// address any more. Its id is "<key>@<version>", so consumers can drop duplicates.
func Event(r store.AttributionRow) eventbus.Event {
	key := eventsv1.AttributionKey(r.ChainType, r.Address.Address)
	ev := eventbus.Event{Topic: eventsv1.TopicAttributions, Key: key, ID: fmt.Sprintf("%s@%d", key, r.Version)}
	if r.Entity == nil && r.Label == "" && r.Predicted == nil && r.DepositServiceID == "" && !r.IsContract && len(r.ClusterIDs) == 0 {
		return ev
	}
	ev.Msg = &eventsv1.Attribution{
		ChainType: r.ChainType, Address: r.Address.Address, Entity: protoEntity(r.Entity), Label: r.Label,
		PredictedEntity: protoEntity(r.Predicted), DepositServiceId: r.DepositServiceID, IsContract: r.IsContract,
		ClusterIds: r.ClusterIDs, UpdatedAtMs: r.UpdatedAtMs, Version: r.Version,
	}
	return ev
}

func protoEntity(e *attribution.Entity) *eventsv1.Entity {
	if e == nil {
		return nil
	}
	out := &eventsv1.Entity{Id: e.ID, Name: e.Name, Type: e.Type, Note: e.Note, Service: e.Service, Website: e.Website, Twitter: e.Twitter, Linkedin: e.LinkedIn,
		Description: e.Description, Version: e.Version}
	for _, t := range e.Tags {
		out.PopulatedTags = append(out.PopulatedTags, &eventsv1.PopulatedTag{Id: t.Tag.ID, Label: t.Tag.PopulatedLabel(t.Params),
			Rank: int32(t.Tag.Rank), TagParams: t.Params, DisablePage: t.Tag.DisablePage, ExcludeEntities: t.Tag.ExcludeEntities, Chain: t.Tag.Chain})
	}
	return out
}

func send(bus Bus) func(context.Context, []store.AttributionRow) error {
	return func(ctx context.Context, rows []store.AttributionRow) error {
		evs := make([]eventbus.Event, len(rows))
		for i, r := range rows {
			evs[i] = Event(r)
		}
		return bus.Publish(ctx, evs...)
	}
}

// Drain publishes every pending change and returns how many it published.
func Drain(ctx context.Context, src Source, bus Bus) (int, error) {
	total := 0
	for {
		n, err := src.PublishPending(ctx, page, send(bus))
		total += n
		if err != nil {
			return total, fmt.Errorf("publish attributions: %w", err)
		}
		if n < page {
			return total, nil
		}
	}
}

// Relay drains pending changes every interval until ctx ends; failures are logged, counted in
// m and retried. The backlog (from src, when it is a Backlogger) is recorded in m every
// backlogEvery, failing rounds included: a relay that cannot publish produces nothing, so
// consumer lag stays 0 and only the backlog shows it.
func Relay(ctx context.Context, src Source, bus Bus, interval time.Duration, log *slog.Logger, m *outbox.Metrics) error {
	bus = isolating{bus: bus, log: log, m: m}
	var backlogAt time.Time
	return lifecycle.Every(ctx, interval, func(ctx context.Context) {
		if time.Since(backlogAt) >= backlogEvery {
			backlogAt = time.Now()
			ObserveBacklog(ctx, src, m, log)
		}
		n, err := Drain(ctx, src, bus)
		m.Published(ctx, n)
		if err != nil && ctx.Err() == nil {
			m.Failed(ctx)
			log.Warn("attribution relay failed; retrying", "error", err)
		} else if n > 0 {
			log.Debug("attributions published", "count", n)
		}
	})
}

// isolating publishes through bus, setting apart the events the brokers refuse for good
// (eventbus.Isolate: too large, invalid), which are logged and counted in outbox_parked_total:
// retried, such an attribution would fail every round and hold back every change after it. The
// publish cursor then moves past it, as libs/outbox relays park a row; the address's next
// version supersedes it on the compacted topic.
type isolating struct {
	bus Bus
	log *slog.Logger
	m   *outbox.Metrics
}

func (b isolating) Publish(ctx context.Context, events ...eventbus.Event) error {
	refused, _, err := eventbus.Isolate(ctx, b.bus, events)
	for _, r := range refused {
		ev := events[r.Index]
		b.log.Error("attribution refused by the brokers for good; skipped", "key", ev.Key, "event", ev.ID, "error", r.Err)
	}
	b.m.Parked(ctx, len(refused))
	return err
}

// ObserveBacklog records src's publish backlog in m, when src is a Backlogger; a failed read is
// logged and leaves the gauges as they were.
func ObserveBacklog(ctx context.Context, src Source, m *outbox.Metrics, log *slog.Logger) {
	bl, ok := src.(Backlogger)
	if !ok {
		return
	}
	b, err := bl.PublishBacklog(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("attribution publish backlog read failed", "error", err)
		}
		return
	}
	m.Backlog(ctx, b)
}

// TagSource is the store as the entity tags refresher uses it.
type TagSource interface {
	RefreshEntityTags(ctx context.Context, limit int) (store.TagsRefresh, error)
}

// tagRound bounds one refresh round: the entities it claims and recomputes (without the version
// lock), then stores in one transaction holding the version lock, which imports wait for.
const tagRound = 100

// RefreshTags recomputes the populated tags of every entity marked dirty, a round of at most
// tagRound entities per transaction, and returns the total of what the rounds did.
func RefreshTags(ctx context.Context, src TagSource) (store.TagsRefresh, error) {
	var total store.TagsRefresh
	for {
		r, err := src.RefreshEntityTags(ctx, tagRound)
		total.Add(r)
		if err != nil {
			return total, fmt.Errorf("refresh entity tags: %w", err)
		}
		if r.Entities < tagRound {
			return total, nil
		}
	}
}

// TagLoop refreshes dirty entities' tags every interval until ctx ends; the relay then
// publishes the addresses the refresh re-versioned. Failures are logged and retried.
func TagLoop(ctx context.Context, src TagSource, interval time.Duration, log *slog.Logger) error {
	return lifecycle.Every(ctx, interval, func(ctx context.Context) {
		if r, err := RefreshTags(ctx, src); err != nil && ctx.Err() == nil {
			log.Warn("entity tags refresh failed; retrying", "error", err)
		} else if r.Entities > 0 {
			log.Debug("entity tags refreshed", "entities", r.Entities, "changed", r.Changed, "republished", r.Republished,
				"remarked", r.Remarked, "failed", r.Failed, "backedOff", r.BackedOff)
		}
	})
}

// Republish publishes the current attribution of every known address, for consumers that build
// their read model from scratch. It returns how many events it published. It may run while
// replicas relay changes: each page is read and published in the relay's turn
// (store.RepublishPage), so a change racing it is still last on the topic.
func Republish(ctx context.Context, src Source, bus Bus) (int, error) {
	total := 0
	var ct, addr string
	for {
		rows, err := src.RepublishPage(ctx, ct, addr, page, send(bus))
		if err != nil {
			return total, fmt.Errorf("republish attributions: %w", err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		total += len(rows)
		last := rows[len(rows)-1]
		ct, addr = last.ChainType, last.Address.Address
	}
}
