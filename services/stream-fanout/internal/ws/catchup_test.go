package ws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// blockingRanges is a transfer topic whose range reads wait for release, counting the reads
// in flight and the most there were at once.
type blockingRanges struct {
	release         chan struct{}
	reads, inFlight atomic.Int32
	mu              sync.Mutex
	most            int32
}

func newBlockingRanges() *blockingRanges { return &blockingRanges{release: make(chan struct{})} }

func (b *blockingRanges) read(ctx context.Context, _ int, _, _ int64, _ func(kafka.Message)) ([]feed.Gap, error) {
	b.reads.Add(1)
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	b.mu.Lock()
	b.most = max(b.most, n)
	b.mu.Unlock()
	select {
	case <-b.release:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blockingRanges) mostAtOnce() int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most
}

// waitInFlight waits until n reads are in flight, then a little longer, to see that no more
// start.
func (b *blockingRanges) waitInFlight(t *testing.T, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.inFlight.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d catch-ups reading, want %d", b.inFlight.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if got := b.inFlight.Load(); got != n {
		t.Fatalf("%d catch-ups reading at once, want at most %d", got, n)
	}
}

// catchUpAll runs the catch-ups of conns side by side, each owed partition 0's offsets 0 to
// 10, and returns their errors once all are done.
func catchUpAll(conns []*conn) <-chan error {
	errs := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			_, _, err := c.catchUp(c.sub, map[int]int64{0: 0}, map[int]int64{0: 10})
			errs <- err
		}()
	}
	return errs
}

// A replica reads the topic back for at most CatchUpParallel resumes at once, whatever the
// keys: each catch-up holds what it read until it is done, so resumes arriving together (a
// key's 20 connections, many keys after a replica went away) wait their turn.
func TestCatchUpsAtOnceAreBounded(t *testing.T) {
	h := additionsHub(t, nil)
	h.o.CatchUpParallel = 2
	h.catchUps = make(chan struct{}, 2)
	ranges := newBlockingRanges()
	h.rangeRead = ranges.read
	var conns []*conn
	for i := range 5 {
		c, _ := liveConn(t, h, fmt.Sprintf("u%d", i), `{"from":["`+testAddr(1)+`"]}`)
		conns = append(conns, c)
	}
	errs := catchUpAll(conns)
	ranges.waitInFlight(t, 2)
	close(ranges.release)
	for range conns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if most, reads := ranges.mostAtOnce(), ranges.reads.Load(); most != 2 || reads != 5 {
		t.Fatalf("%d catch-ups read at once (%d in all), want at most 2 (5 in all)", most, reads)
	}
	if len(h.catchUpKeys) != 0 || len(h.catchUps) != 0 {
		t.Fatalf("catch-up turns left behind: %d keys, %d held", len(h.catchUpKeys), len(h.catchUps))
	}
}

// One key's resumes read the topic back one at a time, leaving the replica's other turns to
// other keys.
func TestCatchUpsOfOneKeyTakeTurns(t *testing.T) {
	h := additionsHub(t, nil)
	h.catchUps = make(chan struct{}, 4)
	ranges := newBlockingRanges()
	h.rangeRead = ranges.read
	var conns []*conn
	for i := range 3 {
		c, _ := liveConn(t, h, fmt.Sprintf("u%d", i), `{"from":["`+testAddr(1)+`"]}`)
		c.id.KeyID = "k"
		conns = append(conns, c)
	}
	other, _ := liveConn(t, h, "other", `{"from":["`+testAddr(1)+`"]}`)
	errs := catchUpAll(append(conns, other))
	ranges.waitInFlight(t, 2) // one of key k's, and the other key's, of 4 turns
	close(ranges.release)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if reads := ranges.reads.Load(); reads != 4 {
		t.Fatalf("%d catch-ups read, want 4", reads)
	}
}

// A resume waiting for its turn gives up when its connection ends (a take-over, the replica
// shutting down), without reading anything.
func TestCatchUpWaitEndsWithItsConnection(t *testing.T) {
	h := additionsHub(t, nil)
	h.catchUps = make(chan struct{}, 1)
	ranges := newBlockingRanges()
	h.rangeRead = ranges.read
	first, _ := liveConn(t, h, "a", `{"from":["`+testAddr(1)+`"]}`)
	waiting, _ := liveConn(t, h, "b", `{"from":["`+testAddr(1)+`"]}`)
	errs := catchUpAll([]*conn{first})
	ranges.waitInFlight(t, 1)
	done := catchUpAll([]*conn{waiting})
	time.Sleep(50 * time.Millisecond)
	waiting.cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting catch-up ended with %v, want context.Canceled", err)
	}
	close(ranges.release)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if reads := ranges.reads.Load(); reads != 1 {
		t.Fatalf("%d reads, want 1 (the cancelled catch-up read nothing)", reads)
	}
}

// transferMsg is record off of partition part: a transfer from from, taken by the broker at at.
func transferMsg(t *testing.T, part int, off int64, id, from string, at time.Time) kafka.Message {
	t.Helper()
	v, err := proto.Marshal(&eventsv1.Transfer{Id: id, Chain: "ethereum", TransactionHash: "0x" + strings.Repeat("ab", 32),
		BlockHash: "0x" + strings.Repeat("cd", 32), BlockTimeMs: at.UnixMilli(), From: from, To: testAddr(99), Amount: "1"})
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Partition: part, Offset: off, Time: at, Value: v}
}

