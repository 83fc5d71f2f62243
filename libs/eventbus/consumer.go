package eventbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
)

// Message is one decoded record handed to a handler.
type Message[M proto.Message] struct {
	Topic     string
	Partition int
	Offset    int64
	Key       string
	EventID   string
	EventType string
	Time      time.Time
	// Msg is the decoded payload; for a tombstone (Tombstone true) it is the zero message.
	Msg       M
	Tombstone bool
	// Ctx carries the producer's trace context, so work done for this record joins its trace.
	Ctx context.Context
}

// ConsumerOptions configure a consumer-group runner for one topic.
type ConsumerOptions struct {
	Brokers []string
	// Security is TLS and SASL for the brokers, and the transport and dialer the consumer
	// shares with the other clients of its service; the zero value is plaintext.
	Security Security
	Group    string // consumer group id, e.g. "transfers.chain.transfers.v1"
	Topic    string
	// MaxBatch is the most records a handler call gets (default 500); MaxWait is how long a
	// partial batch waits for more (default 50ms).
	MaxBatch int
	MaxWait  time.Duration
	// DLQ receives undecodable records; nil publishes through a publisher of its own.
	DLQ            *Publisher
	Logger         *slog.Logger
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	// StartAtEnd makes a new group start at the newest offset instead of the oldest.
	StartAtEnd bool
	// Broadcast reads every partition without a consumer group (Group is ignored): each
	// consumer gets every record from when it starts, at the newest offsets, and commits
	// nothing. For state each replica keeps for itself, such as a cache that changes
	// invalidate: a group per replica would leave an abandoned group on the broker at every
	// restart.
	Broadcast bool
	// HandlerTimeout is the deadline of each handler call (default 30s); a call it cuts is a
	// failure, retried with a deadline of its own.
	HandlerTimeout time.Duration
	// LagInterval is how often eventbus_consumer_lag is read from the broker (default 10s).
	LagInterval time.Duration

	// readerError receives the reader's own errors; NewConsumer sets it.
	readerError func(msg string)
}

// Handler processes a batch. Returning an error retries the same batch with backoff; records
// are committed only after it returns nil, so it must be idempotent.
type Handler[M proto.Message] func(ctx context.Context, batch []Message[M]) error

// Consumer runs a consumer group for one topic and one message type.
type Consumer[M proto.Message] struct {
	o      ConsumerOptions
	newMsg func() M
	handle Handler[M]
	r      reader
	dlq    *Publisher
	ownDLQ bool
	tracer trace.Tracer

	meter    metric.Meter
	consumed metric.Int64Counter
	dlqCount metric.Int64Counter
	failures metric.Int64Counter
	lagGauge metric.Int64ObservableGauge
	ageGauge metric.Float64ObservableGauge
	// lagAge reports how old the lag in lagGauge is, which a broker outage freezes.
	lagAge metric.Float64ObservableGauge
	// brokerErrs counts failures to reach the brokers by op (brokerOps); lastBrokerErr is the
	// newest of them, for the service's /status.
	brokerErrs    metric.Int64Counter
	lastBrokerErr atomic.Pointer[BrokerError]
	// startedAt is when the consumer was built (Unix nanoseconds): the lag's age counts from it
	// until the first read.
	startedAt int64
	lag       *lagReader
	closeOnce sync.Once
	closeErr  error
	// dlqRefused counts undecodable records the dead-letter topic refuses for good.
	dlqRefused metric.Int64Counter
	// batchStart is when the batch being handled was fetched (Unix nanoseconds), 0 between
	// batches.
	batchStart atomic.Int64
}

