package ws

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The instruments record what the hub's hooks tell them, under the names the dashboard reads.
func TestMetricsRecord(t *testing.T) {
	r := sdkmetric.NewManualReader()
	m, err := NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)).Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	m.opened()
	m.opened()
	m.closed()
	m.deliveredN(2)
	b := now.Add(-250 * time.Millisecond)
	m.timed(&engine.Rendered{Broker: b, Fetched: b.Add(10 * time.Millisecond), Matched: b.Add(20 * time.Millisecond)},
		true, b.Add(40*time.Millisecond), b.Add(80*time.Millisecond), now)
	m.timed(&engine.Rendered{Broker: b}, false, now, now, now) // timed, its stages not sampled
	m.timed(&engine.Rendered{}, true, now, now, now)           // no broker time: not timed
	m.timed(nil, true, now, now, now)                          // a control message: not timed
	m.slowDropped(slowQueueFull)
	m.quotaRefused("hourly")
	m.quotaDiscarded(3)
	m.quotaDiscarded(0)
	m.position(kafka.Message{Partition: 3, Offset: 90, HighWaterMark: 100})
	m.position(kafka.Message{Partition: 4, Offset: 7}) // no high-water mark: nothing recorded
	m.savePending(2)
	m.savePending(-1)
	m.saveFailedAs(saveGivenUp)
	m.saveFailedAs(saveGivenUp)
	m.saveFailedAs(saveErr)
	m.replayGap(GapRetention, foundRead)
	m.replayGap(GapRetention, foundRead)
	m.replayGap(GapTopicReset, foundCursor)
	m.feedGap(true)

	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			got[md.Name] = md.Data
		}
	}
	sum := func(name string) int64 {
		s, ok := got[name].(metricdata.Sum[int64])
		if !ok || len(s.DataPoints) == 0 {
			t.Fatalf("%s: %#v", name, got[name])
		}
		var v int64
		for _, dp := range s.DataPoints {
			v += dp.Value
		}
		return v
	}
	for name, want := range map[string]int64{"stream_connections": 1, "stream_transfers_delivered_total": 2,
		"stream_slow_clients_dropped_total": 1, "stream_quota_refusals_total": 1, "stream_session_saves_pending": 1,
		"stream_quota_discarded_total": 3} {
		if v := sum(name); v != want {
			t.Errorf("%s = %d, want %d", name, v, want)
		}
	}
	// Both limit types are exported from the start, at 0 until a refusal, so increase() in
	// an alert sees the first one.
	refused := map[string]int64{}
	for _, dp := range got["stream_quota_refusals_total"].(metricdata.Sum[int64]).DataPoints {
		lt, _ := dp.Attributes.Value("limit_type")
		refused[lt.AsString()] = dp.Value
	}
	if want := map[string]int64{"hourly": 1, "monthly": 0}; !maps.Equal(refused, want) {
		t.Errorf("quota refusals by limit type %v, want %v", refused, want)
	}
	failed := map[string]int64{}
	for _, dp := range got["stream_session_saves_failed_total"].(metricdata.Sum[int64]).DataPoints {
		r, _ := dp.Attributes.Value("reason")
		failed[r.AsString()] = dp.Value
	}
	if len(failed) != 2 || failed["error"] != 1 || failed["redis_failing"] != 2 {
		t.Errorf("sessions not saved by reason: %v; want error 1, redis_failing 2", failed)
	}
	// Every reason (and place found) is exported from the start, at 0 until it happens.
	gaps := map[string]int64{}
	for _, dp := range got["stream_replay_gaps_total"].(metricdata.Sum[int64]).DataPoints {
		r, _ := dp.Attributes.Value("reason")
		f, _ := dp.Attributes.Value("found")
		gaps[r.AsString()+"/"+f.AsString()] = dp.Value
	}
	if want := map[string]int64{"retention/read": 2, "retention/cursor": 0, "topicReset/cursor": 1, "topicReset/read": 0, "catchUpLimit/read": 0}; !maps.Equal(gaps, want) {
		t.Errorf("replay gaps %v, want %v", gaps, want)
	}
	feedGaps := map[string]int64{}
	for _, dp := range got["stream_feed_gaps_total"].(metricdata.Sum[int64]).DataPoints {
		r, _ := dp.Attributes.Value("reason")
		feedGaps[r.AsString()] = dp.Value
	}
	if want := map[string]int64{"retention": 0, "topicReset": 1}; !maps.Equal(feedGaps, want) {
		t.Errorf("feed gaps %v, want %v", feedGaps, want)
	}
	h, ok := got["stream_delivery_latency_seconds"].(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 || h.DataPoints[0].Count != 2 || h.DataPoints[0].Sum != 0.5 {
		t.Fatalf("latency: %#v", got["stream_delivery_latency_seconds"])
	}
	st, ok := got["stream_delivery_stage_seconds"].(metricdata.Histogram[float64])
	if !ok || len(st.DataPoints) != numStages {
		t.Fatalf("stages: %#v", got["stream_delivery_stage_seconds"])
	}
	want := map[string]float64{"fetched": 0.01, "matched": 0.02, "taken": 0.04, "batched": 0.08, "written": 0.25}
	for _, dp := range st.DataPoints {
		name, _ := dp.Attributes.Value("stage")
		if w, ok := want[name.AsString()]; !ok || dp.Count != 1 || dp.Sum < w-1e-9 || dp.Sum > w+1e-9 {
			t.Errorf("stage %q: count %d sum %v", name.AsString(), dp.Count, dp.Sum)
		}
	}
	g, ok := got["stream_feed_lag"].(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 9 {
		t.Fatalf("feed lag: %#v", got["stream_feed_lag"])
	}
	if p, _ := g.DataPoints[0].Attributes.Value("partition"); p != attribute.IntValue(3) {
		t.Errorf("feed lag partition %v", p)
	}
}

// The orphans set's count of transfers decided without the reorg topic read to its end is
// exported as a counter.
func TestOrphansUnsettledMetrics(t *testing.T) {
	r := sdkmetric.NewManualReader()
	if err := ObserveOrphansUnsettled(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)).Meter("test"), func() uint64 { return 2 }); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			if s, ok := md.Data.(metricdata.Sum[int64]); md.Name == "stream_orphans_unsettled_total" && ok && s.IsMonotonic &&
				len(s.DataPoints) == 1 && s.DataPoints[0].Value == 2 {
				return
			}
		}
	}
	t.Fatalf("stream_orphans_unsettled_total not exported as 2: %#v", rm.ScopeMetrics)
}

// A hub built without instruments records nothing and does not fail.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.opened()
	m.closed()
	m.deliveredN(1)
	m.timed(&engine.Rendered{Broker: time.Now()}, true, time.Now(), time.Now(), time.Now())
	m.slowDropped(slowQueueFull)
	m.quotaRefused("monthly")
	m.quotaDiscarded(2)
	m.position(kafka.Message{HighWaterMark: 5})
	m.savePending(1)
	m.saveFailedAs(saveErr)
	m.replayGap(GapRetention, foundRead)
	m.feedGap(false)
}
