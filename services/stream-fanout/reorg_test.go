package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reorg publishes a Reorg of ethereum orphaning the blocks orphaned and naming canonical again
// the blocks canonical, as ingest does.
func (w *world) reorg(orphaned, canonical []string) {
	w.t.Helper()
	blocks := func(hashes []string) []*eventsv1.Reorg_Block {
		var out []*eventsv1.Reorg_Block
		for i, h := range hashes {
			out = append(out, &eventsv1.Reorg_Block{Number: uint64(100 + i), Hash: h})
		}
		return out
	}
	r := &eventsv1.Reorg{Chain: "ethereum", CommonAncestorNumber: 99, CommonAncestorHash: fmt.Sprintf("0x%064x", 99),
		Orphaned: blocks(orphaned), Canonical: blocks(canonical), DetectedAtMs: time.Now().UnixMilli()}
	ctx, cancel := contextWithTimeout(20 * time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicReorgs, Key: "ethereum", Msg: r}); err != nil {
		w.t.Fatal(err)
	}
}

// awayWithOrphans returns transfers from from, published while a client is away: every other
// one in block orphan (a block a reorg then orphans), and the ids of the others, which survive.
func awayWithOrphans(from, orphan string) (all []*eventsv1.Transfer, survivors []string) {
	for i := range 6 {
		tr := transferMsg(from, addr(71), 2)
		if i%2 == 1 {
			tr.BlockHash = orphan
		} else {
			survivors = append(survivors, tr.Id)
		}
		all = append(all, tr)
	}
	return all, survivors
}

// blockHash is a block hash no transfer of transferMsg has.
func blockHash(n int) string { return fmt.Sprintf("0x%064x", 0xdead0000+n) }