// NewConsumer returns a consumer; Run starts it. newMsg returns an empty message to decode into.
func NewConsumer[M proto.Message](o ConsumerOptions, newMsg func() M, handle Handler[M]) *Consumer[M] {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 500
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 50 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.TraceContext{}
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = 30 * time.Second
	}
	if o.LagInterval <= 0 {
		o.LagInterval = 10 * time.Second
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = tnoop.NewTracerProvider()
	}
	mp := o.MeterProvider
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	start := kafka.FirstOffset
	if o.StartAtEnd {
		start = kafka.LastOffset
	}
	c := &Consumer[M]{o: o, newMsg: newMsg, handle: handle, tracer: tp.Tracer("chainintel/eventbus"), startedAt: time.Now().UnixNano()}
	// The reader's own errors (a join, a fetch or a commit that failed against the brokers),
	// which it retries and only logs at debug, are counted as op "reader" but not kept as the
	// last broker error: its logger also reports what is not a broker failure (records skipped
	// past the log's retention).
	c.o.readerError = func(string) { c.brokerErrs.Add(context.Background(), 1, c.opAttrs("reader")) }
	c.lag = &lagReader{client: &kafka.Client{Addr: kafka.TCP(o.Brokers...), Timeout: 10 * time.Second, Transport: o.Security.Transport()}, topic: o.Topic}
	if o.Broadcast {
		c.o.Group = ""
		br := newBroadcastReader(c.o)
		c.r = br
		c.lag.positions = func(context.Context, []int) (map[int]int64, error) { return br.positions() }
	} else {
		c.r = groupReader(c.o, start)
		c.lag.positions = groupPositions(c.lag.client, o.Topic, o.Group)
		c.lag.fromEnd = o.StartAtEnd
	}
	c.dlq = o.DLQ
	if c.dlq == nil {
		c.dlq = NewPublisher(o.Brokers, PublisherOptions{TracerProvider: tp, Propagator: o.Propagator, Security: o.Security})
		c.ownDLQ = true
	}
	m := mp.Meter("chainintel/eventbus")
	c.meter = m
	c.consumed, _ = m.Int64Counter("eventbus_consumed_total", metric.WithDescription("records handled and committed"))
	c.dlqCount, _ = m.Int64Counter("eventbus_dlq_total", metric.WithDescription("records sent to the dead-letter topic"))
	c.dlqRefused, _ = m.Int64Counter("eventbus_dlq_refused_total",
		metric.WithDescription("undecodable records the dead-letter topic refuses for good (too large, invalid), dropped and logged"))
	c.failures, _ = m.Int64Counter("eventbus_handler_failures_total", metric.WithDescription("handler errors (batch retried)"))
	c.lagGauge, _ = m.Int64ObservableGauge("eventbus_consumer_lag",
		metric.WithDescription("records between the partitions' ends and the group's committed offsets, read from the broker every LagInterval"))
	c.ageGauge, _ = m.Float64ObservableGauge("eventbus_batch_age", metric.WithUnit("s"),
		metric.WithDescription("seconds since the batch being handled was fetched; 0 between batches"))
	c.lagAge, _ = m.Float64ObservableGauge("eventbus_consumer_lag_age_seconds", metric.WithUnit("s"),
		metric.WithDescription("seconds since eventbus_consumer_lag was last read from the broker (since the consumer started, before the first read): it grows while the brokers cannot be reached and the lag keeps its last value"))
	c.brokerErrs, _ = m.Int64Counter("eventbus_consumer_broker_errors_total",
		metric.WithDescription("failures of the consumer to reach the brokers, by op: fetch (a fetch round), lag (a lag read), reader (the reader's own retried errors)"))
	// The counters start at zero under the consumer's labels: increase() over a series that
	// first appears with its first record sees no increase, so the dead-letter alerts would
	// miss the first record dead-lettered.
	attrs := c.attrs()
	for _, ctr := range []metric.Int64Counter{c.consumed, c.dlqCount, c.dlqRefused, c.failures} {
		ctr.Add(context.Background(), 0, attrs)
	}
	for _, op := range brokerOps {
		c.brokerErrs.Add(context.Background(), 0, c.opAttrs(op))
	}
	return c
}

// brokerOps are the values of eventbus_consumer_broker_errors_total's op label.
var brokerOps = []string{"fetch", "lag", "reader"}

// BrokerError is a consumer's or a publisher's failure to reach the brokers. Readiness never
// checks the brokers (an outage is waited out; failing readiness would only restart pods that
// cannot help it), so this is how /status shows one.
type BrokerError struct {
	Time  time.Time `json:"time"`
	Topic string    `json:"topic"`
	Group string    `json:"group,omitempty"`
	// Op is what failed: a consumer's "fetch" or "lag" (reading the lag), a publisher's
	// "publish". Group is empty for a publisher.
	Op    string `json:"op"`
	Error string `json:"error"`
}

