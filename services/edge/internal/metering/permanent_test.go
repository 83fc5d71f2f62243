package metering_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/segmentio/kafka-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// permanentPub refuses for good the events it cannot take: a batch holding a big one with
// kafka-go's MessageTooLargeError naming that record (nothing written), an invalid one with a
// per-record broker error (the batch's others written), and every batch with a broker error
// for the whole batch when all is set.
type permanentPub struct {
	mu       sync.Mutex
	big      map[string]bool
	invalid  map[string]bool
	all      error
	calls    int
	accepted map[string]bool
}

func (p *permanentPub) Publish(_ context.Context, evs ...eventbus.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.all != nil {
		return fmt.Errorf("publish %d events: %w", len(evs), p.all)
	}
	for _, e := range evs {
		if p.big[e.ID] {
			return fmt.Errorf("publish %d events: %w", len(evs), kafka.MessageTooLargeError{
				Message: kafka.Message{Headers: []kafka.Header{{Key: eventbus.HeaderEventID, Value: []byte(e.ID)}}}})
		}
	}
	werr := make(kafka.WriteErrors, len(evs))
	for i, e := range evs {
		if p.invalid[e.ID] {
			werr[i] = kafka.InvalidRecord
		} else {
			p.accepted[e.ID] = true
		}
	}
	if werr.Count() > 0 {
		return fmt.Errorf("publish %d events (%d failed): %w", len(evs), werr.Count(), werr)
	}
	return nil
}

func (p *permanentPub) state() (calls int, accepted map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]bool, len(p.accepted))
	for k := range p.accepted {
		out[k] = true
	}
	return p.calls, out
}

// failedTotal is edge_usage_events_failed_total as r reads it.
func failedTotal(t *testing.T, r *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "edge_usage_events_failed_total" {
				var n int64
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
				}
				return n
			}
		}
	}
	return 0
}

// Events the broker refuses for good (a record too large, an invalid record) are counted as
// failed and not retried; the other events of their batches and those recorded after them are
// published (the worker is not held by a batch that can never go). A batch refused for good as
// a whole is counted and not retried either.
func TestProducerDropsUnpublishableEvents(t *testing.T) {
	pub := &permanentPub{big: map[string]bool{"call-3": true}, invalid: map[string]bool{"call-7": true}, accepted: map[string]bool{}}
	reader := sdkmetric.NewManualReader()
	p := metering.NewProducer(pub, metering.ProducerOptions{Batch: 4, Workers: 1,
		Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	const calls = 40
	for i := 0; i < calls; i++ {
		if !p.Record(fmt.Sprintf("call-%d", i), &eventsv1.UsageCall{KeyId: "k"}) {
			t.Fatal("dropped with room in the queue")
		}
	}
	waitFor(t, "the publishable events published", func() bool {
		_, got := pub.state()
		return len(got) >= calls-2
	})
	_, got := pub.state()
	if got["call-3"] || got["call-7"] {
		t.Fatalf("an unpublishable event was published: %v", got)
	}
	if f := failedTotal(t, reader); f != 2 {
		t.Fatalf("edge_usage_events_failed_total %d, want 2 (call-3 and call-7)", f)
	}
	cancel()
	<-done

	whole := &permanentPub{all: kafka.InvalidTopic, accepted: map[string]bool{}}
	reader = sdkmetric.NewManualReader()
	p = metering.NewProducer(whole, metering.ProducerOptions{Batch: 1, Workers: 1,
		Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	for i := 0; i < 3; i++ {
		p.Record(fmt.Sprintf("whole-%d", i), &eventsv1.UsageCall{KeyId: "k"})
	}
	waitFor(t, "the refused events counted", func() bool { return failedTotal(t, reader) >= 3 })
	cancel()
	<-done
	// Each event is published alone three times before it counts as refused (eventbus.Isolate).
	if n, _ := whole.state(); n != 9 || failedTotal(t, reader) != 3 {
		t.Fatalf("%d publishes and %d failed for 3 events refused for good, want 9 and 3", n, failedTotal(t, reader))
	}
}
