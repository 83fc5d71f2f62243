package metering_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
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
	// Delivery is at least once: a batch whose publish the stop interrupted after it was written
	// is published again by the drain, with the same event ids, which the metering consumer
	// counts once. So what must arrive is 300 distinct events, and nothing else.
	got := make(chan int, 1)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	var mu sync.Mutex
	ids := map[string]bool{}
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "producer-test", Topic: eventsv1.TopicUsageCalls},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, b []eventbus.Message[*eventsv1.UsageCall]) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range b {
				ids[m.EventID] = true
			}
			if len(ids) >= 300 {
				select {
				case got <- len(ids):
				default:
				}
			}
			return nil
		})
	go func() { _ = c.Run(cctx) }()
	select {
	case v := <-got:
		if v != 300 {
			t.Fatalf("consumed %d distinct events, want 300", v)
		}
	case <-cctx.Done():
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("consumed only %d of 300 distinct events", len(ids))
	}
}

// refusingPub refuses publishes until open is set; a refused call writes the first half of its
// batch first (a publish that fails may have written some events). It keeps what was written
// once per event id, as the metering consumer counts it.
type refusingPub struct {
	open    atomic.Bool
	mu      sync.Mutex
	refused int
	writes  int
	got     map[string]*eventsv1.UsageCall
}

func (p *refusingPub) Publish(ctx context.Context, evs ...eventbus.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(evs)
	if !p.open.Load() {
		p.refused++
		n = len(evs) / 2
	}
	for _, e := range evs[:n] {
		p.writes++
		if e.ID == "" {
			return errors.New("event without an id")
		}
		if prev, ok := p.got[e.ID]; ok && prev != e.Msg {
			return fmt.Errorf("event %s written again with another message", e.ID)
		}
		p.got[e.ID] = e.Msg.(*eventsv1.UsageCall)
	}
	if n < len(evs) {
		return errors.New("not enough replicas")
	}
	return ctx.Err()
}

func (p *refusingPub) state() (refused, writes, unique int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused, p.writes, len(p.got)
}

// With the broker refusing (after writing part of each batch) for many attempts in a row, a
// retriable failure never drops a batch: every call recorded arrives exactly once per event id
// once it accepts, whether it recovers while the producer runs or during shutdown's drain.
func TestProducerRetriesUntilPublished(t *testing.T) {
	for _, atShutdown := range []bool{false, true} {
		t.Run(fmt.Sprintf("atShutdown=%v", atShutdown), func(t *testing.T) {
			pub := &refusingPub{got: map[string]*eventsv1.UsageCall{}}
			p := metering.NewProducer(pub, metering.ProducerOptions{Batch: 16, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const calls = 300
			for i := 0; i < calls; i++ {
				id := ""
				if i%2 == 0 {
					id = fmt.Sprintf("call-%d", i) // the edge's ids; the others get one from Record
				}
				if !p.Record(id, &eventsv1.UsageCall{KeyId: "k", Credits: 2}) {
					t.Fatal("dropped with room in the queue")
				}
			}
			// Started once the calls are queued, so its batches are full (16) and each refusal
			// writes half of one: a batch taken as a single call would write nothing of it.
			done := make(chan struct{})
			go func() { _ = p.Run(ctx); close(done) }()
			waitFor(t, "10 refused publishes", func() bool { r, _, _ := pub.state(); return r >= 10 })
			if atShutdown {
				cancel()
			}
			pub.open.Store(true)
			waitFor(t, "every call published", func() bool { _, _, u := pub.state(); return u >= calls })
			cancel()
			<-done
			refused, writes, unique := pub.state()
			var credits int64
			for _, c := range pub.got {
				credits += c.GetCredits()
			}
			if unique != calls || credits != 2*calls {
				t.Fatalf("%d events (%d credits) once per id, want %d (%d)", unique, credits, calls, 2*calls)
			}
			if writes <= calls {
				t.Fatalf("%d writes after %d refusals: no batch was partly written and retried", writes, refused)
			}
		})
	}
}

// waitFor polls cond until it holds, failing after a generous wait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
