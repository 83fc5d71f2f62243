package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestReporterRateETAAndGauges(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var logs bytes.Buffer
	r := New(Options{Job: "ingest", Unit: "blocks", Attrs: []attribute.KeyValue{attribute.String("chain", "ethereum")},
		Log: slog.New(slog.NewJSONHandler(&logs, nil)), Meter: mp.Meter("t")})
	clock := time.Unix(1_700_000_000, 0)
	r.now = func() time.Time { return clock }
	ctx := context.Background()

	r.SetTotal(1000)
	r.Set(100)
	s := r.Tick(ctx)
	if s.Rate != 0 || s.ETA >= 0 || s.Remaining != 900 {
		t.Fatalf("first tick: %+v", s)
	}
	clock = clock.Add(10 * time.Second)
	r.Set(300) // 20 blocks/s this interval
	r.Count("transfers", 500)
	s = r.Tick(ctx)
	if s.Rate != 10 || s.Remaining != 700 || s.ETA != 70*time.Second || s.Rates["transfers"] != 25 {
		t.Fatalf("second tick: %+v", s)
	}
	clock = clock.Add(10 * time.Second)
	r.Set(1000)
	s = r.Tick(ctx)
	if s.Remaining != 0 || s.ETA != 0 || s.Rate != 40 {
		t.Fatalf("third tick: %+v", s)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"progress_done": 1000, "progress_total": 1000, "progress_remaining": 0, "progress_rate": 40, "progress_eta_seconds": 0}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			g := m.Data.(metricdata.Gauge[float64])
			for _, p := range g.DataPoints {
				if v, _ := p.Attributes.Value("chain"); v.AsString() != "ethereum" {
					t.Fatalf("%s lacks chain attribute: %v", m.Name, p.Attributes)
				}
				got[m.Name] = p.Value
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}

	lines := bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("want 3 log lines, got %d:\n%s", len(lines), logs.String())
	}
	var second map[string]any
	if err := json.Unmarshal(lines[1], &second); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"task": "ingest", "chain": "ethereum", "done": 300.0, "total": 1000.0, "remaining": 700.0,
		"per_second": 10.0, "eta": "1m10s", "transfers_per_second": 25.0} {
		if second[k] != v {
			t.Errorf("log %s = %v, want %v (%s)", k, second[k], v, lines[1])
		}
	}
}

func TestStartStopWritesFinalLine(t *testing.T) {
	var logs bytes.Buffer
	r := New(Options{Job: "import", Unit: "records", Interval: time.Hour, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	stop := r.Start(context.Background())
	r.SetTotal(5)
	r.Add(2)
	r.Add(3)
	stop()
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil {
		t.Fatalf("one final line expected: %v\n%s", err, logs.String())
	}
	if line["done"] != 5.0 || line["remaining"] != 0.0 || line["eta"] != "0s" {
		t.Fatalf("final line: %v", line)
	}
}

func TestIdleTicksWriteNoLine(t *testing.T) {
	var logs bytes.Buffer
	r := New(Options{Job: "queue", Unit: "rows", Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx := context.Background()
	r.Tick(ctx) // first tick: a line
	r.Tick(ctx) // nothing done, nothing left: none
	r.SetTotal(3)
	r.Tick(ctx) // work left: a line
	r.Set(3)
	r.Tick(ctx) // work done: a line
	r.Tick(ctx) // idle again: none
	if n := bytes.Count(logs.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("%d lines, want 3:\n%s", n, logs.String())
	}
}
