package feed

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// A partition added to the topic while Follow runs is read from its first record, beside the
// partitions it started with.
func TestFollowReadsAddedPartitions(t *testing.T) {
	const topic = "test.added.v1"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tp := Topic{Brokers: c.ListenAddrs(), Name: topic}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan kafka.Message, 16)
	done := make(chan error, 1)
	go func() { done <- tp.Follow(ctx, map[int]int64{0: 0}, func(m kafka.Message) { got <- m }, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 10 * time.Second}
	if _, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 2}}}); err != nil {
		t.Fatal(err)
	}
	conn, err := kafka.DialLeader(ctx, "tcp", c.ListenAddrs()[0], topic, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.WriteMessages(kafka.Message{Value: []byte("first"), Time: time.Now()}, kafka.Message{Value: []byte("second")}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for _, want := range []string{"first", "second"} {
		select {
		case m := <-got:
			if m.Partition != 1 || string(m.Value) != want {
				t.Fatalf("read partition %d %q, want partition 1 %q", m.Partition, m.Value, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the added partition's %q was never read", want)
		}
	}
}
