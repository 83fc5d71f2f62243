package sim_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/sim"
)

// BenchmarkPublishToKafka measures simulator → Kafka throughput: the world generates batches
// of 5,000 transactions and 16 publishers send them with RequireAll acknowledgements (partition batches of 1,000
// records, which keeps a batch under the broker's default 1 MiB message size).
// The broker is an in-process Kafka-protocol broker (kfake) sharing the CPU, unless
// CHAININTEL_BENCH_KAFKA names real brokers (comma-separated, topics already created).
//
// "all-topics" publishes every event of a batch (transactions, transfers, swaps, balances,
// prices: about four events per transfer); "transfers-topic" only the transfers.
//
//	go test ./sim -run '^$' -bench PublishToKafka -benchtime 20x
func BenchmarkPublishToKafka(b *testing.B) {
	b.Run("all-topics", func(b *testing.B) { benchPublish(b, false) })
	b.Run("transfers-topic", func(b *testing.B) { benchPublish(b, true) })
}

func benchPublish(b *testing.B, transfersOnly bool) {
	var brokers []string
	if env := os.Getenv("CHAININTEL_BENCH_KAFKA"); env != "" {
		brokers = strings.Split(env, ",")
	} else {
		var topics []string
		for _, t := range eventsv1.Topics {
			topics = append(topics, t.Name)
		}
		brokers = kafkatest.Broker(b, topics...)
	}
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{BatchSize: 1000, BatchTimeout: 2 * time.Millisecond})
	defer pub.Close()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := pub.Publish(ctx, w.Bootstrap().Events()...); err != nil {
		b.Fatal(err)
	}
	const inFlight = 16
	batches := make(chan []eventbus.Event, inFlight)
	var transfers, events atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range batches {
				if err := pub.Publish(ctx, ev...); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	b.ResetTimer()
	for b.Loop() {
		batch := w.Next(5000)
		transfers.Add(int64(len(batch.Transfers)))
		if transfersOnly {
			batch = &sim.Batch{Transfers: batch.Transfers}
		}
		events.Add(int64(batch.Len()))
		batches <- batch.Events()
	}
	close(batches)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(transfers.Load())/secs, "transfers/s")
	b.ReportMetric(float64(events.Load())/secs, "events/s")
}
