package ws

import (
	"context"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Metrics are the stream's own instruments, exported on the ops port's /metrics. A nil
// *Metrics records nothing, so tests and tools may build a hub without a meter.
type Metrics struct {
	conns     metric.Int64UpDownCounter
	delivered metric.Int64Counter
	slow      metric.Int64Counter
	refused   metric.Int64Counter
	discarded metric.Int64Counter
	latency   metric.Float64Histogram
	lag       metric.Int64Gauge
	// saveFailed counts the sessions not saved at disconnect; savesPending the saves waiting
	// for a turn or holding one.
	saveFailed   metric.Int64Counter
	savesPending metric.Int64UpDownCounter
	saveReason   [2]metric.AddOption
	// replayGaps counts the partitions resumes could not replay from their saved positions,
	// feedGaps what the replica's own read of the transfer topic skipped.
	replayGaps metric.Int64Counter
	feedGaps   metric.Int64Counter
	// replayDropped counts the deliveries owed that the replay buffers' limits dropped.
	replayDropped metric.Int64Counter
	// feedReadErrors counts the failed reads of the topics the replica follows.
	feedReadErrors metric.Int64Counter
	// stages splits the latency: the time from the broker to each stage a delivery passed.
	stages   metric.Float64Histogram
	stageOpt [numStages]metric.RecordOption
	// lagAttrs holds each partition's attribute option for lag, made once: building an
	// attribute set per record cost more than recording the value.
	lagAttrs sync.Map // int → metric.RecordOption
}

// NewMetrics creates the stream's instruments on meter.
func NewMetrics(meter metric.Meter) (*Metrics, error) {
	m := &Metrics{}
	var err error
	if m.conns, err = meter.Int64UpDownCounter("stream_connections", metric.WithDescription("open WebSocket connections on this replica")); err != nil {
		return nil, err
	}
	if m.delivered, err = meter.Int64Counter("stream_transfers_delivered_total", metric.WithDescription("transfers written to clients (each credits the key's stream quota)")); err != nil {
		return nil, err
	}
	if m.slow, err = meter.Int64Counter("stream_slow_clients_dropped_total", metric.WithDescription("connections dropped as slow readers, by reason: queue_full (their delivery queue filled) or write_timeout (a write blocked past the write timeout)")); err != nil {
		return nil, err
	}
	if m.refused, err = meter.Int64Counter("stream_quota_refusals_total", metric.WithDescription("transfers not delivered because the key's stream quota was spent, by limit type")); err != nil {
		return nil, err
	}
	if m.discarded, err = meter.Int64Counter("stream_quota_discarded_total",
		metric.WithDescription("deliveries a connection's queue dropped because the key's quota was found spent, waiting or matched while the refusal stands (not delivered, not owed, not in stream_transfers_delivered_total)")); err != nil {
		return nil, err
	}
	if m.latency, err = meter.Float64Histogram("stream_delivery_latency_seconds",
		metric.WithDescription("from the broker taking a transfer to its write to a client completing"),
		metric.WithExplicitBucketBoundaries(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)); err != nil {
		return nil, err
	}
	if m.stages, err = meter.Float64Histogram("stream_delivery_stage_seconds",
		metric.WithDescription("from the broker taking a transfer to each stage of its delivery: fetched by the replica, matched by the engine, taken up by the connection's writer, batched (quota lease held), written"),
		metric.WithExplicitBucketBoundaries(stageBuckets...)); err != nil {
		return nil, err
	}
	for i, name := range StageNames {
		m.stageOpt[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("stage", name)))
	}
	if m.lag, err = meter.Int64Gauge("stream_feed_lag", metric.WithDescription("chain.transfers.v1 records behind the partition end at the stream's read position, by partition")); err != nil {
		return nil, err
	}
	if m.saveFailed, err = meter.Int64Counter("stream_session_saves_failed_total",
		metric.WithDescription("sessions not saved at disconnect, by reason: error (the save failed) or redis_failing (given up while Redis fails); their reconnects resume from their last checkpoint")); err != nil {
		return nil, err
	}
	if m.savesPending, err = meter.Int64UpDownCounter("stream_session_saves_pending", metric.WithDescription("sessions of ended connections waiting for, or holding, a save turn")); err != nil {
		return nil, err
	}
	if m.replayGaps, err = meter.Int64Counter("stream_replay_gaps_total",
		metric.WithDescription("partitions a resumed session could not be replayed from its saved position on (told in the reconnect's replayGaps), by reason (retention, topicReset) and found: cursor (the saved position outside the topic's offsets as the replica read them) or read (the replay's reader got a later offset than it asked for, or found the log reset)")); err != nil {
		return nil, err
	}
	if m.feedGaps, err = meter.Int64Counter("stream_feed_gaps_total",
		metric.WithDescription("partitions where this replica's read of the transfer topic skipped records, by reason: retention (deleted before they were read; connected sessions miss them) or topicReset (the log ended below the read, which starts again at the new log's start)")); err != nil {
		return nil, err
	}
	if m.replayDropped, err = newReplayDropped(meter); err != nil {
		return nil, err
	}
	if m.feedReadErrors, err = meter.Int64Counter("stream_feed_read_errors_total",
		metric.WithDescription("failed reads of a partition of a topic the replica follows (transfers, attributions, reorgs, user changes), by topic; retried, the first of a row logged")); err != nil {
		return nil, err
	}
	for i, r := range [2]string{saveErr: "error", saveGivenUp: "redis_failing"} {
		m.saveReason[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
	}
	m.startAtZero()
	return m, nil
}

// startAtZero adds 0 to every counter's series, so rate() and alerts see them before the first
// event.
func (m *Metrics) startAtZero() {
	ctx := context.Background()
	m.saveFailed.Add(ctx, 0, m.saveReason[saveErr])
	m.saveFailed.Add(ctx, 0, m.saveReason[saveGivenUp])
	m.savesPending.Add(ctx, 0)
	for _, reason := range []string{GapRetention, GapTopicReset} {
		m.feedGaps.Add(ctx, 0, metric.WithAttributes(attribute.String("reason", reason)))
		for _, found := range []string{foundCursor, foundRead} {
			m.replayGaps.Add(ctx, 0, metric.WithAttributes(attribute.String("reason", reason), attribute.String("found", found)))
		}
	}
	m.replayGaps.Add(ctx, 0, metric.WithAttributes(attribute.String("reason", GapCatchUpLimit), attribute.String("found", foundRead)))
	m.conns.Add(ctx, 0)
	m.delivered.Add(ctx, 0)
	for _, reason := range []string{slowQueueFull, slowWriteTimeout} {
		m.slow.Add(ctx, 0, metric.WithAttributes(attribute.String("reason", reason)))
	}
	m.discarded.Add(ctx, 0)
	for _, lt := range []string{store.LimitHourly, store.LimitMonthly} {
		m.refused.Add(ctx, 0, metric.WithAttributes(attribute.String("limit_type", lt)))
	}
}

func (m *Metrics) opened() {
	if m != nil {
		m.conns.Add(context.Background(), 1)
	}
}

func (m *Metrics) closed() {
	if m != nil {
		m.conns.Add(context.Background(), -1)
	}
}

// deliveredN counts n transfers written to clients in one batch.
func (m *Metrics) deliveredN(n int64) {
	if m != nil && n > 0 {
		m.delivered.Add(context.Background(), n)
	}
}

// The stages of a delivery, in order.
const (
	stageFetched = iota
	stageMatched
	stageTaken
	stageBatched
	stageWritten
	numStages
)

// StageNames are the values of stream_delivery_stage_seconds' stage attribute, in order.
var StageNames = [numStages]string{"fetched", "matched", "taken", "batched", "written"}

// stageBuckets are fine enough for a p99 read off them to within a few percent.
var stageBuckets = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075,
	0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30}

