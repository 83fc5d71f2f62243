package feed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const gapTopic = "test.gaps.v1"

// filled publishes n records under one key to a fresh broker's gapTopic and returns the topic
// and the partition they are in (offsets 0 to n-1).
func filled(t *testing.T, n int) (Topic, []string, int) {
	t.Helper()
	brokers := kafkatest.Broker(t, gapTopic)
	tp := Topic{Brokers: brokers, Name: gapTopic}
	publish(t, brokers, "k", n)
	end, err := tp.Offsets(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	for p, e := range end {
		if e == int64(n) {
			return tp, brokers, p
		}
	}
	t.Fatalf("no partition holds the %d records: %v", n, end)
	return tp, brokers, 0
}

func publish(t *testing.T, brokers []string, key string, n int) {
	t.Helper()
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	evs := make([]eventbus.Event, n)
	for i := range evs {
		evs[i] = eventbus.Event{Topic: gapTopic, Key: key, Msg: wrapperspb.String(fmt.Sprint(i))}
	}
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
}

// rangeOffsets reads [from, to) of partition p and returns the offsets read and the gaps.
func rangeOffsets(t *testing.T, tp Topic, p int, from, to int64) ([]int64, []Gap) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []int64
	gaps, err := tp.Range(ctx, p, from, to, func(m kafka.Message) { got = append(got, m.Offset) })
	if err != nil {
		t.Fatal(err)
	}
	return got, gaps
}

// A range whose first records were deleted (as retention does) is read from the first kept
// record, and says which it could not read, rather than passing the kafka-go reader's silent
// skip on as a complete read; one whose records were all deleted, with nothing written after
// them to skip to, ends instead of waiting for a record.
func TestRangeTellsOfDeletedRecords(t *testing.T) {
	tp, brokers, p := filled(t, 10)
	kafkatest.DeleteRecords(t, brokers, gapTopic, int32(p), 4)
	got, gaps := rangeOffsets(t, tp, p, 2, 10)
	if !slices.Equal(got, []int64{4, 5, 6, 7, 8, 9}) || !slices.Equal(gaps, []Gap{{Partition: p, From: 2, To: 4}}) {
		t.Fatalf("read %v with gaps %+v; want 4…9 and the gap [2, 4)", got, gaps)
	}
	got, gaps = rangeOffsets(t, tp, p, 4, 8)
	if !slices.Equal(got, []int64{4, 5, 6, 7}) || len(gaps) > 0 {
		t.Fatalf("read %v with gaps %+v; want 4…7 and no gap", got, gaps)
	}
	kafkatest.DeleteRecords(t, brokers, gapTopic, int32(p), 10)
	got, gaps = rangeOffsets(t, tp, p, 6, 10)
	if len(got) > 0 || !slices.Equal(gaps, []Gap{{Partition: p, From: 6, To: 10}}) {
		t.Fatalf("read %v with gaps %+v; want nothing and the gap [6, 10)", got, gaps)
	}
}

// A range of a partition whose log now ends below it (the topic deleted and recreated) ends
// with a reset gap pointing at the new log's start, instead of waiting for the new log to grow
// to the range's end.
func TestRangeTellsOfAReset(t *testing.T) {
	tp, brokers, p := filled(t, 10)
	kafkatest.RecreateTopic(t, brokers, gapTopic)
	publish(t, brokers, "k", 3)
	got, gaps := rangeOffsets(t, tp, p, 5, 10)
	if len(gaps) != 1 || !gaps[0].Reset || gaps[0].To != 0 || gaps[0].Partition != p {
		t.Fatalf("read %v with gaps %+v; want a reset gap to 0", got, gaps)
	}
}

// follower follows tp from start and records what it reads and the gaps it tells of.
type follower struct {
	mu   sync.Mutex
	offs []int64
	gaps []Gap
}

func (f *follower) follow(t *testing.T, tp Topic, start map[int]int64) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tp.Follow(ctx, start, func(m kafka.Message) {
			f.mu.Lock()
			f.offs = append(f.offs, m.Offset)
			f.mu.Unlock()
		}, func(g Gap) {
			f.mu.Lock()
			f.gaps = append(f.gaps, g)
			f.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// waitRead waits until the follower has read n records and returns them and the gaps.
func (f *follower) waitRead(t *testing.T, n int) ([]int64, []Gap) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.mu.Lock()
		offs, gaps := slices.Clone(f.offs), slices.Clone(f.gaps)
		f.mu.Unlock()
		if len(offs) >= n {
			return offs, gaps
		}
		if time.Now().After(deadline) {
			t.Fatalf("read %v (gaps %+v), want %d records", offs, gaps, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A follower positioned at records retention deleted tells of the gap before the first kept
// record; one whose topic is deleted and recreated under it tells of the reset and reads the
// new log from its start, instead of waiting until the new log grows past its position.
func TestFollowTellsOfGapsAndReadsARecreatedTopic(t *testing.T) {
	tp, brokers, p := filled(t, 10)
	kafkatest.DeleteRecords(t, brokers, gapTopic, int32(p), 6)
	var f follower
	f.follow(t, tp, map[int]int64{p: 3})
	offs, gaps := f.waitRead(t, 4)
	if !slices.Equal(offs, []int64{6, 7, 8, 9}) || !slices.Equal(gaps, []Gap{{Partition: p, From: 3, To: 6}}) {
		t.Fatalf("read %v with gaps %+v; want 6…9 after the gap [3, 6)", offs, gaps)
	}
	kafkatest.RecreateTopic(t, brokers, gapTopic)
	publish(t, brokers, "k", 3)
	offs, gaps = f.waitRead(t, 7)
	if !slices.Equal(offs, []int64{6, 7, 8, 9, 0, 1, 2}) || !slices.Equal(gaps, []Gap{{Partition: p, From: 3, To: 6}, {Partition: p, From: 10, To: 0, Reset: true}}) {
		t.Fatalf("read %v with gaps %+v; want 6…9, then the reset at 10 and 0…2", offs, gaps)
	}
}
