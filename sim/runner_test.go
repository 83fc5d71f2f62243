package sim_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/sim"
)

// counting passes events to a real publisher and counts them per topic.
type counting struct {
	p      *eventbus.Publisher
	mu     sync.Mutex
	topics map[string]int
	first  string
}

func (c *counting) Publish(ctx context.Context, ev ...eventbus.Event) error {
	if err := c.p.Publish(ctx, ev...); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range ev {
		if c.first == "" {
			c.first = e.Topic
		}
		c.topics[e.Topic]++
	}
	return nil
}

func TestRunnerPublishesHistoryThenLive(t *testing.T) {
	var topics []string
	for _, tp := range eventsv1.Topics {
		topics = append(topics, tp.Name)
	}
	brokers := kafkatest.Broker(t, topics...)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	w, err := sim.New(sim.Config{Seed: 9, Start: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{p: pub, topics: map[string]int{}}
	var batches int
	// The run ends once 150 live transactions followed the 500 of history, however long a
	// busy machine takes; the bound only keeps a broken runner from hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const want = 500 + 150
	reached := false
	r := sim.NewRunner(w, c, sim.RunnerConfig{Rate: 100, Tick: 50 * time.Millisecond, BackfillTxs: 500, ChunkTxs: 200,
		OnBatch: func(*sim.Batch) {
			batches++
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.topics[eventsv1.TopicTransactions] >= want {
				reached = true
				cancel()
			}
		}}, nil)
	start := time.Now()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !reached {
		t.Fatalf("%d transactions published before the bound, want %d", c.topics[eventsv1.TopicTransactions], want)
	}
	if c.first != eventsv1.TopicMarketTokens {
		t.Fatalf("first event on %s; the registry must come first", c.first)
	}
	// Live transactions are paced at 100/s: never more than that (plus one tick's chunk).
	if live := c.topics[eventsv1.TopicTransactions] - 500; float64(live) > 100*elapsed.Seconds()+200 {
		t.Fatalf("%d live transactions in %v: faster than 100/s", live, elapsed)
	}
	if r.Published() != int64(c.topics[eventsv1.TopicTransfers]) {
		t.Fatalf("runner counted %d transfers, %d were published", r.Published(), c.topics[eventsv1.TopicTransfers])
	}
	for _, tp := range []string{eventsv1.TopicTokens, eventsv1.TopicPrices, eventsv1.TopicBalances, eventsv1.TopicSwaps} {
		if c.topics[tp] == 0 {
			t.Errorf("nothing on %s", tp)
		}
	}
	if batches < 5 {
		t.Fatalf("%d batches", batches)
	}
	a, ok := r.LastActivity(sim.KindDeposit, "binance-sim")
	if !ok || time.Since(a.Time) > 15*time.Minute || len(a.TransferIDs) != 1 { // block time; bitcoin blocks are 10 min
		t.Fatalf("last deposit %+v %v: want a live one", a, ok)
	}
}
