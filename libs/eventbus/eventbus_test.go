package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func startBroker(t *testing.T, topics ...string) []string {
	t.Helper()
	b, err := StartEmbeddedBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	var specs []TopicSpec
	for _, tp := range topics {
		specs = append(specs, TopicSpec{Name: tp, Partitions: 3})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := EnsureTopics(ctx, b.Addrs(), Security{}, 1, specs); err != nil {
		t.Fatal(err)
	}
	// Creating again is a no-op.
	if err := EnsureTopics(ctx, b.Addrs(), Security{}, 1, specs); err != nil {
		t.Fatal(err)
	}
	return b.Addrs()
}

type collector struct {
	mu   sync.Mutex
	got  []Message[*wrapperspb.StringValue]
	fail int // fail this many calls first
}

func (c *collector) handle(_ context.Context, batch []Message[*wrapperspb.StringValue]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail > 0 {
		c.fail--
		return errors.New("database down")
	}
	c.got = append(c.got, batch...)
	return nil
}

func (c *collector) wait(t *testing.T, n int) []Message[*wrapperspb.StringValue] {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		if len(c.got) >= n {
			out := append([]Message[*wrapperspb.StringValue](nil), c.got...)
			c.mu.Unlock()
			return out
		}
		c.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("got %d records, want %d", len(c.got), n)
	return nil
}

func runConsumer(t *testing.T, brokers []string, topic, group string, col *collector, opts ...func(*ConsumerOptions)) context.CancelFunc {
	t.Helper()
	o := ConsumerOptions{Brokers: brokers, Group: group, Topic: topic, Logger: quiet, Propagator: propagation.TraceContext{}}
	for _, f := range opts {
		f(&o)
	}
	return runHandler(t, o, col.handle)
}

// runHandler runs a consumer with handler h until the returned stop (or the test's end).
func runHandler(t *testing.T, o ConsumerOptions, h Handler[*wrapperspb.StringValue]) context.CancelFunc {
	t.Helper()
	c := NewConsumer(o, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} }, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		select {
		case <-ctx.Done():
		default:
			stop()
		}
	})
	return stop
}

func TestRoundTripWithTraceContext(t *testing.T) {
	brokers := startBroker(t, "test.roundtrip.v1")
	tp := sdktrace.NewTracerProvider()
	pub := NewPublisher(brokers, PublisherOptions{TracerProvider: tp, Propagator: propagation.TraceContext{}})
	defer pub.Close()

	ctx, span := tp.Tracer("test").Start(context.Background(), "origin")
	var evs []Event
	for i := range 50 {
		evs = append(evs, Event{Topic: "test.roundtrip.v1", Key: fmt.Sprintf("k%d", i%7), Msg: wrapperspb.String(fmt.Sprint(i)), ID: fmt.Sprintf("id-%d", i)})
	}
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	span.End()

	col := &collector{}
	runConsumer(t, brokers, "test.roundtrip.v1", "g1", col)
	got := col.wait(t, 50)
	seen := map[string]bool{}
	perKey := map[string][]string{}
	for _, m := range got {
		if m.EventType != "google.protobuf.StringValue" {
			t.Fatalf("event type %q", m.EventType)
		}
		if trace.SpanContextFromContext(m.Ctx).TraceID() != span.SpanContext().TraceID() {
			t.Fatalf("trace context lost on %s", m.EventID)
		}
		seen[m.EventID] = true
		perKey[m.Key] = append(perKey[m.Key], m.Msg.Value)
	}
	if len(seen) != 50 {
		t.Fatalf("distinct events %d", len(seen))
	}
	// Same key, same partition: order kept per key.
	for k, vs := range perKey {
		for i := 1; i < len(vs); i++ {
			var a, b int
			fmt.Sscan(vs[i-1], &a)
			fmt.Sscan(vs[i], &b)
			if a > b {
				t.Fatalf("key %s out of order: %v", k, vs)
			}
		}
	}
}

func TestUndecodableGoesToDLQ(t *testing.T) {
	brokers := startBroker(t, "test.dlq.v1")
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Balancer: &kafka.Hash{}, BatchTimeout: time.Millisecond}
	defer w.Close()
	err := w.WriteMessages(context.Background(),
		kafka.Message{Topic: "test.dlq.v1", Key: []byte("a"), Value: []byte{0xff, 0xff, 0xff}},
	)
	if err != nil {
		t.Fatal(err)
	}
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	if err := pub.Publish(context.Background(), Event{Topic: "test.dlq.v1", Key: "a", Msg: wrapperspb.String("good")}); err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	runConsumer(t, brokers, "test.dlq.v1", "g-dlq", col)
	got := col.wait(t, 1)
	if got[0].Msg.Value != "good" {
		t.Fatalf("got %v", got[0].Msg.Value)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: "test.dlq.v1.dlq", Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if header(m.Headers, HeaderError) == "" || string(m.Value) != "\xff\xff\xff" {
		t.Fatalf("dead letter %+v", m)
	}
}

