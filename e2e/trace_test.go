package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// An event published through the real broker reaches consumers in other services with its trace
// context intact: their processing spans carry the publisher's trace id, as their own when the
// event is first in its batch, else as a link.
func TestEventTraceCrossesServices(t *testing.T) {
	p := Get(t)
	if p.Spans == nil {
		t.Skip("traces are only collected when the suite starts the stack itself")
	}
	if len(p.Brokers) == 0 {
		t.Skip("Kafka is not reachable from the test")
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("e2e").Start(context.Background(), "e2e publish")
	traceID := span.SpanContext().TraceID()

	// A harmless transfer on a chain nobody queries in other tests.
	now := time.Now()
	tx := fmt.Sprintf("0x%064x", now.UnixNano())
	ev := &eventsv1.Transfer{
		Id: tx + "_ext", Chain: "base", TransactionHash: tx, BlockHash: fmt.Sprintf("0x%064x", now.UnixNano()+1),
		BlockNumber: 1, BlockTimeMs: now.UnixMilli(), From: "0x00000000000000000000000000000000000000e1",
		To: "0x00000000000000000000000000000000000000e2", Amount: "1", TokenSymbol: "ETH", TokenDecimals: 18,
		Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL,
	}
	pub := eventbus.NewPublisher(p.Brokers, eventbus.PublisherOptions{TracerProvider: tp, Propagator: propagation.TraceContext{},
		Security: p.KafkaSecurity})
	defer pub.Close()
	if err := pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey("base", tx), Msg: ev}); err != nil {
		t.Fatal(err)
	}
	span.End()

	Eventually(t, 30*time.Second, func() error {
		var consumers []string
		for _, s := range p.Spans.Spans() {
			if s.InTrace(traceID) && s.Name == "process "+eventsv1.TopicTransfers {
				consumers = append(consumers, s.Service)
			}
		}
		if len(consumers) == 0 {
			return fmt.Errorf("no service exported a span for trace %s yet", traceID)
		}
		t.Logf("services that processed the event in its trace: %v", consumers)
		return nil
	})
}