// stageEvery is how many of a connection's deliveries go by for each whose stages are
// recorded: every delivery's would add a tenth to the writer's CPU for a figure a sample
// gives as well.
const stageEvery = 8

// timed records one delivery's Kafka-to-client time (r nil or without a broker time: not
// timed) and, when staged, its stages: taken when the writer took its batch up, batched when
// the batch started, now when it was written.
func (m *Metrics) timed(r *engine.Rendered, staged bool, taken, batched, now time.Time) {
	if m == nil || r == nil || r.Broker.IsZero() {
		return
	}
	ctx := context.Background()
	m.latency.Record(ctx, max(now.Sub(r.Broker).Seconds(), 0))
	if !staged {
		return
	}
	for i, t := range [numStages]time.Time{r.Fetched, r.Matched, taken, batched, now} {
		if !t.IsZero() {
			m.stages.Record(ctx, max(t.Sub(r.Broker).Seconds(), 0), m.stageOpt[i])
		}
	}
}

// Why a session was not saved at disconnect: its save failed, or was given up while Redis fails.
const (
	saveErr = iota
	saveGivenUp
)

func (m *Metrics) saveFailedAs(reason int) {
	if m != nil {
		m.saveFailed.Add(context.Background(), 1, m.saveReason[reason])
	}
}

