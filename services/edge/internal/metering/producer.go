// Package metering turns calls into credits: the bounded batching producer of usage events, the
// credit ledger that answers "how much has this org or user used this period" at request time,
// and the consumer that aggregates usage events into rollups and billing periods.
package metering

import (
	"context"
	"log/slog"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
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
	Log     *slog.Logger
	Meter   metric.MeterProvider
}

// Producer publishes one usage event per call without ever blocking the caller: Record puts the
// event in a bounded queue, workers publish it in batches, and when the queue is full the event
// is dropped and counted (edge_usage_events_dropped_total).
type Producer struct {
	pub   Publisher
	o     ProducerOptions
	queue chan eventbus.Event

	published metric.Int64Counter
	dropped   metric.Int64Counter
	failed    metric.Int64Counter
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
	mp := o.Meter
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("chainintel/edge/metering")
	p := &Producer{pub: pub, o: o, queue: make(chan eventbus.Event, o.Queue)}
	p.published, _ = m.Int64Counter("edge_usage_events_published_total", metric.WithDescription("usage events published"))
	p.dropped, _ = m.Int64Counter("edge_usage_events_dropped_total", metric.WithDescription("usage events dropped because the queue was full"))
	p.failed, _ = m.Int64Counter("edge_usage_events_failed_total", metric.WithDescription("usage events dropped because publishing failed"))
	return p
}

// Record queues one usage event with id; it never blocks and reports whether it was queued.
func (p *Producer) Record(id string, call *eventsv1.UsageCall) bool {
	select {
	case p.queue <- eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: call.GetKeyId(), Msg: call, ID: id}:
		return true
	default:
		p.dropped.Add(context.Background(), 1)
		return false
	}
}

// Run publishes queued events until ctx ends, then publishes what is still queued (within 10s).
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
	for {
		batch := p.take(nil)
		if len(batch) == 0 {
			return nil
		}
		p.publish(dctx, batch)
		if dctx.Err() != nil {
			return nil
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
			p.publish(ctx, batch)
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

// publish tries a batch a few times; events that still fail are dropped and counted (they are
// usage records, not data: a stalled broker must not stall the edge).
func (p *Producer) publish(ctx context.Context, batch []eventbus.Event) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := p.pub.Publish(context.WithoutCancel(ctx), batch...)
		if err == nil {
			p.published.Add(ctx, int64(len(batch)))
			return
		}
		if attempt == 3 {
			p.failed.Add(ctx, int64(len(batch)))
			p.o.Log.Error("usage events dropped: publishing failed", "events", len(batch), "error", err)
			return
		}
		p.o.Log.Warn("publishing usage events failed; retrying", "events", len(batch), "error", err)
		time.Sleep(backoff)
		backoff *= 4
	}
}

// Pending is the number of queued events (for tests and metrics).
func (p *Producer) Pending() int { return len(p.queue) }
