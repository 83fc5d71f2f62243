// Package metering turns calls into credits: the bounded batching producer of usage events, the
// credit ledger that answers "how much has this org or user used this period" at request time,
// and the consumer that aggregates usage events into rollups and billing periods.
package metering

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Publisher writes events (eventbus.Publisher).
type Publisher interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// ProducerOptions tune a Producer.
type ProducerOptions struct {
	Queue   int // events waiting to be published; beyond, Record drops (default 65536)
	Batch   int // most events per publish (default 1000)
	Workers int // concurrent publishes (default 2)
	// Backoff is the first wait after a failed publish, doubled per failure up to MaxBackoff
	// (defaults 100 ms and 5 s).
	Backoff, MaxBackoff time.Duration
	Log                 *slog.Logger
	Meter               metric.MeterProvider
	// Sent, when set, is told which events were published (the consumer will count them) and
	// which are lost (dropped: queue full, refused for good, or left when the shutdown drain
	// ended), so the credit ledger (CreditLedger.Sent) keeps a call until its event is counted
	// and forgets one that never will be.
	Sent func(published, lost []eventbus.Event)
	// Unconfirmed, when set, is told of the events a publish failed on, to be retried: it may
	// have written some of them, which the consumer then counts though they are not reported
	// published (CreditLedger.Unconfirmed asks the durable ledger about them).
	Unconfirmed func(events []eventbus.Event)
}

// Producer publishes one usage event per call without ever blocking the caller: Record puts the
// event in a bounded queue and workers publish it in batches. A batch that fails is retried,
// unchanged (same event ids: the consumer de-duplicates by id, so a partly written batch is
// counted once), until it is published or shutdown's bounded drain ends; while the broker
// refuses, the queue fills, and only when it is full (the memory bound) is an event dropped and
// counted (edge_usage_events_dropped_total). An event the broker can never accept (a record too
// large, an invalid record or topic: see unpublishable) is not retried, which would stop its
// worker for good: it is logged and counted (edge_usage_events_failed_total).
type Producer struct {
	pub   Publisher
	o     ProducerOptions
	queue chan eventbus.Event

	mu sync.Mutex
	// held are the batches workers were retrying when Run's context ended; the drain publishes
	// them first.
	held [][]eventbus.Event

	published metric.Int64Counter
	dropped   metric.Int64Counter
	failed    metric.Int64Counter
	retries   metric.Int64Counter
}

// NewProducer returns a producer over pub; Run publishes.
func NewProducer(pub Publisher, o ProducerOptions) *Producer {
	if o.Queue <= 0 {
		o.Queue = 65536
	}
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.MaxBackoff < o.Backoff {
		o.MaxBackoff = max(o.Backoff, 5*time.Second)
	}
	mp := o.Meter
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("chainintel/edge/metering")
	p := &Producer{pub: pub, o: o, queue: make(chan eventbus.Event, o.Queue)}
	p.published, _ = m.Int64Counter("edge_usage_events_published_total", metric.WithDescription("usage events published"))
	p.dropped, _ = m.Int64Counter("edge_usage_events_dropped_total", metric.WithDescription("usage events dropped because the queue was full"))
	p.failed, _ = m.Int64Counter("edge_usage_events_failed_total", metric.WithDescription("usage events not published: shutdown's drain ended (broker unavailable), or the broker refuses them for good (a record too large, an invalid record or topic)"))
	p.retries, _ = m.Int64Counter("edge_usage_publish_retries_total", metric.WithDescription("failed publishes of usage event batches, each retried with the same events"))
	_, _ = m.Int64ObservableGauge("edge_usage_events_queued", metric.WithDescription("usage events waiting in the producer's queue"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(len(p.queue)))
			return nil
		}))
	// Counters start at zero so rate() and alerts see them before the first event.
	ctx := context.Background()
	p.dropped.Add(ctx, 0)
	p.failed.Add(ctx, 0)
	p.retries.Add(ctx, 0)
	return p
}

// Record queues one usage event with id (a new UUIDv7 when empty: the id is fixed here, so every
// retry of the event carries the same one); it never blocks and reports whether it was queued.
func (p *Producer) Record(id string, call *eventsv1.UsageCall) bool {
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	select {
	case p.queue <- eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: call.GetKeyId(), Msg: call, ID: id}:
		return true
	default:
		p.dropped.Add(context.Background(), 1)
		p.sent(nil, []eventbus.Event{{Topic: eventsv1.TopicUsageCalls, Key: call.GetKeyId(), Msg: call, ID: id}})
		return false
	}
}