func (m *Metrics) savePending(d int64) {
	if m != nil {
		m.savesPending.Add(context.Background(), d)
	}
}

// Why a slow reader was dropped (the reason label of stream_slow_clients_dropped_total).
const (
	slowQueueFull    = "queue_full"
	slowWriteTimeout = "write_timeout"
)

func (m *Metrics) slowDropped(reason string) {
	if m != nil {
		m.slow.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
	}
}

// quotaDiscarded counts n deliveries a queue dropped over the quota.
func (m *Metrics) quotaDiscarded(n int) {
	if m != nil && n > 0 {
		m.discarded.Add(context.Background(), int64(n))
	}
}

func (m *Metrics) quotaRefused(limitType string) {
	if m != nil {
		m.refused.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit_type", limitType)))
	}
}

// position records how far the stream's read of a partition is behind its end, from the
// high-water mark the fetch that returned msg reported.
func (m *Metrics) position(msg kafka.Message) {
	if m == nil || msg.HighWaterMark <= 0 {
		return
	}
	opt, ok := m.lagAttrs.Load(msg.Partition)
	if !ok {
		opt, _ = m.lagAttrs.LoadOrStore(msg.Partition, metric.WithAttributes(attribute.Int("partition", msg.Partition)))
	}
	m.lag.Record(context.Background(), max(msg.HighWaterMark-msg.Offset-1, 0), opt.(metric.RecordOption))
}

// replayGap counts a partition a resume could not replay from the saved position; found is
// where it was found ("cursor" or "read").
// newReplayDropped is stream_replay_dropped_total, started at zero.
func newReplayDropped(meter metric.Meter) (metric.Int64Counter, error) {
	c, err := meter.Int64Counter("stream_replay_dropped_total",
		metric.WithDescription("deliveries owed to sessions at a disconnect that the replay buffer limits (STREAM_REPLAY_MAX_BYTES, STREAM_REPLAY_MAX_BYTES_PER_KEY) dropped: not replayed, not charged, told in the reconnect's replayDropped (logged for a connect with a session id or a v2 stream's)"))
	if err == nil {
		c.Add(context.Background(), 0)
	}
	return c, err
}

// replayDroppedN counts n deliveries the replay limits dropped.
func (m *Metrics) replayDroppedN(n int64) {
	if m != nil {
		m.replayDropped.Add(context.Background(), n)
	}
}

func (m *Metrics) replayGap(reason, found string) {
	if m != nil {
		m.replayGaps.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason), attribute.String("found", found)))
	}
}

// feedGap counts a partition where the replica's read of the transfer topic skipped records.
func (m *Metrics) feedGap(reset bool) {
	if m == nil {
		return
	}
	reason := GapRetention
	if reset {
		reason = GapTopicReset
	}
	m.feedGaps.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// ObserveOrphansUnsettled exports n, the count of transfers of blocks marked orphaned that
// were decided on without the reorg topic read up to the end the broker reported past them
// (orphans.Set.Unsettled), as stream_orphans_unsettled_total.
func ObserveOrphansUnsettled(meter metric.Meter, n func() uint64) error {
	_, err := meter.Int64ObservableCounter("stream_orphans_unsettled_total",
		metric.WithDescription("transfers of blocks marked orphaned decided on with the reorgs read so far, the reorg topic not read up to its end within the bound: one of a block named canonical again meanwhile is skipped"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(n()))
			return nil
		}))
	return err
}

// FollowsTopic starts topic's count of failed reads at zero, so rate() and alerts see it (by
// its topic label) before the first failure.
func (m *Metrics) FollowsTopic(topic string) {
	if m != nil {
		m.feedReadErrors.Add(context.Background(), 0, metric.WithAttributes(attribute.String("topic", topic)))
	}
}

// FeedReadError counts a failed read of a partition of topic.
func (m *Metrics) FeedReadError(topic string) {
	if m != nil {
		m.feedReadErrors.Add(context.Background(), 1, metric.WithAttributes(attribute.String("topic", topic)))
	}
}
