package streamfanout_test

import (
	"context"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/coder/websocket"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// TestAddedPartitionIsStreamed: partitions added to the transfer topic while a replica runs are
// read without a restart: a connected client gets a transfer published on one, and a session
// saved before the partition was added, reconnecting after, is sent it once (its saved
// position does not name the partition, so all it holds was published since).
func TestAddedPartitionIsStreamed(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	from := addr(90)
	live := w.dial(r, ident("ap"), "")
	liveFilter, _ := live.subscribe(map[string]any{"from": []string{from}})
	away := w.dial(r, ident("ap2"), "")
	awayFilter, sess := away.subscribe(map[string]any{"from": []string{from}})
	_ = away.c.Close(websocket.StatusNormalClosure, "")
	w.waitReleased(sess)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(w.brokers...), Timeout: 10 * time.Second}
	if _, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: eventsv1.TopicTransfers, Count: 6}}}); err != nil {
		t.Fatal(err)
	}
	tr := transferMsg(from, addr(91), 100)
	b, err := proto.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := kafka.DialLeader(ctx, "tcp", w.brokers[0], eventsv1.TopicTransfers, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.WriteMessages(kafka.Message{Key: []byte(tr.TransactionHash), Value: b, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if id, alert, _ := live.transfer(); id != tr.Id || alert != liveFilter {
		t.Fatalf("the connected client got %s (%s), want %s (%s) from the added partition", id, alert, tr.Id, liveFilter)
	}

	again := w.dial(r, ident("ap2"), "")
	again.send("reconnect", map[string]any{"sessionId": sess})
	if m := again.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	last := transferMsg(from, addr(91), 100)
	w.publishUnder("ap", last)
	got, err := readTransfers(t, again, nil, func(d []delivery) bool { return len(d) > 0 && d[len(d)-1].transfer == last.Id })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (delivery{awayFilter, tr.Id}) {
		t.Fatalf("the resumed session got %v, want %s once and then %s", got, tr.Id, last.Id)
	}
}