// Run publishes queued events until ctx ends, then publishes the batches being retried and what
// is still queued (within 10s).
func (p *Producer) Run(ctx context.Context) error {
	done := make(chan struct{})
	for range p.o.Workers {
		go func() {
			defer func() { done <- struct{}{} }()
			p.work(ctx)
		}()
	}
	for range p.o.Workers {
		<-done
	}
	// Drain: requests finished before the HTTP server stopped must still be metered.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	p.drain(dctx)
	return nil
}

// drain publishes the held batches, then the queue, until both are empty or ctx ends; what is
// left then is lost and counted (edge_usage_events_failed_total).
func (p *Producer) drain(ctx context.Context) {
	for {
		p.mu.Lock()
		var batch []eventbus.Event
		if n := len(p.held); n > 0 {
			batch, p.held = p.held[n-1], p.held[:n-1]
		}
		p.mu.Unlock()
		if batch == nil {
			batch = p.take(nil)
		}
		if len(batch) == 0 {
			return
		}
		if left := p.publish(ctx, batch); left != nil {
			lost := len(left) + len(p.queue)
			p.mu.Lock()
			for _, b := range p.held {
				lost += len(b)
			}
			p.mu.Unlock()
			p.failed.Add(context.Background(), int64(lost))
			p.sentLeft(left)
			p.o.Log.Error("usage events lost: not published when the shutdown drain ended; those calls are not charged", "events", lost)
			return
		}
	}
}

func (p *Producer) work(ctx context.Context) {
	batch := make([]eventbus.Event, 0, p.o.Batch)
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-p.queue:
			batch = p.take(append(batch[:0], e))
			if left := p.publish(ctx, batch); left != nil {
				p.mu.Lock()
				p.held = append(p.held, slices.Clone(left))
				p.mu.Unlock()
				return
			}
		}
	}
}

// take adds whatever is queued to batch, up to Batch events, without waiting.
func (p *Producer) take(batch []eventbus.Event) []eventbus.Event {
	for len(batch) < p.o.Batch {
		select {
		case e := <-p.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// publish publishes batch, retrying what is not published with backoff until all of it is
// published or dropped as unpublishable (nil), or ctx ends (what is left, not empty). A usage
// event is a charge: a broker outage must not lose it, and retrying the same event ids lets the
// consumer count a partly written batch once. An event the broker refuses for good (too large,
// invalid: eventbus.Permanent) is singled out by eventbus.Isolate and dropped, counted as failed,
// so it does not hold back the events after it.
func (p *Producer) publish(ctx context.Context, batch []eventbus.Event) []eventbus.Event {
	backoff := p.o.Backoff
	for {
		refused, done, err := eventbus.Isolate(ctx, p.pub, batch)
		if sent := done - len(refused); sent > 0 {
			p.published.Add(context.Background(), int64(sent))
		}
		p.sentBatch(batch[:done], refused)
		if len(refused) > 0 {
			p.failed.Add(context.Background(), int64(len(refused)))
			p.o.Log.Error("usage events dropped: the broker refuses them for good; those calls are not charged",
				"events", len(refused), "error", refused[0].Err)
		}
		if err == nil {
			return nil
		}
		batch = batch[done:]
		if p.o.Unconfirmed != nil {
			p.o.Unconfirmed(batch)
		}
		p.retries.Add(context.Background(), 1)
		p.o.Log.Warn("publishing usage events failed; retrying the same events", "events", len(batch), "error", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return batch
		case <-t.C:
		}
		backoff = min(2*backoff, p.o.MaxBackoff)
	}
}

func (p *Producer) sent(published, lost []eventbus.Event) {
	if p.o.Sent != nil && (len(published) > 0 || len(lost) > 0) {
		p.o.Sent(published, lost)
	}
}

// sentBatch reports the events Isolate went through: those refused (by index) are lost, the
// rest published. Without refusals (the usual case) the batch is passed as is.
func (p *Producer) sentBatch(done []eventbus.Event, refused []eventbus.Refused) {
	if p.o.Sent == nil || len(done) == 0 {
		return
	}
	if len(refused) == 0 {
		p.sent(done, nil)
		return
	}
	lost := make([]eventbus.Event, 0, len(refused))
	published := make([]eventbus.Event, 0, len(done)-len(refused))
	r := 0
	for i, e := range done {
		if r < len(refused) && refused[r].Index == i {
			lost = append(lost, e)
			r++
			continue
		}
		published = append(published, e)
	}
	p.sent(published, lost)
}

// sentLeft reports as lost the events the shutdown drain did not publish: left, the held
// batches and the queue (which it empties).
func (p *Producer) sentLeft(left []eventbus.Event) {
	p.sent(nil, left)
	p.mu.Lock()
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, b := range held {
		p.sent(nil, b)
	}
	for b := p.take(nil); len(b) > 0; b = p.take(nil) {
		p.sent(nil, b)
	}
}

// Pending is the number of queued events (for tests and metrics).
func (p *Producer) Pending() int { return len(p.queue) }