// expectDelivered waits until the replica counts want transfers delivered (each charged a
// credit), failing when it counts more.
func expectDelivered(t *testing.T, r *replica, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.metric(t, "stream_transfers_delivered_total")
		if got > want {
			t.Fatalf("%v transfers delivered, want %v", got, want)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v transfers delivered after 10s, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// saveUnsent appends to session sess's replay buffer a delivery for filter fid of a transfer of
// each block of blocks, as a connection's save renders them, and returns their ids.
func (w *world) saveUnsent(sess, fid string, blocks ...string) []string {
	w.t.Helper()
	var ids []string
	for _, b := range blocks {
		tr := transferMsg(addr(70), addr(71), 2)
		ids = append(ids, tr.Id)
		msg, err := json.Marshal(map[string]any{"type": "transfer", "payload": map[string]any{"alertId": fid,
			"transfer": map[string]any{"id": tr.Id, "chain": tr.Chain, "transactionHash": tr.TransactionHash, "blockHash": b}}})
		if err != nil {
			w.t.Fatal(err)
		}
		if err := w.rdb.RPush(context.Background(), w.prefix+"r:"+sess, msg).Err(); err != nil {
			w.t.Fatal(err)
		}
	}
	return ids
}

// TestReconnectSkipsOrphanedTransfers: a session's reconnect after a reorg replays only the
// transfers of blocks that survived it, from its replay buffer and from the topic, and only
// those are charged.
func TestReconnectSkipsOrphanedTransfers(t *testing.T) {
	w := newWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	r := w.start(nil)
	from := addr(70)
	c := w.dial(r, ident("kro"), "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(71), 1))
	c.transfer()
	_ = c.c.CloseNow()
	orphan := blockHash(1)
	// Deliveries a connection had not written when it ended are saved rendered in the session's
	// replay buffer, as these two are here: the one of the block the reorg below orphans is not
	// replayed.
	w.waitReleased(sess)
	saved := w.saveUnsent(sess, fid, blockHash(7), orphan)
	survivors := []string{saved[0]}
	away, caught := awayWithOrphans(from, orphan)
	survivors = append(survivors, caught...)
	w.publish(away...)
	w.reorg([]string{orphan, blockHash(2)}, nil)
	waitForLog(t, logs, "orphanedBlocks=2")

	c2 := w.dial(r, ident("kro"), "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	if m := c2.next(); m.Type != "ack" {
		t.Fatalf("reconnect: %s", m.raw)
	}
	for i, want := range survivors {
		if got, alert, _ := c2.transfer(); got != want || alert != fid {
			t.Fatalf("replay %d: %s (%s), want %s (%s)", i, got, alert, want, fid)
		}
	}
	sentinel(t, w, c2, from)
	expectDelivered(t, r, float64(1+len(survivors)+1))
}

// TestV2ResumeSkipsOrphanedTransfers: a v2 stream connected again after a reorg replays only
// the transfers of blocks that survived it.
func TestV2ResumeSkipsOrphanedTransfers(t *testing.T) {
	w := newWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	r := w.start(nil)
	me := ident("kro2")
	from := addr(72)
	var made struct {
		StreamID string `json:"streamId"`
	}
	w.call(r, me, "POST", "/ws/v2/streams", `{"from":["`+from+`"]}`).json(t, &made)
	c := w.v2dial(r, me, made.StreamID)
	w.publish(transferMsg(from, addr(71), 1))
	c.transfer()
	_ = c.c.CloseNow()

	orphan := blockHash(3)
	away, survivors := awayWithOrphans(from, orphan)
	w.publish(away...)
	w.reorg([]string{orphan}, nil)
	waitForLog(t, logs, "orphanedBlocks=1")

	c2 := w.v2dial(r, me, made.StreamID)
	for i, want := range survivors {
		if got, alert, _ := c2.transfer(); got != want || alert != made.StreamID {
			t.Fatalf("v2 replay %d: %s (%s), want %s", i, got, alert, want)
		}
	}
	sentinel(t, w, c2, from)
	expectDelivered(t, r, float64(1+len(survivors)+1))
}

// TestLiveTransferOfOrphanedBlock: a transfer of an orphaned block that arrives after its reorg
// (ingest publishing it late, or again) is not delivered; once a later reorg names the block
// canonical again (the chain went back to it), its transfers are.
func TestLiveTransferOfOrphanedBlock(t *testing.T) {
	w := newWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	r := w.start(nil)
	from := addr(73)
	c := w.dial(r, ident("krl"), "")
	c.subscribe(map[string]any{"from": []string{from}})

	orphan := blockHash(4)
	w.reorg([]string{orphan}, nil)
	waitForLog(t, logs, "orphanedBlocks=1")
	late := transferMsg(from, addr(71), 3)
	late.BlockHash = orphan
	w.publish(late)
	sentinel(t, w, c, from)

	w.reorg(nil, []string{orphan})
	waitForLog(t, logs, "canonicalAgain=1")
	again := transferMsg(from, addr(71), 3)
	again.BlockHash = orphan
	w.publish(again)
	if id, _, _ := c.transfer(); id != again.Id {
		t.Fatalf("got %s, want %s of the block canonical again", id, again.Id)
	}
	expectDelivered(t, r, 2)
}

// TestReplicaStartedAfterReorg: a replica started after a reorg has read it before it is
// ready: a session resumed there replays none of the reorg's orphaned transfers.
func TestReplicaStartedAfterReorg(t *testing.T) {
	w := newWorld(t)
	a := w.start(nil)
	from := addr(74)
	c := w.dial(a, ident("krs"), "")
	fid, sess := c.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(71), 1))
	c.transfer()
	_ = c.c.CloseNow()

	orphan := blockHash(5)
	away, survivors := awayWithOrphans(from, orphan)
	w.publish(away...)
	w.reorg([]string{orphan}, nil)
	// Reorgs before it that a later one took back leave their blocks canonical.
	w.reorg([]string{blockHash(6)}, nil)
	w.reorg(nil, []string{blockHash(6)})

	b := w.start(nil)
	c2 := w.dial(b, ident("krs"), "")
	c2.send("reconnect", map[string]any{"sessionId": sess})
	if m := c2.next(); m.Type != "ack" {
		t.Fatalf("reconnect on the new replica: %s", m.raw)
	}
	for i, want := range survivors {
		if got, alert, _ := c2.transfer(); got != want || alert != fid {
			t.Fatalf("replay %d on the new replica: %s (%s), want %s", i, got, alert, want)
		}
	}
	restored := transferMsg(from, addr(71), 3)
	restored.BlockHash = blockHash(6)
	w.publish(restored)
	if id, _, _ := c2.transfer(); id != restored.Id {
		t.Fatalf("got %s, want %s of a block canonical again", id, restored.Id)
	}
	sentinel(t, w, c2, from)
	expectDelivered(t, b, float64(len(survivors)+2))
}

// gatedBroker is a world's broker whose fetches of chain.reorgs.v1 can be held back, as a
// reorg reader slow or far behind would be: while the gate is shut the replicas' reorg readers
// receive nothing, though what is published is taken and the topic's ends say so. It records
// how far the replicas' readers of chain.transfers.v1 have fetched.
type gatedBroker struct {
	t       *testing.T
	brokers []string
	mu      sync.Mutex
	shut    chan struct{} // nil: open
	held    map[int32]bool
	// fetched is, per partition of the transfer topic, the furthest offset a fetch asked for.
	fetched map[int32]int64
}

// newGatedWorld is newWorld on a gatedBroker.
func newGatedWorld(t *testing.T) (*world, *gatedBroker) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedBroker{t: t, brokers: c.ListenAddrs(), fetched: map[int32]int64{}}
	t.Cleanup(func() { g.open(); c.Close() })
	c.ControlKey(kmsg.Fetch.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		g.mu.Lock()
		shut, hold := g.shut, false
		for _, rt := range r.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				switch {
				case rt.Topic == eventsv1.TopicTransfers:
					g.fetched[rp.Partition] = max(g.fetched[rp.Partition], rp.FetchOffset)
				case rt.Topic == eventsv1.TopicReorgs && shut != nil:
					g.held[rp.Partition], hold = true, true
				}
			}
		}
		g.mu.Unlock()
		if hold {
			c.SleepControl(func() { <-shut })
		}
		return nil, nil, false
	})
	specs := make([]eventbus.TopicSpec, len(worldTopics))
	for i, tp := range worldTopics {
		specs[i] = eventbus.TopicSpec{Name: tp, Partitions: 4}
	}
	ctx, cancel := contextWithTimeout(15 * time.Second)
	defer cancel()
	if err := eventbus.EnsureTopics(ctx, g.brokers, eventbus.Security{}, 1, specs); err != nil {
		t.Fatal(err)
	}
	return newWorldOn(t, g.brokers), g
}

