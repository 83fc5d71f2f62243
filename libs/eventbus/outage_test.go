package eventbus

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// countRetries counts the consumer's "broker unavailable" warnings.
type countRetries struct{ n *atomic.Int64 }

func (h countRetries) Enabled(context.Context, slog.Level) bool { return true }
func (h countRetries) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "broker unavailable; retrying" {
		h.n.Add(1)
	}
	return nil
}
func (h countRetries) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countRetries) WithGroup(string) slog.Handler      { return h }

// A broker that goes away (every connection closed) is waited out: the consumer keeps running
// and consumes what is published once the broker is back, instead of stopping its service.
func TestConsumerOutlivesABrokerOutage(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var down, commitsDown atomic.Bool
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if down.Load() || commitsDown.Load() && req.Key() == kmsg.OffsetCommit.Int16() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	brokers := c.ListenAddrs()
	ctx := context.Background()
	if err := EnsureTopics(ctx, brokers, Security{}, 1, []TopicSpec{{Name: "test.outage.v1", Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	pub := NewPublisher(brokers, PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })
	send := func(v string) {
		if err := pub.Publish(ctx, Event{Topic: "test.outage.v1", Key: v, Msg: wrapperspb.String(v)}); err != nil {
			t.Fatal(err)
		}
	}
	send("a")

	var retries atomic.Int64
	col := &collector{}
	cons := NewConsumer(ConsumerOptions{Brokers: brokers, Group: "g-outage", Topic: "test.outage.v1",
		Logger: slog.New(countRetries{&retries})},
		func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} }, col.handle)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cons.Run(rctx) }()
	col.wait(t, 1)

	down.Store(true)
	// Until the consumer has met the outage at least once (a bound only against a hang).
	deadline := time.Now().Add(2 * time.Minute)
	for retries.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the consumer stopped during the broker outage: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the consumer never noticed the broker outage")
		}
		time.Sleep(20 * time.Millisecond)
	}
	down.Store(false)
	send("b")
	col.wait(t, 2)

	// A commit that fails after the batch was handled leaves the batch to be delivered again;
	// the consumer keeps running.
	commitsDown.Store(true)
	send("c")
	col.wait(t, 3)
	commitsDown.Store(false)
	send("d")
	got := col.wait(t, 4)
	select {
	case err := <-done:
		t.Fatalf("the consumer stopped after a failed commit: %v", err)
	default:
	}
	if v := got[len(got)-1].Msg.Value; v != "d" && v != "c" {
		t.Fatalf("last record %q", v)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after the outage: %v", err)
	}
}