func TestHandlerFailureRetriesAndCommitsOnlyAfterSuccess(t *testing.T) {
	brokers := startBroker(t, "test.retry.v1")
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	for i := range 10 {
		if err := pub.Publish(context.Background(), Event{Topic: "test.retry.v1", Key: fmt.Sprint(i), Msg: wrapperspb.String(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	col := &collector{fail: 2}
	stop := runConsumer(t, brokers, "test.retry.v1", "g-retry", col)
	col.wait(t, 10)
	stop()
	// Everything was committed: the group's offsets are the partitions' ends (read from the
	// broker, not inferred from what a second member did not receive within some time).
	checkCommittedToEnd(t, brokers, "test.retry.v1", "g-retry", 3)

	// A new member of the same group starts from those offsets: the first record it gets is the
	// one published after, not an old one of its partition.
	if err := pub.Publish(context.Background(), Event{Topic: "test.retry.v1", Key: "x", Msg: wrapperspb.String("after")}); err != nil {
		t.Fatal(err)
	}
	col2 := &collector{}
	runConsumer(t, brokers, "test.retry.v1", "g-retry", col2)
	if got := col2.wait(t, 1); len(got) != 1 || got[0].Msg.Value != "after" {
		t.Fatalf("redelivered committed records: %d, the first %q", len(got), got[0].Msg.Value)
	}
}

// checkCommittedToEnd fails t unless group's committed offset on each of the topic's partitions
// is the partition's end.
func checkCommittedToEnd(t *testing.T, brokers []string, topic, group string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second}
	var ps []int
	var ends []kafka.OffsetRequest
	for p := range partitions {
		ps, ends = append(ps, p), append(ends, kafka.LastOffsetOf(p))
	}
	committed, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ps}})
	if err != nil {
		t.Fatal(err)
	}
	last, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: ends}})
	if err != nil {
		t.Fatal(err)
	}
	end := map[int]int64{}
	for _, p := range last.Topics[topic] {
		end[p.Partition] = p.LastOffset
	}
	if len(committed.Topics[topic]) != partitions {
		t.Fatalf("committed offsets %+v, want %d partitions", committed.Topics[topic], partitions)
	}
	for _, p := range committed.Topics[topic] {
		if p.Error != nil || p.CommittedOffset != end[p.Partition] {
			t.Fatalf("partition %d: committed %d (%v), end %d", p.Partition, p.CommittedOffset, p.Error, end[p.Partition])
		}
	}
}

// Broadcast consumers each get every record published after they start, from every partition
// (including one added later), commit nothing and join no consumer group.
func TestBroadcastConsumersGetEveryRecord(t *testing.T) {
	const topic = "test.broadcast.v1"
	brokers := startBroker(t, topic)
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	ctx := context.Background()
	if err := pub.Publish(ctx, Event{Topic: topic, Key: "old", Msg: wrapperspb.String("before")}); err != nil {
		t.Fatal(err)
	}
	cols := []*collector{{}, {}}
	for _, col := range cols {
		runConsumer(t, brokers, topic, "", col, func(o *ConsumerOptions) { o.Broadcast = true })
	}
	// A consumer starts at the newest offsets once it runs: publish probes until both have one.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		if err := pub.Publish(ctx, Event{Topic: topic, Key: fmt.Sprint("probe", i), Msg: wrapperspb.String("probe")}); err != nil {
			t.Fatal(err)
		}
		ready := true
		for _, col := range cols {
			col.mu.Lock()
			ready = ready && len(col.got) > 0
			col.mu.Unlock()
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("broadcast consumers never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var evs []Event
	for i := range 30 {
		evs = append(evs, Event{Topic: topic, Key: fmt.Sprint("k", i), Msg: wrapperspb.String(fmt.Sprint("v", i))})
	}
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	// A partition added while they run is read from its first record.
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	if _, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}}); err != nil {
		t.Fatal(err)
	}
	m, err := encode(Event{Topic: topic, Key: "new", Msg: wrapperspb.String("new partition")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.Topic = ""
	if _, err := conn.WriteMessages(m); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for i, col := range cols {
		want := map[string]bool{"new partition": true}
		for _, e := range evs {
			want[e.Msg.(*wrapperspb.StringValue).Value] = true
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			col.mu.Lock()
			got := map[string]int{}
			parts := map[int]bool{}
			for _, m := range col.got {
				got[m.Msg.Value]++
				parts[m.Partition] = true
			}
			col.mu.Unlock()
			if got["before"] > 0 {
				t.Fatalf("consumer %d got a record published before it started", i)
			}
			missing := 0
			for v := range want {
				if got[v] != 1 && v != "probe" {
					missing++
				}
			}
			if missing == 0 && parts[3] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("consumer %d: %d of %d records missing or repeated (%v)", i, missing, len(want), got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	groups, err := client.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 0 {
		t.Fatalf("consumer groups on the broker: %+v", groups.Groups)
	}
}