// close shuts the gate and waits until a fetch of every partition of the reorg topic is held:
// from then on no reorg reader has a fetch under way that could return what is published next.
func (g *gatedBroker) close() {
	g.t.Helper()
	g.mu.Lock()
	g.shut, g.held = make(chan struct{}), map[int32]bool{}
	g.mu.Unlock()
	g.waitFor("a fetch of every partition of the reorg topic held", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.held) == 4
	})
}

// open lets the held fetches, and every fetch after them, through.
func (g *gatedBroker) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

// transfersFetched waits until the replicas' transfer readers have fetched every record
// published so far.
func (g *gatedBroker) transfersFetched() {
	g.t.Helper()
	ctx, cancel := contextWithTimeout(15 * time.Second)
	defer cancel()
	ends, err := feed.Topic{Brokers: g.brokers, Name: eventsv1.TopicTransfers}.Ends(ctx, []int{0, 1, 2, 3})
	if err != nil {
		g.t.Fatal(err)
	}
	g.waitFor("the transfers published fetched", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for p, end := range ends {
			if g.fetched[int32(p)] < end {
				return false
			}
		}
		return true
	})
}

func (g *gatedBroker) waitFor(what string, ok func() bool) {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			g.t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTransfersOfABlockCanonicalAgainReadBeforeTheirReorg: the transfers ingest publishes again
// for a block a Reorg names canonical again are delivered live though the replica's transfer
// reader gets them before its reorg reader gets that Reorg (held back here): a transfer of a
// marked block is decided on only once the reorgs written before it are read. A transfer of a
// block still orphaned is skipped all the same, and the replica waits for nothing then.
func TestTransfersOfABlockCanonicalAgainReadBeforeTheirReorg(t *testing.T) {
	w, g := newGatedWorld(t)
	logs := &logtest.Buffer{}
	w.logs = logs
	r := w.start(nil)
	from := addr(75)
	c := w.dial(r, ident("krg"), "")
	c.subscribe(map[string]any{"from": []string{from}})

	block, still := blockHash(8), blockHash(9)
	w.reorg([]string{block, still}, nil)
	waitForLog(t, logs, "orphanedBlocks=2")

	g.close()
	w.reorg(nil, []string{block})
	again := []*eventsv1.Transfer{transferMsg(from, addr(71), 3), transferMsg(from, addr(71), 4)}
	for _, tr := range again {
		tr.BlockHash = block
	}
	w.publish(again...)
	g.transfersFetched()
	// Long enough for a replica deciding without the Reorg to have skipped them.
	time.Sleep(300 * time.Millisecond)
	g.open()
	for i, want := range again {
		if id, _, _ := c.transfer(); id != want.Id {
			t.Fatalf("transfer %d: got %s, want %s of the block canonical again", i, id, want.Id)
		}
	}

	g.close()
	orphaned := transferMsg(from, addr(71), 5)
	orphaned.BlockHash = still
	last := transferMsg(from, addr(99), 1)
	w.publish(orphaned, last) // one partition: the orphaned one is decided on first
	if id, _, _ := c.transfer(); id != last.Id {
		t.Fatalf("got %s, want %s after the skipped transfer of a block still orphaned", id, last.Id)
	}
	g.open()
	expectDelivered(t, r, 3)
	if strings.Contains(logs.String(), "not read up to its end in time") {
		t.Fatalf("a decision waited past its bound:\n%s", logs.String())
	}
}

// TestTransfersRightAfterTheirReorgs: a block orphaned and at once named canonical again,
// its transfers published right after both Reorgs, has them delivered, however the replica's
// readers of the two topics interleave; over many such blocks, none is lost.
func TestTransfersRightAfterTheirReorgs(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	from := addr(76)
	c := w.dial(r, ident("krr"), "")
	c.subscribe(map[string]any{"from": []string{from}})
	const blocks = 20
	want := map[string]bool{}
	for i := range blocks {
		b := blockHash(100 + i)
		w.reorg([]string{b}, nil)
		w.reorg(nil, []string{b})
		tr := transferMsg(from, addr(71), 2)
		tr.BlockHash = b
		want[tr.Id] = true
		w.publish(tr)
	}
	for range blocks {
		id, _, _ := c.transfer()
		if !want[id] {
			t.Fatalf("got %s: not one of the transfers, or twice", id)
		}
		delete(want, id)
	}
	sentinel(t, w, c, from)
	expectDelivered(t, r, blocks+1)
}