// A catch-up sends what matched in the order the broker took the records (then partition,
// then offset), skips a copy of a transfer at a higher offset of its partition even when the
// broker took it earlier (the live feed reads offsets in order), and sends nothing of a
// partition found reset.
func TestCatchUpOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := engine.New(engine.Options{Copies: 1024})
	go func() { _ = e.Run(ctx) }()
	h := NewHub(Options{Engine: e, Log: slog.New(slog.DiscardHandler)})
	c, sub := liveConn(t, h, "u", `{"from":["`+testAddr(1)+`"]}`)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	in, other := testAddr(1), testAddr(2)
	topic := map[int][]kafka.Message{
		0: {transferMsg(t, 0, 10, "a", in, at(1)), transferMsg(t, 0, 11, "b", other, at(2)), transferMsg(t, 0, 12, "c", in, at(4)),
			transferMsg(t, 0, 13, "a", in, at(0))}, // a copy of "a", its broker time earlier
		1: {transferMsg(t, 1, 5, "d", in, at(1)), transferMsg(t, 1, 6, "e", in, at(3))},
		2: {transferMsg(t, 2, 0, "f", in, at(2))},
	}
	h.rangeRead = func(_ context.Context, part int, from, to int64, handle func(kafka.Message)) ([]feed.Gap, error) {
		for _, m := range topic[part] {
			handle(m)
		}
		if part == 2 {
			return []feed.Gap{{Partition: 2, From: 1, To: 0, Reset: true}}, nil
		}
		return nil, nil
	}
	items, gaps, err := c.catchUp(sub, map[int]int64{0: 10, 1: 5, 2: 0}, map[int]int64{0: 14, 1: 7, 2: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d/%d", it.R.Part, it.R.Off))
	}
	if want := "0/10 1/5 1/6 0/12"; strings.Join(got, " ") != want {
		t.Fatalf("caught up %v, want %s", got, want)
	}
	if len(gaps) != 1 || !gaps[0].Reset || gaps[0].From != 0 {
		t.Fatalf("gaps %+v, want partition 2's reset, told from the resumed position 0", gaps)
	}
}

// A catch-up matches the records as it reads them and keeps what matched: the transfers that
// match nothing are let go while it reads on, instead of being held until the read is done
// (up to MaxCatchUp records of every catch-up running).
func TestCatchUpHoldsOnlyWhatMatched(t *testing.T) {
	h := additionsHub(t, nil)
	h.o.Log = slog.New(slog.DiscardHandler)
	c, sub := liveConn(t, h, "u", `{"from":["`+testAddr(1)+`"]}`)
	const n = 20_000
	var grew int64
	h.rangeRead = func(_ context.Context, part int, from, to int64, handle func(kafka.Message)) ([]feed.Gap, error) {
		msgs := make([]kafka.Message, n)
		at := time.Now()
		for i := range msgs {
			msgs[i] = transferMsg(t, part, from+int64(i), fmt.Sprintf("t%d", i), testAddr(2), at)
		}
		before := heapInUse()
		for i := range msgs {
			handle(msgs[i])
		}
		grew = heapInUse() - before
		runtime.KeepAlive(msgs)
		return nil, nil
	}
	items, _, err := c.catchUp(sub, map[int]int64{0: 0}, map[int]int64{0: n})
	if err != nil || len(items) != 0 {
		t.Fatalf("caught up %d, %v; want nothing matched", len(items), err)
	}
	// Held until the read is done, the decoded transfers are over 7 MB; matched as they are
	// read, at most a chunk of them is.
	if grew > 2<<20 {
		t.Fatalf("the heap grew %d KiB while %d transfers that match nothing were read, want under 2 MiB", grew>>10, n)
	}
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A partition with more records to read back than MaxCatchUp is not read, and is told as a
// replay gap (catchUpLimit) from the session's position to where it resumes, beside the
// partitions that were read.
func TestCatchUpOverLimitIsAGap(t *testing.T) {
	h := additionsHub(t, nil)
	h.o.Log = slog.New(slog.DiscardHandler)
	h.o.MaxCatchUp = 5
	c, sub := liveConn(t, h, "u", `{"from":["`+testAddr(1)+`"]}`)
	at := time.Now()
	var asked []int
	h.rangeRead = func(_ context.Context, part int, from, to int64, handle func(kafka.Message)) ([]feed.Gap, error) {
		asked = append(asked, part)
		for off := from; off < to; off++ {
			handle(transferMsg(t, part, off, fmt.Sprintf("t%d-%d", part, off), testAddr(1), at))
		}
		return nil, nil
	}
	items, read, err := c.catchUp(sub, map[int]int64{0: 0, 1: 100}, map[int]int64{0: 3, 1: 110})
	if err == nil || !slices.Equal(asked, []int{0}) || len(items) != 3 {
		t.Fatalf("read partitions %v, caught up %d, %v; want partition 0's 3 and an error naming partition 1", asked, len(items), err)
	}
	want := []replayGap{{Partition: 1, SavedOffset: 100, ResumedAt: 110, Reason: GapCatchUpLimit, found: foundRead}}
	if got := readGaps(nil, read); !slices.Equal(got, want) {
		t.Fatalf("gaps %+v, want %+v", got, want)
	}
}
