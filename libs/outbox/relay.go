// Package outbox relays a service's transactional outbox to Kafka. The service's store writes
// each event into an outbox table in the same transaction as the change it describes; a Relay
// publishes the rows in order of writing and marks them sent, so an event is published if and
// only if its change committed. Table is the PostgreSQL side, over the service's own queries.
package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/proto"
)

// Event is an outbox row not yet marked sent.
type Event struct {
	ID      int64
	EventID string
	Topic   string
	Key     string
	Payload []byte
}

// Refusal is an outbox row the brokers refuse for good (eventbus.Permanent: larger than the
// topic's max.message.bytes, an invalid topic or record), and their answer.
type Refusal struct {
	ID     int64
	Reason string
}

// PublishFunc publishes claimed rows, in order. It returns the rows the brokers refuse for good,
// to park, when the others were published; an error when not all of them were.
type PublishFunc func(context.Context, []Event) ([]Refusal, error)

// Store is the store side of the relay.
type Store interface {
	// ClaimOutbox hands up to limit unsent rows, oldest first, to publish; when it returns nil
	// it marks them sent, except the refused ones, which it parks (out of the queue, kept with
	// the reason: Table's failed column). It returns how many were sent. Calls of any number of
	// relays must not publish at once, or a key's newer row could reach the topic before its
	// older one.
	ClaimOutbox(ctx context.Context, limit int, publish PublishFunc) (int, error)
	// PruneOutbox deletes rows sent before cutoff and returns how many.
	PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error)
}

// Publisher writes events to Kafka.
type Publisher interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// Messages gives, for each topic the relay publishes, a new message of the topic's type to
// decode a row's payload into. A row of any other topic fails the relay: it is a bug of the
// writer, and publishing it undecoded would hand consumers a record they cannot read.
type Messages map[string]func() proto.Message

// Options tune a Relay.
type Options struct {
	PollInterval time.Duration // how often to look for events without a kick; default 1s
	Retention    time.Duration // how long sent rows are kept; default 24h
	BatchSize    int           // events per publish; default 500
	Logger       *slog.Logger
	// Meter makes the relay's metrics (outbox_published_total, outbox_publish_failures_total,
	// and, of a Store that is a Backlogger, outbox_pending_rows and
	// outbox_oldest_pending_age_seconds), labelled outbox=Name; nil records none.
	Meter metric.Meter
	// Name labels the metrics; default the Store's Name() (a Table's schema.table).
	Name string
	// BacklogInterval is how often the relay reads its Store's backlog; default 15s.
	BacklogInterval time.Duration
}

// Relay publishes outbox events in order of writing. Several replicas may run one each: they
// take turns on the table's relay lock (Table.ClaimOutbox), so each event is published by one of
// them (at least once: a crash between publishing and marking re-publishes with the same event
// id) and the events of a key reach the topic in order of writing. It is safe for concurrent use.
type Relay struct {
	outbox Store
	pub    Publisher
	msgs   Messages
	o      Options
	kick   chan struct{}
	m      *Metrics
	// backlogAt is when Run last read the backlog; only Run's goroutine uses it.
	backlogAt time.Time
}

// NewRelay returns a relay of the topics of msgs; run it with Part.
func NewRelay(outbox Store, pub Publisher, msgs Messages, o Options) *Relay {
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BacklogInterval <= 0 {
		o.BacklogInterval = 15 * time.Second
	}
	if n, ok := outbox.(interface{ Name() string }); ok && o.Name == "" {
		o.Name = n.Name()
	}
	return &Relay{outbox: outbox, pub: pub, msgs: msgs, o: o, kick: make(chan struct{}, 1), m: NewMetrics(o.Meter, o.Name)}
}

// Kick makes the relay look for events now. It never blocks.
func (r *Relay) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Part runs the relay as a lifecycle part. On stop it makes one last pass so events of
// requests that finished are not left for the next start.
func (r *Relay) Part() lifecycle.Part {
	return lifecycle.Part{Name: "outbox relay", Run: r.Run}
}

