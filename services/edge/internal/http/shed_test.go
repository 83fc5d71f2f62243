package http_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	edgehttp "github.com/chainintel/chainintel/services/edge/internal/http"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A fresh edge exports edge_shed_total at 0 for every service whose calls it can shed (those
// with a route that is not a WebSocket stream), before any call: ChainintelEdgeShedding's rate()
// sees the first 503 only over a series that existed before it.
func TestShedCounterStartsAtZeroPerService(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s := edgehttp.NewShedder(4, time.Millisecond, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("edge"))
	want := map[string]bool{}
	for _, rt := range routes.Table {
		s.Middleware(rt, http.NotFoundHandler())
		if rt.Service != routes.Edge && !rt.WebSocket {
			want[string(rt.Service)] = true
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "edge_shed_total" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				svc, _ := dp.Attributes.Value("upstream")
				got[svc.AsString()] = dp.Value
			}
		}
	}
	if len(want) < 5 {
		t.Fatalf("only %v have routes the edge sheds", want)
	}
	for svc := range want {
		if v, ok := got[svc]; !ok || v != 0 {
			t.Errorf("edge_shed_total{upstream=%q} = %d (exported: %v), want 0", svc, v, ok)
		}
	}
	for svc := range got {
		if !want[svc] {
			t.Errorf("edge_shed_total{upstream=%q} exported, but no call to it is ever shed", svc)
		}
	}
}
