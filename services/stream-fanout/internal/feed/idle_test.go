package feed

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
)

// countingTransport counts the ListOffsets calls made through it.
type countingTransport struct {
	kafka.RoundTripper
	offsets atomic.Int64
}

func (c *countingTransport) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	if m, ok := req.(protocol.Message); ok && m.ApiKey() == protocol.ListOffsets {
		c.offsets.Add(1)
	}
	return c.RoundTripper.RoundTrip(ctx, addr, req)
}

// An idle topic's partitions share their check of where their logs end: the follower asks
// once per stallCheck for all of them, not once per partition.
func TestIdlePartitionsShareOneOffsetsCall(t *testing.T) {
	const topic, parts = "test.idle.v1", 8
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tr := &countingTransport{RoundTripper: kafka.DefaultTransport}
	tp := Topic{Brokers: c.ListenAddrs(), Name: topic, transport: tr}
	start := map[int]int64{}
	for p := range parts {
		start[p] = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Follow(ctx, start, func(kafka.Message) {}, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	const checks = 4
	time.Sleep(checks*stallCheck + stallCheck/2)
	if n := tr.offsets.Load(); n > checks || n == 0 {
		t.Fatalf("%d ListOffsets calls over %d checks of %d idle partitions, want 1 to %d (the idle partitions are checked, together)", n, checks, parts, checks)
	}
}
