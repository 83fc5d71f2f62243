package publish

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/segmentio/kafka-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"google.golang.org/protobuf/proto"
)

func TestEvent(t *testing.T) {
	r := store.AttributionRow{Address: attribution.Address{ChainType: "evm", Address: "0xab", EntityID: "acme", Label: "Hot", Version: 7},
		Entity: &attribution.Entity{ID: "acme", Name: "Acme", Type: "cex", LinkedIn: "https://linkedin.example/acme"}, UpdatedAtMs: 1000}
	ev := Event(r)
	want := &eventsv1.Attribution{ChainType: "evm", Address: "0xab", Entity: &eventsv1.Entity{Id: "acme", Name: "Acme", Type: "cex", Linkedin: "https://linkedin.example/acme"},
		Label: "Hot", UpdatedAtMs: 1000, Version: 7}
	if ev.Topic != eventsv1.TopicAttributions || ev.Key != "evm:0xab" || ev.ID != "evm:0xab@7" || !proto.Equal(ev.Msg, want) {
		t.Fatalf("event %+v", ev)
	}
	// Nothing known any more: a tombstone.
	empty := Event(store.AttributionRow{Address: attribution.Address{ChainType: "evm", Address: "0xab", Version: 8}})
	if empty.Msg != nil || empty.Key != "evm:0xab" || empty.ID != "evm:0xab@8" {
		t.Fatalf("tombstone %+v", empty)
	}
}

// pendingRows is a Source holding rows pending once: PublishPending hands them over and, when
// publish succeeds, they are gone (the cursor moved past them).
type pendingRows struct {
	rows []store.AttributionRow
}

func (p *pendingRows) PublishPending(ctx context.Context, limit int, publish func(context.Context, []store.AttributionRow) error) (int, error) {
	if len(p.rows) == 0 {
		return 0, nil
	}
	if err := publish(ctx, p.rows); err != nil {
		return 0, err
	}
	n := len(p.rows)
	p.rows = nil
	return n, nil
}

func (p *pendingRows) RepublishPage(context.Context, string, string, int, func(context.Context, []store.AttributionRow) error) ([]store.AttributionRow, error) {
	return nil, nil
}

// refusingBus refuses for good any publish holding the event with key bad, as a broker refuses
// a whole batch holding a record over its size limit, and records what it accepted.
type refusingBus struct {
	bad      string
	accepted []string
}

func (b *refusingBus) Publish(_ context.Context, evs ...eventbus.Event) error {
	for _, ev := range evs {
		if ev.Key == b.bad {
			return kafka.MessageSizeTooLarge
		}
	}
	for _, ev := range evs {
		b.accepted = append(b.accepted, ev.Key)
	}
	return nil
}

// An attribution the brokers refuse for good is skipped, logged and counted; the changes after it
// are published and the cursor moves on, instead of every round failing on it.
func TestRelaySkipsAnAttributionRefusedForGood(t *testing.T) {
	var rows []store.AttributionRow
	for i, a := range []string{"0x01", "0x02", "0x03", "0x04"} {
		rows = append(rows, store.AttributionRow{Address: attribution.Address{ChainType: "evm", Address: a, Label: "x", Version: int64(i + 1)}})
	}
	src := &pendingRows{rows: rows}
	bus := &refusingBus{bad: "evm:0x02"}
	reader := sdkmetric.NewManualReader()
	m := outbox.NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"), OutboxName)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Relay(ctx, src, bus, time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for parked(t, reader) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got, want := strings.Join(bus.accepted, ","), "evm:0x01,evm:0x03,evm:0x04"; got != want {
		t.Fatalf("published %s, want %s", got, want)
	}
	if n := parked(t, reader); n != 1 {
		t.Fatalf("outbox_parked_total %d, want 1", n)
	}
}

func parked(t *testing.T, reader *sdkmetric.ManualReader) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if sum, ok := mt.Data.(metricdata.Sum[int64]); ok && mt.Name == "outbox_parked_total" {
				var n int64
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
				return n
			}
		}
	}
	return 0
}