// Run relays until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	poll := time.NewTicker(r.o.PollInterval)
	defer poll.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	failures := 0
	for {
		// Read on every pass, failing ones included (they come at least every 5s): a relay
		// that cannot publish is what the backlog gauges are for.
		if time.Since(r.backlogAt) >= r.o.BacklogInterval {
			r.backlogAt = time.Now()
			r.ObserveBacklog(ctx)
		}
		if err := r.Drain(ctx); err != nil && ctx.Err() == nil {
			failures++
			r.o.Logger.WarnContext(ctx, "outbox relay failed; retrying", "error", err, "attempt", failures)
			select {
			case <-ctx.Done():
			case <-time.After(min(time.Duration(failures)*200*time.Millisecond, 5*time.Second)):
			}
			continue
		}
		failures = 0
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := r.Drain(fctx)
			cancel()
			if err != nil {
				r.o.Logger.Warn("outbox relay: last pass failed; events stay in the outbox for the next start", "error", err)
			}
			return nil
		case <-r.kick:
		case <-poll.C:
		case <-prune.C:
			r.prune(ctx)
		}
	}
}

func (r *Relay) prune(ctx context.Context) {
	if n, err := r.outbox.PruneOutbox(ctx, time.Now().Add(-r.o.Retention)); err != nil {
		r.o.Logger.WarnContext(ctx, "outbox prune failed", "error", err)
	} else if n > 0 {
		r.o.Logger.DebugContext(ctx, "outbox pruned", "rows", n)
	}
}

// ObserveBacklog records the Store's backlog in the gauges, when it is a Backlogger; a failed
// read is logged and leaves the gauges as they were.
func (r *Relay) ObserveBacklog(ctx context.Context) {
	bl, ok := r.outbox.(Backlogger)
	if !ok {
		return
	}
	b, err := bl.Backlog(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.o.Logger.WarnContext(ctx, "outbox backlog read failed", "error", err)
		}
		return
	}
	r.m.Backlog(ctx, b)
}

// Drain publishes every pending event and returns once none is left (or on the first error,
// which counts in outbox_publish_failures_total unless ctx ended). Rows the brokers refuse for
// good are parked, logged and counted in outbox_parked_total, and the rows after them flow.
func (r *Relay) Drain(ctx context.Context) error {
	for {
		var parked []Refusal
		n, err := r.outbox.ClaimOutbox(ctx, r.o.BatchSize, func(ctx context.Context, evs []Event) ([]Refusal, error) {
			var err error
			parked, err = r.publish(ctx, evs)
			return parked, err
		})
		r.m.Published(ctx, n)
		if err != nil {
			if ctx.Err() == nil {
				r.m.Failed(ctx)
			}
			return err
		}
		// Counted once the claim committed: a claim that failed after publishing parks nothing.
		r.m.Parked(ctx, len(parked))
		for _, p := range parked {
			r.o.Logger.ErrorContext(ctx, "outbox row parked: the brokers refuse it for good; the rows after it are published",
				"outbox", r.o.Name, "row", p.ID, "error", p.Reason)
		}
		if n+len(parked) < r.o.BatchSize {
			return nil
		}
	}
}

func (r *Relay) publish(ctx context.Context, evs []Event) ([]Refusal, error) {
	out := make([]eventbus.Event, len(evs))
	for i, e := range evs {
		newMsg, ok := r.msgs[e.Topic]
		if !ok {
			return nil, fmt.Errorf("outbox row %d has topic %q; only %s relayed", e.ID, e.Topic, r.topics())
		}
		m := newMsg()
		if err := proto.Unmarshal(e.Payload, m); err != nil {
			return nil, fmt.Errorf("outbox row %d: decode: %w", e.ID, err)
		}
		out[i] = eventbus.Event{Topic: e.Topic, Key: e.Key, Msg: m, ID: e.EventID}
	}
	// A row the brokers refuse for good is parked (eventbus.Isolate singles it out, the rows
	// before and after it published in order); any other failure fails the claim, retried.
	refused, _, err := eventbus.Isolate(ctx, r.pub, out)
	if err != nil {
		return nil, err
	}
	parked := make([]Refusal, len(refused))
	for i, x := range refused {
		parked[i] = Refusal{ID: evs[x.Index].ID, Reason: x.Err.Error()}
	}
	return parked, nil
}

// topics names the relayed topics for an error message: "a is", "a and b are".
func (r *Relay) topics() string {
	ts := make([]string, 0, len(r.msgs))
	for t := range r.msgs {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	switch len(ts) {
	case 0:
		return "no topic is"
	case 1:
		return ts[0] + " is"
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " and " + ts[len(ts)-1] + " are"
}