// LastBrokerError is the consumer's newest failure to reach the brokers; nil when none.
func (c *Consumer[M]) LastBrokerError() *BrokerError { return c.lastBrokerErr.Load() }

// LagReadAt is when the consumer last read its lag from the brokers; zero before the first read.
// The lag is read every LagInterval, so an old time means the brokers cannot be reached.
func (c *Consumer[M]) LagReadAt() time.Time {
	if at := c.lag.readAt.Load(); at != 0 {
		return time.Unix(0, at).UTC()
	}
	return time.Time{}
}

// brokerError counts err in eventbus_consumer_broker_errors_total under op and keeps it as the
// consumer's last broker error.
func (c *Consumer[M]) brokerError(ctx context.Context, op string, err error) {
	c.brokerErrs.Add(ctx, 1, c.opAttrs(op))
	c.lastBrokerErr.Store(&BrokerError{Time: time.Now().UTC(), Topic: c.o.Topic, Group: c.o.Group, Op: op,
		Error: c.o.Security.explain(err).Error()})
}

func (c *Consumer[M]) opAttrs(op string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("topic", c.o.Topic), attribute.String("group", c.o.Group),
		attribute.String("op", op))
}

// attrs are the labels of the consumer's series: its topic and group ("" for a broadcast one).
func (c *Consumer[M]) attrs() metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("topic", c.o.Topic), attribute.String("group", c.o.Group))
}

// groupReader is a consumer group's reader; a new group starts at start.
func groupReader(o ConsumerOptions, start int64) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:                o.Brokers,
		Dialer:                 o.Security.Dialer(),
		GroupID:                o.Group,
		Topic:                  o.Topic,
		MinBytes:               1,
		MaxBytes:               16 << 20,
		MaxWait:                100 * time.Millisecond,
		ReadBatchTimeout:       time.Second,
		QueueCapacity:          4 * o.MaxBatch,
		StartOffset:            start,
		CommitInterval:         0, // commit synchronously, after the handler
		HeartbeatInterval:      time.Second,
		SessionTimeout:         10 * time.Second,
		RebalanceTimeout:       10 * time.Second,
		JoinGroupBackoff:       500 * time.Millisecond,
		ReadBackoffMin:         50 * time.Millisecond,
		ReadBackoffMax:         500 * time.Millisecond,
		WatchPartitionChanges:  true,
		PartitionWatchInterval: 5 * time.Second,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			text := fmt.Sprintf(msg, args...)
			o.Logger.Debug("kafka reader: "+text, "topic", o.Topic, "group", o.Group)
			if o.readerError != nil {
				o.readerError(text)
			}
		}),
	})
}

// Run consumes until ctx ends. A batch being handled when ctx ends is finished and committed
// (within 30s of the end) before Run returns.
func (c *Consumer[M]) Run(ctx context.Context) error {
	defer func() { _ = c.Close() }()
	attrs := c.attrs()
	stopObserving := c.observe(ctx, attrs)
	defer stopObserving()
	failures := 0
	for {
		raw, err := c.fetch(ctx)
		if len(raw) == 0 {
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				// The broker went away or the group could not be joined: the reader keeps
				// retrying by itself and reports each failed round here. A broker outage is
				// waited out, never a reason to stop the service.
				failures++
				c.brokerError(ctx, "fetch", err)
				c.o.Logger.WarnContext(ctx, "broker unavailable; retrying", "topic", c.o.Topic, "group", c.o.Group,
					"error", c.o.Security.explain(err), "attempt", failures)
				if !lifecycle.Sleep(ctx, min(time.Duration(failures)*200*time.Millisecond, 2*time.Second)) {
					return nil
				}
			}
			continue
		}
		failures = 0
		// The batch is ours now: finish it even if a stop was asked for meanwhile, within the
		// grace. Only a stop starts the grace: a deadline from the fetch would also expire the
		// retries of a batch that keeps failing, and none of them could succeed.
		wctx, cancel := graceAfter(ctx, stopGrace)
		c.batchStart.Store(time.Now().UnixNano())
		err = c.process(wctx, ctx, raw, attrs)
		c.batchStart.Store(0)
		cancel()
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// observe reads the lag from the broker every LagInterval and reports it and the batch age
// while Run runs; the returned func stops both, and the series go with the consumer.
func (c *Consumer[M]) observe(ctx context.Context, attrs metric.MeasurementOption) func() {
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.lag.run(lctx, c.o.LagInterval, func(err error) {
			c.o.Logger.Debug("consumer lag not read", "topic", c.o.Topic, "group", c.o.Group, "error", err)
			// A broadcast consumer's lag is unknown until its readers have positioned
			// themselves, which the first fetch does: not a failure to reach the brokers.
			if !errors.Is(err, errNotStarted) {
				c.brokerError(lctx, "lag", err)
			}
		})
	}()
	reg, err := c.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		// The lag as last read, so a scrape sends nothing to the broker; before the first
		// read there is no series rather than a 0 that could be wrong.
		if c.lag.known.Load() {
			o.ObserveInt64(c.lagGauge, c.lag.value.Load(), attrs)
		}
		age := 0.0
		if start := c.batchStart.Load(); start != 0 {
			age = max(0, time.Since(time.Unix(0, start)).Seconds())
		}
		o.ObserveFloat64(c.ageGauge, age, attrs)
		readAt := c.lag.readAt.Load()
		if readAt == 0 {
			readAt = c.startedAt
		}
		o.ObserveFloat64(c.lagAge, max(0, time.Since(time.Unix(0, readAt)).Seconds()), attrs)
		return nil
	}, c.lagGauge, c.ageGauge, c.lagAge)
	if err != nil {
		c.o.Logger.Warn("consumer gauges not registered", "topic", c.o.Topic, "group", c.o.Group, "error", err)
	}
	return func() {
		if reg != nil {
			_ = reg.Unregister()
		}
		cancel()
		<-done
	}
}

