package indexer

import (
	"context"
	"log/slog"
	"testing"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A new indexer exports its counters at 0 under its chain before any block, so increase() in
// ChainintelIngestReorgs sees a chain's first reorg (a series born at 1 shows no increase).
func TestCountersStartAtZero(t *testing.T) {
	c, _ := chains.Lookup("ethereum")
	rd := sdkmetric.NewManualReader()
	New(Config{Chain: c, Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(rd)).Meter("t")}, nil, nil, market.New(), nil,
		slog.New(slog.DiscardHandler))
	var rm metricdata.ResourceMetrics
	if err := rd.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok || len(s.DataPoints) != 1 {
				continue
			}
			dp := s.DataPoints[0]
			if ch, _ := dp.Attributes.Value("chain"); ch.AsString() == "ethereum" && dp.Value == 0 {
				got[m.Name] = true
			}
		}
	}
	for _, name := range []string{"ingest_reorgs_total", "ingest_blocks_total", "ingest_events_total", "ingest_transfers_total", "ingest_transfers_unpriced_total"} {
		if !got[name] {
			t.Errorf("%s{chain=ethereum} not exported at 0", name)
		}
	}
}
