// Package kafkatest starts an in-process Kafka-protocol broker for a test, with topics created,
// and changes a topic under its readers as an operator or retention would.
package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// DeleteRecords deletes partition part of topic below offset before (a DeleteRecords request,
// as retention deletes a log's oldest records), failing t when the broker refuses.
func DeleteRecords(t testing.TB, brokers []string, topic string, part int32, before int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = part, before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Fatalf("delete records of %s/%d below %d: %v", topic, p.Partition, before, err)
			}
			if p.LowWatermark != before {
				t.Fatalf("delete records of %s/%d below %d: the log now starts at %d", topic, p.Partition, before, p.LowWatermark)
			}
		}
	}
}

// RecreateTopic deletes topic and creates it again with 4 partitions, empty: its offsets start
// at 0 again. The creation is eventbus.EnsureTopics', which retries what the brokers refuse
// for a moment (a controller moving, a leader not available yet).
func RecreateTopic(t testing.TB, brokers []string, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Errors[topic]; err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	// A transport of its own: kafka-go's default one, which the delete went through, caches
	// metadata that still lists the topic, and EnsureTopics creates only the topics not listed.
	sec := eventbus.NewSecurity(nil, nil)
	defer sec.Close()
	if err := eventbus.EnsureTopics(ctx, brokers, sec, 1, []eventbus.TopicSpec{{Name: topic, Partitions: 4}}); err != nil {
		t.Fatalf("create topic %s again: %v", topic, err)
	}
	// The default transport (which publishers and readers use) may have refreshed its metadata
	// between the delete and the creation and would then answer that the topic does not exist
	// until its next refresh: dropping its pools drops that cache.
	if tr, ok := kafka.DefaultTransport.(*kafka.Transport); ok {
		tr.CloseIdleConnections()
	}
}
