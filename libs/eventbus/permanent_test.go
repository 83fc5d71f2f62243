package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestPermanent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{io.EOF, false},
		{fmt.Errorf("publish 3 events: %w", kafka.MessageTooLargeError{}), true},
		{fmt.Errorf("publish: %w", kafka.MessageSizeTooLarge), true},
		{kafka.InvalidTopic, true},
		{fmt.Errorf("publish 2 events (1 failed): %w", kafka.WriteErrors{nil, kafka.InvalidRecord}), true},
		{kafka.WriteErrors{kafka.LeaderNotAvailable, nil}, false},
		// Kafka counts a corrupt record retriable: damaged on the way, it arrives whole again.
		{kafka.InvalidMessage, false},
		{kafka.TopicAuthorizationFailed, false},
	} {
		if got := Permanent(tc.err); got != tc.want {
			t.Errorf("Permanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// smallBroker starts a broker whose message.max.bytes is maxBytes, with topics of one partition.
func smallBroker(t *testing.T, maxBytes int, topics ...string) []string {
	t.Helper()
	b, err := StartEmbeddedBrokerWith(EmbeddedOptions{MaxMessageBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	specs := make([]TopicSpec, len(topics))
	for i, tp := range topics {
		specs[i] = TopicSpec{Name: tp, Partitions: 1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := EnsureTopics(ctx, b.Addrs(), Security{}, 1, specs); err != nil {
		t.Fatal(err)
	}
	return b.Addrs()
}

// readAll reads partition 0 of topic up to its end.
func readAll(t *testing.T, brokers []string, topic string) []kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(brokers...)}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0)}}})
	if err != nil {
		t.Fatal(err)
	}
	end := resp.Topics[topic][0].LastOffset
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	var out []kafka.Message
	for int64(len(out)) < end {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read %s after %d of %d: %v", topic, len(out), end, err)
		}
		out = append(out, m)
	}
	return out
}

// A record larger than the broker's message.max.bytes fails its whole record batch; Isolate
// singles it out and publishes the others of the call, in order.
func TestIsolateSetsTheTooLargeRecordApart(t *testing.T) {
	brokers := smallBroker(t, 4096, "test.isolate.v1")
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	ctx := context.Background()
	var evs []Event
	for _, v := range []string{"a", strings.Repeat("x", 8192), "c", "d"} {
		evs = append(evs, Event{Topic: "test.isolate.v1", Key: "k", Msg: wrapperspb.String(v)})
	}
	if err := pub.Publish(ctx, evs...); !Permanent(err) {
		t.Fatalf("publish with a record over message.max.bytes: %v; want a permanent error", err)
	}
	refused, done, err := Isolate(ctx, pub, evs)
	if err != nil || done != len(evs) || len(refused) != 1 || refused[0].Index != 1 || !Permanent(refused[0].Err) {
		t.Fatalf("Isolate: refused %+v, done %d, %v; want the second refused for good, all done", refused, done, err)
	}
	var got []string
	for _, m := range readAll(t, brokers, "test.isolate.v1") {
		var v wrapperspb.StringValue
		if err := proto.Unmarshal(m.Value, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Value)
	}
	if want := "a c d"; strings.Join(got, " ") != want {
		t.Fatalf("published %q, want %q", got, want)
	}
}

// Isolate stops at a failure that is not permanent, saying from where on nothing was published.
func TestIsolateStopsAtATransientFailure(t *testing.T) {
	down := errors.New("broker unreachable")
	pub := publishFunc(func(evs ...Event) error {
		for _, e := range evs {
			switch e.Key {
			case "big":
				return fmt.Errorf("publish: %w", kafka.MessageSizeTooLarge)
			case "down":
				return down
			}
		}
		return nil
	})
	evs := []Event{{Key: "a"}, {Key: "big"}, {Key: "b"}, {Key: "down"}, {Key: "c"}}
	refused, done, err := Isolate(context.Background(), pub, evs)
	// b went in the call that failed: it is to be published again with the rest.
	if !errors.Is(err, down) || done != 2 || len(refused) != 1 || refused[0].Index != 1 {
		t.Fatalf("Isolate: refused %+v, done %d, %v; want big refused, 2 done, then the failure", refused, done, err)
	}
}

type publishFunc func(evs ...Event) error

func (f publishFunc) Publish(_ context.Context, evs ...Event) error { return f(evs...) }

// An undecodable record the dead-letter topic refuses for good (its headers take it over
// message.max.bytes) is dropped and logged; the other dead letters of its batch are written and
// the consumer goes on, rather than fail on the same batch at every start.
func TestDeadLetterTheTopicRefusesIsDropped(t *testing.T) {
	const maxBytes = 2048
	brokers := smallBroker(t, maxBytes, "test.dlqbig.v1")
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Balancer: &kafka.Hash{}, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx := context.Background()
	// Fits the topic alone; with the dead-letter headers it does not.
	big := []byte(strings.Repeat("\xff", maxBytes-100))
	for _, v := range [][]byte{{0xff, 0xff, 0xff}, big} {
		if err := w.WriteMessages(ctx, kafka.Message{Topic: "test.dlqbig.v1", Key: []byte("k"), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	if err := pub.Publish(ctx, Event{Topic: "test.dlqbig.v1", Key: "k", Msg: wrapperspb.String("good")}); err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	runConsumer(t, brokers, "test.dlqbig.v1", "g-dlqbig", col)
	if got := col.wait(t, 1); got[0].Msg.Value != "good" {
		t.Fatalf("got %v", got[0].Msg.Value)
	}
	dead := readAll(t, brokers, "test.dlqbig.v1.dlq")
	if len(dead) != 1 || string(dead[0].Value) != "\xff\xff\xff" || header(dead[0].Headers, HeaderDLQSource) != "test.dlqbig.v1/0/0" {
		t.Fatalf("dead letters %+v; want the small one alone", dead)
	}
}
