package orphans

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/protobuf/proto"
)

// gatedReorgs is a broker holding chain.reorgs.v1 and chain.transfers.v1 (2 partitions each),
// whose fetches of the reorg topic can be held back, as a slow or distant broker would: while
// the gate is shut a reader receives nothing of it, though what is published is taken and the
// topic's ends say so.
type gatedReorgs struct {
	t       *testing.T
	c       *kfake.Cluster
	mu      sync.Mutex
	shut    chan struct{} // nil: open
	held    map[int32]bool
	parts   int
	brokers []string
}

func newGatedReorgs(t *testing.T) *gatedReorgs {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, eventsv1.TopicReorgs, eventsv1.TopicTransfers))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedReorgs{t: t, c: c, parts: 2, brokers: c.ListenAddrs()}
	t.Cleanup(func() { g.open(); c.Close() })
	c.ControlKey(kmsg.Fetch.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		g.mu.Lock()
		shut := g.shut
		reorgs := false
		for _, rt := range r.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == eventsv1.TopicReorgs && shut != nil {
					g.held[rp.Partition], reorgs = true, true
				}
			}
		}
		g.mu.Unlock()
		if reorgs {
			c.SleepControl(func() { <-shut })
		}
		return nil, nil, false
	})
	return g
}

// close shuts the gate and waits until a fetch of every partition is held: from then on no
// reader has a fetch under way that could return what is published next.
func (g *gatedReorgs) close() {
	g.t.Helper()
	g.mu.Lock()
	g.shut, g.held = make(chan struct{}), map[int32]bool{}
	g.mu.Unlock()
	waitUntil(g.t, "a fetch of every partition held", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.held) == g.parts
	})
}

// open lets the held fetches, and every fetch after them, through.
func (g *gatedReorgs) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

// publish writes r to the partition the key "ethereum" is hashed to, as ingest does.
func (g *gatedReorgs) publish(r *eventsv1.Reorg) {
	g.t.Helper()
	b, err := proto.Marshal(r)
	if err != nil {
		g.t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(g.brokers...), Topic: eventsv1.TopicReorgs, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(r.GetChain()), Value: b}); err != nil {
		g.t.Fatal(err)
	}
}

// transfer writes a record to partition 0 of the transfer topic and returns its offset: the
// record whose decision a test asks for.
func (g *gatedReorgs) transfer() int64 {
	g.t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(g.brokers...), Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := cl.Produce(ctx, &kafka.ProduceRequest{Topic: eventsv1.TopicTransfers, Partition: 0, RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte("transfer"))})})
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		g.t.Fatal(err)
	}
	return resp.BaseOffset
}

// follow starts s following the broker's reorg topic, waiting until it has loaded it.
func (g *gatedReorgs) follow(s *Set, logs *logtest.Buffer) {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	loaded := make(chan struct{})
	log := slog.New(slog.NewTextHandler(logs, nil))
	go func() {
		done <- s.Follow(ctx, feed.Topic{Brokers: g.brokers, Name: eventsv1.TopicReorgs, Log: log},
			feed.Topic{Brokers: g.brokers, Name: eventsv1.TopicTransfers, Log: log}, log, func() { close(loaded) })
	}()
	g.t.Cleanup(func() {
		g.open()
		cancel()
		if err := <-done; err != nil {
			g.t.Error(err)
		}
	})
	select {
	case <-loaded:
	case err := <-done:
		g.t.Fatal(err)
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSkipWaitsForTheReorgsBeforeTheRecord: transfers of a marked block written after a Reorg
// naming the block canonical again are not skipped, though the replica's reorg reader gets
// that Reorg only later: the decision waits for it, one check of the topics' ends serving the
// burst of them. A transfer of a block still orphaned is skipped, the check finding nothing
// more to read, and a transfer the checks so far cover is decided on without one.
func TestSkipWaitsForTheReorgsBeforeTheRecord(t *testing.T) {
	g := newGatedReorgs(t)
	s := New(time.Hour, nil)
	logs := &logtest.Buffer{}
	g.follow(s, logs)
	g.publish(reorg("ethereum", []string{"0xaa", "0xbb"}, nil))
	waitUntil(t, "0xaa and 0xbb marked", func() bool { return s.Orphaned("ethereum", "0xaa") && s.Orphaned("ethereum", "0xbb") })

	g.close()
	if off := g.transfer(); !s.SkipRecord("ethereum", "0xbb", 0, off) || s.Checks() != 1 {
		t.Fatalf("a transfer of a block still orphaned: not skipped, or %d checks", s.Checks())
	}
	g.publish(reorg("ethereum", nil, []string{"0xaa"}))
	const burst = 20
	offs := make([]int64, burst)
	for i := range offs {
		offs[i] = g.transfer()
	}
	skipped := make(chan bool, burst)
	for _, off := range offs {
		go func() { skipped <- s.SkipRecord("ethereum", "0xaa", 0, off) }()
	}
	waitUntil(t, "the burst's check started", func() bool { return s.Checks() >= 2 })
	select {
	case <-skipped:
		t.Fatal("a transfer of the block was decided on before the Reorg naming it canonical again was read")
	default:
	}
	g.open()
	for range burst {
		if <-skipped {
			t.Fatal("a transfer of a block named canonical again before it was written was skipped")
		}
	}
	if s.Checks() != 2 || s.Unsettled() != 0 {
		t.Fatalf("%d checks (want one for the burst), %d unsettled", s.Checks(), s.Unsettled())
	}
	if !s.SkipRecord("ethereum", "0xbb", 0, offs[0]) || s.Orphaned("ethereum", "0xaa") || s.Checks() != 2 {
		t.Fatalf("0xbb still orphaned (decided on without a check: %d), 0xaa canonical", s.Checks())
	}
}

// TestSkipWaitIsBounded: when the reorg topic cannot be read up to its end within the bound, a
// transfer of a marked block is decided with the reorgs read so far, counted and logged, and
// the decisions after it do not wait until a check succeeds again.
func TestSkipWaitIsBounded(t *testing.T) {
	g := newGatedReorgs(t)
	s := New(time.Hour, nil)
	s.wait = 300 * time.Millisecond
	logs := &logtest.Buffer{}
	g.follow(s, logs)
	g.publish(reorg("ethereum", []string{"0xaa"}, nil))
	waitUntil(t, "0xaa marked", func() bool { return s.Orphaned("ethereum", "0xaa") })

	g.close()
	g.publish(reorg("ethereum", nil, []string{"0xaa"}))
	off := g.transfer()
	if !s.SkipRecord("ethereum", "0xaa", 0, off) || s.Unsettled() != 1 {
		t.Fatalf("decided with the reorgs read so far: skipped; %d unsettled", s.Unsettled())
	}
	if !strings.Contains(logs.String(), "the reorg topic was not read up to its end in time") {
		t.Fatalf("not logged:\n%s", logs.String())
	}
	if !s.SkipRecord("ethereum", "0xaa", 0, off) || s.Unsettled() != 2 {
		t.Fatalf("while failing: skipped; %d unsettled", s.Unsettled())
	}
	g.open()
	waitUntil(t, "0xaa canonical again", func() bool { return !s.Orphaned("ethereum", "0xaa") })
	waitUntil(t, "a check succeeding again", func() bool { return s.Settle(context.Background(), map[int]int64{0: off + 1}) })
	if !strings.Contains(logs.String(), "decidedWithoutWaiting=2") {
		t.Fatalf("the recovery not logged with its count:\n%s", logs.String())
	}
}
