// Package eventbus publishes and consumes chainintel events on Kafka with kafka-go.
//
// Events are protobuf messages. The event type (the message's full name), a unique event id and
// the OpenTelemetry trace context travel in record headers. Publishing waits for every in-sync
// replica (RequireAll) and spreads records over partitions by key hash. Consumers run in a
// consumer group, hand batches to a handler and commit offsets only after the handler returns
// nil (at-least-once); a record that cannot be decoded goes to "<topic>.dlq" with the error in a
// header and the consumer moves on.
package eventbus

import (
	"context"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/propagation"
)

// Header names.
const (
	HeaderEventType   = "event-type"
	HeaderEventID     = "event-id"
	HeaderContentType = "content-type"
	HeaderError       = "dlq-error"
	HeaderDLQSource   = "dlq-source"

	contentTypeProtobuf = "application/protobuf"
)

// HeaderCarrier adapts kafka-go record headers to the OpenTelemetry propagation carrier.
type HeaderCarrier struct{ Headers *[]kafka.Header }

var _ propagation.TextMapCarrier = HeaderCarrier{}

// Get returns the first value of key.
func (c HeaderCarrier) Get(key string) string {
	for _, h := range *c.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Set replaces key's value.
func (c HeaderCarrier) Set(key, value string) {
	for i, h := range *c.Headers {
		if h.Key == key {
			(*c.Headers)[i].Value = []byte(value)
			return
		}
	}
	*c.Headers = append(*c.Headers, kafka.Header{Key: key, Value: []byte(value)})
}

// Keys lists the header keys.
func (c HeaderCarrier) Keys() []string {
	out := make([]string, len(*c.Headers))
	for i, h := range *c.Headers {
		out[i] = h.Key
	}
	return out
}

func header(hs []kafka.Header, key string) string {
	return HeaderCarrier{Headers: &hs}.Get(key)
}

// extract returns ctx with the remote span context found in headers.
func extract(ctx context.Context, p propagation.TextMapPropagator, hs []kafka.Header) context.Context {
	return p.Extract(ctx, HeaderCarrier{Headers: &hs})
}
