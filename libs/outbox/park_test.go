package outbox

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// parkedRows returns the parked rows' ids and reasons.
func parkedRows(t *testing.T) (ids []int64, reasons []string) {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), query("parked"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var reason string
		if err := rows.Scan(&id, &reason); err != nil {
			t.Fatal(err)
		}
		ids, reasons = append(ids, id), append(reasons, reason)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, reasons
}

// A row larger than the broker's message.max.bytes is parked, with the broker's answer, counted
// and kept by pruning; the rows of its batch before and after it, and rows written later, are
// published in order of writing.
func TestRowTheBrokerRefusesIsParked(t *testing.T) {
	ctx := context.Background()
	tb := table(t)
	brokers := kafkatest.BrokerWith(t, eventbus.EmbeddedOptions{MaxMessageBytes: 4096}, topicNames)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })
	mp, scrape := exported(t)
	relay := NewRelay(tb, pub, msgs, Options{Logger: quiet, Meter: mp.Meter("test")})

	got := make(chan string, 16)
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "test", Topic: topicNames, Logger: quiet},
		func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(_ context.Context, b []eventbus.Message[*wrapperspb.StringValue]) error {
			for _, m := range b {
				got <- m.Msg.GetValue()
			}
			return nil
		})
	cctx, ccancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = cons.Run(cctx) })
	t.Cleanup(func() { ccancel(); wg.Wait() })

	// One key, so the rows share a partition, and the large row shares the others' record batch.
	big := strings.Repeat("x", 8192)
	write(t, topicNames, []string{"k", "k", "k", "k"}, wrapperspb.String("a"), wrapperspb.String(big),
		wrapperspb.String("c"), wrapperspb.String("d"))
	if err := relay.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	write(t, topicNames, []string{"k"}, wrapperspb.String("e"))
	if err := relay.Drain(ctx); err != nil {
		t.Fatalf("drain after the parked row: %v", err)
	}

	var values []string
	timeout := time.After(20 * time.Second)
	for len(values) < 4 {
		select {
		case v := <-got:
			values = append(values, v)
		case <-timeout:
			t.Fatalf("got %v, want a, c, d, e", values)
		}
	}
	if want := []string{"a", "c", "d", "e"}; !slices.Equal(values, want) {
		t.Fatalf("published %v, want %v", values, want)
	}
	if n := pending(t); n != 0 {
		t.Fatalf("%d rows pending", n)
	}
	ids, reasons := parkedRows(t)
	if len(ids) != 1 || !strings.Contains(reasons[0], "Message Size Too Large") {
		t.Fatalf("parked rows %v %q; want the large one, with the broker's answer", ids, reasons)
	}
	if v, ok := scrape().Value("outbox_parked_total", map[string]string{"outbox": "relaytest.outbox"}); !ok || v != 1 {
		t.Fatalf("outbox_parked_total = %v (exported: %v), want 1", v, ok)
	}
	if n, err := tb.PruneOutbox(ctx, time.Now().Add(time.Minute)); err != nil || n != 4 {
		t.Fatalf("pruned %d rows (%v), want the 4 sent", n, err)
	}
	if again, _ := parkedRows(t); !slices.Equal(again, ids) {
		t.Fatalf("parked rows after pruning %v, want %v", again, ids)
	}
}