// stopGrace is how long a batch being handled when Run's context ends may take to finish.
const stopGrace = 30 * time.Second

// graceAfter returns a context that ends grace after ctx ends (and its cancel).
func graceAfter(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return gctx, func() {
		stop()
		cancel()
	}
}

// fetch gathers up to MaxBatch records, waiting at most MaxWait after the first one.
func (c *Consumer[M]) fetch(ctx context.Context) ([]kafka.Message, error) {
	first, err := c.r.FetchMessage(ctx)
	if err != nil {
		return nil, err
	}
	batch := []kafka.Message{first}
	deadline, cancel := context.WithTimeout(ctx, c.o.MaxWait)
	defer cancel()
	for len(batch) < c.o.MaxBatch {
		m, err := c.r.FetchMessage(deadline)
		if err != nil {
			break
		}
		batch = append(batch, m)
	}
	return batch, nil
}

// maxLinks is how many records' traces a batch span links (OpenTelemetry's default
// LinkCountLimit).
const maxLinks = 128

func (c *Consumer[M]) process(ctx, stop context.Context, raw []kafka.Message, attrs metric.MeasurementOption) error {
	batch := make([]Message[M], 0, len(raw))
	// The batch span links the records' traces, up to the SDK's default limit of links per span:
	// a record that is not first in its batch is found through its link.
	links := make([]trace.Link, 0, maxLinks)
	var dead []Event
	for _, r := range raw {
		m := Message[M]{
			Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Time: r.Time,
			EventID: header(r.Headers, HeaderEventID), EventType: header(r.Headers, HeaderEventType),
			Msg: c.newMsg(),
		}
		m.Ctx = extract(context.Background(), c.o.Propagator, r.Headers)
		if r.Value == nil {
			m.Tombstone = true
		} else if err := proto.Unmarshal(r.Value, m.Msg); err != nil {
			dead = append(dead, c.deadLetter(r, err))
			continue
		}
		if len(links) < cap(links) {
			if sc := trace.SpanContextFromContext(m.Ctx); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
		batch = append(batch, m)
	}
	if len(dead) > 0 {
		if err := c.deadLetters(ctx, dead, attrs); err != nil {
			return err
		}
	}
	if len(batch) > 0 {
		if !c.handleUntilDone(ctx, stop, batch, links, attrs) {
			// Not committed: the batch is delivered again after restart.
			return nil
		}
		c.consumed.Add(ctx, int64(len(batch)), attrs)
	}
	cctx, cancel := context.WithTimeout(ctx, brokerTimeout)
	defer cancel()
	if err := c.r.CommitMessages(cctx, raw...); err != nil {
		if errors.Is(err, context.Canceled) || stop.Err() != nil {
			return nil
		}
		// The batch is written; only its offsets are not. The next commit covers them, or,
		// after a rebalance or restart, the batch is delivered again and the idempotent
		// handlers absorb it. A broker that went away is no reason to stop the service.
		c.o.Logger.WarnContext(ctx, "offsets not committed; the batch may be delivered again", "topic", c.o.Topic,
			"group", c.o.Group, "records", len(raw), "error", err)
	}
	return nil
}

// deadLetters publishes a batch's undecodable records to the dead-letter topic. A record the
// topic refuses for good (Permanent: larger than its max.message.bytes) is dropped, logged with
// where it was read and counted in eventbus_dlq_refused_total, and the others are published
// (Isolate): retried, it would fail the same batch at every start. Any other failure is
// returned and fails the consumer, which restarts on the same batch.
func (c *Consumer[M]) deadLetters(ctx context.Context, dead []Event, attrs metric.MeasurementOption) error {
	dctx, cancel := context.WithTimeout(ctx, brokerTimeout)
	refused, done, err := Isolate(dctx, c.dlq, dead)
	cancel()
	if sent := done - len(refused); sent > 0 {
		c.dlqCount.Add(ctx, int64(sent), attrs)
		c.o.Logger.Warn("undecodable records sent to dead-letter topic", "topic", c.o.Topic, "count", sent)
	}
	if len(refused) > 0 {
		c.dlqRefused.Add(ctx, int64(len(refused)), attrs)
		for _, r := range refused {
			c.o.Logger.Error("undecodable record dropped: the dead-letter topic refuses it for good", "topic", c.o.Topic,
				"source", dead[r.Index].dlq.source, "event_id", dead[r.Index].ID, "error", r.Err)
		}
	}
	if err != nil {
		return fmt.Errorf("dead-letter %d records from %s: %w", len(dead)-done, c.o.Topic, err)
	}
	return nil
}

// brokerTimeout bounds a batch's dead-letter publish and its commit.
const brokerTimeout = 30 * time.Second

// handleUntilDone calls the handler until it accepts the batch (true), retrying failures with
// backoff, each call with a deadline of its own; false when stop ends first.
func (c *Consumer[M]) handleUntilDone(ctx, stop context.Context, batch []Message[M], links []trace.Link, attrs metric.MeasurementOption) bool {
	backoff := 100 * time.Millisecond
	for {
		// The batch span continues the first record's trace and links the others.
		pctx := ctx
		if sc := trace.SpanContextFromContext(batch[0].Ctx); sc.IsValid() {
			pctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
		actx, acancel := context.WithTimeout(pctx, c.o.HandlerTimeout)
		sctx, span := c.tracer.Start(actx, "process "+c.o.Topic, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(links...),
			trace.WithAttributes(attribute.String("messaging.system", "kafka"), attribute.String("messaging.destination.name", c.o.Topic),
				attribute.Int("messaging.batch.message_count", len(batch))))
		err := c.handle(sctx, batch)
		if err != nil {
			span.RecordError(err)
		}
		span.End()
		acancel()
		if err == nil {
			return true
		}
		c.failures.Add(ctx, 1, attrs)
		c.o.Logger.Error("event handler failed; retrying batch", "topic", c.o.Topic, "group", c.o.Group, "records", len(batch), "error", err, "retry_in", backoff)
		select {
		case <-stop.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (c *Consumer[M]) deadLetter(r kafka.Message, err error) Event {
	source := fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
	return Event{Topic: c.o.Topic + ".dlq", Key: string(r.Key), ID: header(r.Headers, HeaderEventID),
		Msg: nil, dlq: &deadRecord{source: source, value: r.Value, headers: append(append([]kafka.Header(nil), r.Headers...),
			kafka.Header{Key: HeaderError, Value: []byte(err.Error())},
			kafka.Header{Key: HeaderDLQSource, Value: []byte(source)})}}
}

// Close closes the consumer's reader and its own dead-letter publisher; Run closes them when it
// returns. A consumer built and never run must be closed: a group reader joins its group as
// soon as it is built. Closing twice does nothing more.
func (c *Consumer[M]) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.r.Close()
		if c.ownDLQ {
			c.closeErr = errors.Join(c.closeErr, c.dlq.Close())
		}
	})
	return c.closeErr
}
