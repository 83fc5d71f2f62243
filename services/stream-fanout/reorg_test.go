package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
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
