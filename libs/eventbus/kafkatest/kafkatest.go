// Package kafkatest starts an in-process Kafka-protocol broker for a test, with topics created.
package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
)

// Broker starts a broker for t with the given topics (4 partitions each, plus their .dlq) and
// returns its addresses. It stops when the test ends.
func Broker(t testing.TB, topics ...string) []string {
	t.Helper()
	return BrokerWith(t, eventbus.EmbeddedOptions{}, topics...)
}

// BrokerWith is Broker with the broker tuned by o (a small MaxMessageBytes, say).
func BrokerWith(t testing.TB, o eventbus.EmbeddedOptions, topics ...string) []string {
	t.Helper()
	b, err := eventbus.StartEmbeddedBrokerWith(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	specs := make([]eventbus.TopicSpec, len(topics))
	for i, tp := range topics {
		specs[i] = eventbus.TopicSpec{Name: tp, Partitions: 4}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := eventbus.EnsureTopics(ctx, b.Addrs(), eventbus.Security{}, 1, specs); err != nil {
		t.Fatal(err)
	}
	return b.Addrs()
}
