package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
)

// Event is one record to publish.
type Event struct {
	Topic string
	Key   string
	// Msg is the payload; nil publishes a tombstone (compacted topics delete the key).
	Msg proto.Message
	// ID is the event's unique id; empty gets a new UUIDv7. Producers that may re-publish the
	// same fact (a restart mid-batch) should derive it from the fact so consumers can dedupe.
	ID string

	dlq *deadRecord // raw record re-published to a dead-letter topic
}

// deadRecord is an undecodable record kept byte for byte.
type deadRecord struct {
	// source is where the record was read, topic/partition/offset (its HeaderDLQSource).
	source  string
	value   []byte
	headers []kafka.Header
}

// PublisherOptions tune a Publisher.
type PublisherOptions struct {
	BatchTimeout   time.Duration // how long a partial batch waits; default 5ms
	BatchSize      int           // records per partition batch; default 1000
	TracerProvider trace.TracerProvider
	Propagator     propagation.TextMapPropagator
	// Security is TLS and SASL for the brokers, and the transport the publisher shares with
	// the other clients of its service; the zero value is plaintext.
	Security Security
}

// Publisher writes events to any topic. It is safe for concurrent use.
type Publisher struct {
	w      *kafka.Writer
	sec    Security
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	// lastErr and okAt are what /status shows of the publisher (LastBrokerError, PublishedAt).
	lastErr atomic.Pointer[BrokerError]
	okAt    atomic.Int64
}

// NewPublisher returns a publisher for brokers.
func NewPublisher(brokers []string, o PublisherOptions) *Publisher {
	if o.BatchTimeout <= 0 {
		o.BatchTimeout = 5 * time.Millisecond
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	prop := o.Propagator
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return &Publisher{
		sec: o.Security,
		w: &kafka.Writer{
			Addr:            kafka.TCP(brokers...),
			Transport:       o.Security.Transport(),
			Balancer:        &kafka.Hash{},
			RequiredAcks:    kafka.RequireAll,
			BatchTimeout:    o.BatchTimeout,
			BatchSize:       o.BatchSize,
			BatchBytes:      16 << 20,
			MaxAttempts:     10,
			WriteBackoffMin: 50 * time.Millisecond,
			WriteBackoffMax: time.Second,
		},
		tracer: tp.Tracer("chainintel/eventbus"),
		prop:   prop,
	}
}

// Publish writes events and returns once the brokers acknowledged all of them. On error some
// events may have been written; callers retry the whole call (consumers are idempotent), unless
// Permanent(err): then the brokers refuse at least one of the events for good, and the same call
// can never succeed.
func (p *Publisher) Publish(ctx context.Context, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	ctx, span := p.tracer.Start(ctx, "publish", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", "kafka"),
			attribute.String("messaging.destination.name", events[0].Topic),
			attribute.Int("messaging.batch.message_count", len(events))))
	defer span.End()
	msgs := make([]kafka.Message, len(events))
	// Every record of the call carries the same trace context; build its headers once.
	var traceHeaders []kafka.Header
	p.prop.Inject(ctx, HeaderCarrier{Headers: &traceHeaders})
	for i, e := range events {
		m, err := encode(e, traceHeaders)
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	if err := p.w.WriteMessages(ctx, msgs...); err != nil {
		err = p.sec.explain(err)
		span.RecordError(err)
		p.failed(ctx, events[0].Topic, err)
		var werr kafka.WriteErrors
		if errors.As(err, &werr) {
			return fmt.Errorf("publish %d events (%d failed): %w", len(msgs), werr.Count(), err)
		}
		return fmt.Errorf("publish %d events: %w", len(msgs), err)
	}
	p.okAt.Store(time.Now().UnixNano())
	return nil
}

// failed keeps err as the publisher's last broker error, unless the caller cancelled (a stop) or
// the brokers refused a record for good (Permanent: the outbox parks it; the brokers were
// reached). A caller's deadline passing while the writer retries is a failure to reach them.
func (p *Publisher) failed(ctx context.Context, topic string, err error) {
	if errors.Is(ctx.Err(), context.Canceled) || Permanent(err) {
		return
	}
	p.lastErr.Store(&BrokerError{Time: time.Now().UTC(), Topic: topic, Op: "publish", Error: err.Error()})
}

// LastBrokerError is the publisher's newest failure to write to the brokers (Op "publish", Topic
// the call's first event's); nil when none.
func (p *Publisher) LastBrokerError() *BrokerError { return p.lastErr.Load() }

// PublishedAt is when a Publish call last succeeded; zero before the first.
func (p *Publisher) PublishedAt() time.Time {
	if at := p.okAt.Load(); at != 0 {
		return time.Unix(0, at).UTC()
	}
	return time.Time{}
}

func encode(e Event, traceHeaders []kafka.Header) (kafka.Message, error) {
	if e.Topic == "" {
		return kafka.Message{}, errors.New("event has no topic")
	}
	if e.dlq != nil {
		return kafka.Message{Topic: e.Topic, Key: []byte(e.Key), Value: e.dlq.value, Headers: e.dlq.headers}, nil
	}
	id := e.ID
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	hs := make([]kafka.Header, 0, 3+len(traceHeaders))
	hs = append(hs, kafka.Header{Key: HeaderEventID, Value: []byte(id)})
	var val []byte
	if e.Msg != nil {
		b, err := proto.Marshal(e.Msg)
		if err != nil {
			return kafka.Message{}, fmt.Errorf("encode %s event: %w", e.Topic, err)
		}
		val = b
		hs = append(hs,
			kafka.Header{Key: HeaderEventType, Value: typeName(e.Msg)},
			kafka.Header{Key: HeaderContentType, Value: contentTypeValue})
	}
	hs = append(hs, traceHeaders...)
	return kafka.Message{Topic: e.Topic, Key: []byte(e.Key), Value: val, Headers: hs}, nil
}

// contentTypeValue and the cached type names are shared, read-only header values: kafka-go only
// reads header values, so one slice per message type serves every record.
var (
	contentTypeValue = []byte(contentTypeProtobuf)
	typeNames        sync.Map // protoreflect.FullName -> []byte
)

func typeName(m proto.Message) []byte {
	name := m.ProtoReflect().Descriptor().FullName()
	if v, ok := typeNames.Load(name); ok {
		return v.([]byte)
	}
	b := []byte(name)
	typeNames.Store(name, b)
	return b
}

// Transport is what the publisher writes through: its Security's shared transport.
func (p *Publisher) Transport() kafka.RoundTripper { return p.w.Transport }

// Close flushes pending writes. The connections are the Security's transport's, which its
// owner closes.
func (p *Publisher) Close() error { return p.w.Close() }
