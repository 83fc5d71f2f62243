package metering_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
)

// With the broker unreachable, Record never blocks: the queue fills and the rest is dropped.
func TestProducerNeverBlocks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	pub := eventbus.NewPublisher([]string{dead}, eventbus.PublisherOptions{})
	defer pub.Close()
	p := metering.NewProducer(pub, metering.ProducerOptions{Queue: 10, Batch: 1, Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	accepted := 0
	for i := 0; i < 1000; i++ {
		if p.Record("id", &eventsv1.UsageCall{KeyId: "k"}) {
			accepted++
		}
	}
	if accepted < 10 || accepted > 12 {
		t.Fatalf("accepted %d of 1000 with a queue of 10", accepted)
	}
	cancel()
	<-done
}

// Queued events are published in batches and drained on stop.
func TestProducerPublishesAndDrains(t *testing.T) {
	brokers := kafkatest.Broker(t, eventsv1.TopicUsageCalls)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	p := metering.NewProducer(pub, metering.ProducerOptions{Batch: 50})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	for i := 0; i < 300; i++ {
		if !p.Record("", &eventsv1.UsageCall{KeyId: "k", UserId: "u", Route: "/tx/{hash}", Credits: 2}) {
			t.Fatal("dropped with room in the queue")
		}
	}
	cancel()
	<-done
	if p.Pending() != 0 {
		t.Fatalf("%d events left after stop", p.Pending())
	}
	got := make(chan int, 1)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	var n atomic.Int64
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "producer-test", Topic: eventsv1.TopicUsageCalls},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, b []eventbus.Message[*eventsv1.UsageCall]) error {
			if v := n.Add(int64(len(b))); v >= 300 {
				got <- int(v)
			}
			return nil
		})
	go func() { _ = c.Run(cctx) }()
	select {
	case v := <-got:
		if v != 300 {
			t.Fatalf("consumed %d", v)
		}
	case <-cctx.Done():
		t.Fatalf("consumed only %d of 300", n.Load())
	}
}
