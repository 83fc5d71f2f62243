package intelligence

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"google.golang.org/protobuf/proto"
)

// A transfer is counted once by its natural id, whatever block carries it: the same transfers
// published again in other blocks at other times (an ingest replaying its hashes) change no
// edge and no activity; a reorg moving a block's transfers to another block counts them in the
// new block exactly once, whether the new block's transfers arrive before the reorg or after.
func TestTransferCountedOnceByID(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	hot, c1, c2, d1 := addr(0x100), addr(0xc1), addr(0xc2), addr(0xd1)
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	b1 := []*eventsv1.Transfer{tr("a", "0xb1", c1, d1, 1000, 100), tr("b", "0xb1", d1, hot, 1000, 100)}
	b2 := []*eventsv1.Transfer{tr("c", "0xb2", c2, d1, 2000, 50), tr("d", "0xb2", c1, d1, 2000, 10)}
	// moved are b1's transfers in block 0xb3, an hour later.
	var moved []*eventsv1.Transfer
	for _, m := range b1 {
		m = proto.Clone(m).(*eventsv1.Transfer)
		m.BlockHash, m.BlockTimeMs = "0xb3", m.BlockTimeMs+3_600_000
		moved = append(moved, m)
	}
	offset := int64(0)
	send := func(ms ...*eventsv1.Transfer) {
		t.Helper()
		batch := msgs(eventsv1.TopicTransfers, ms...)
		for i := range batch {
			offset++
			batch[i].Offset = 1000 + offset // new records each time, never a redelivery
		}
		if err := h.Transfers(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	reorg := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 1, Hash: "0xb1"}}, Canonical: []*eventsv1.Reorg_Block{{Number: 1, Hash: "0xb3"}}}}}

	resetDB(t)
	send(append(append([]*eventsv1.Transfer{}, b1...), b2...)...)
	once := heuristicInputs(t, pool)
	send(moved...)
	send(append(append([]*eventsv1.Transfer{}, moved...), b1...)...)
	if got := heuristicInputs(t, pool); got != once {
		t.Fatalf("the same transfers in another block were counted again:\n%s\nwant:\n%s", got, once)
	}

	resetDB(t)
	send(append(append([]*eventsv1.Transfer{}, moved...), b2...)...)
	want := heuristicInputs(t, pool)
	for _, rowsFirst := range []bool{true, false} {
		resetDB(t)
		send(append(append([]*eventsv1.Transfer{}, b1...), b2...)...)
		if rowsFirst {
			send(moved...)
		}
		for range 2 { // redelivered
			if err := h.Reorgs(ctx, reorg); err != nil {
				t.Fatal(err)
			}
		}
		if !rowsFirst {
			send(moved...)
		}
		send(b1...) // the orphaned block's transfers again: not counted
		send(moved...)
		if got := heuristicInputs(t, pool); got != want {
			t.Fatalf("after the reorg (new block's transfers first: %v):\n%s\nwant (b1's transfers in their new block):\n%s", rowsFirst, got, want)
		}
	}
}

// A broker whose offsets start again (a recreated topic; the local stack's in-memory broker after
// a restart) delivers new transfers at offsets already applied: they are counted, and transfers
// already counted are not counted again.
func TestTransfersCountedAfterOffsetsStartAgain(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	hot, c1, c2, d1 := addr(0x100), addr(0xc1), addr(0xc2), addr(0xd1)
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	first := []*eventsv1.Transfer{tr("a", "0xb1", c1, d1, 1000, 100), tr("b", "0xb1", d1, hot, 1000, 100)}
	second := []*eventsv1.Transfer{tr("c", "0xb2", c2, d1, 2000, 50), tr("d", "0xb2", c1, d1, 2000, 10)}
	send := func(base int64, ms ...*eventsv1.Transfer) {
		t.Helper()
		batch := msgs(eventsv1.TopicTransfers, ms...)
		for i := range batch {
			batch[i].Offset = base + int64(i)
		}
		if err := h.Transfers(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}

	resetDB(t)
	send(0, append(append([]*eventsv1.Transfer{}, first...), second...)...)
	want := heuristicInputs(t, pool)

	resetDB(t)
	send(100, first...)
	send(0, second...) // the broker's offsets started again
	send(0, first...)  // and the earlier transfers came again
	if got := heuristicInputs(t, pool); got != want {
		t.Fatalf("after the offsets started again:\n%s\nwant:\n%s", got, want)
	}
}

// A block named canonical again while the block its transfers moved to is still live does not
// count them a second time: they are displaced, counted when that other block is orphaned, and
// taken back once when their own block is orphaned again.
func TestRestoredBlockCountsOnlyTheIDsItClaims(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	hot, c1, c2, d1 := addr(0x100), addr(0xc1), addr(0xc2), addr(0xd1)
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	b1 := []*eventsv1.Transfer{tr("a", "0xb1", c1, d1, 1000, 100), tr("b", "0xb1", d1, hot, 1000, 100)}
	b2 := []*eventsv1.Transfer{tr("c", "0xb2", c2, d1, 2000, 50)}
	var moved []*eventsv1.Transfer
	for _, m := range b1 {
		m = proto.Clone(m).(*eventsv1.Transfer)
		m.BlockHash, m.BlockTimeMs = "0xb3", m.BlockTimeMs+60_000
		moved = append(moved, m)
	}
	offset := int64(0)
	send := func(ms ...*eventsv1.Transfer) {
		t.Helper()
		batch := msgs(eventsv1.TopicTransfers, ms...)
		for i := range batch {
			offset++
			batch[i].Offset = 1000 + offset
		}
		if err := h.Transfers(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	reorg := func(orphaned, canonical string) {
		t.Helper()
		r := &eventsv1.Reorg{Chain: "ethereum"}
		if orphaned != "" {
			r.Orphaned = []*eventsv1.Reorg_Block{{Number: 1, Hash: orphaned}}
		}
		if canonical != "" {
			r.Canonical = []*eventsv1.Reorg_Block{{Number: 1, Hash: canonical}}
		}
		if err := h.Reorgs(ctx, []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: r}}); err != nil {
			t.Fatal(err)
		}
	}
	resetDB(t)
	send(b2...)
	onlyB2 := heuristicInputs(t, pool)

	resetDB(t)
	send(append(append([]*eventsv1.Transfer{}, moved...), b2...)...)
	onceMoved := heuristicInputs(t, pool) // each transfer once, at 0xb3's time

	resetDB(t)
	send(append(append([]*eventsv1.Transfer{}, b1...), b2...)...)
	once := heuristicInputs(t, pool)
	reorg("0xb1", "0xb3")
	send(moved...)
	reorg("", "0xb1") // 0xb3 still live: b1's transfers are counted there
	if got := heuristicInputs(t, pool); got != onceMoved {
		t.Fatalf("restoring a block whose ids a live block holds:\n%s\nwant each transfer once (in 0xb3):\n%s", got, onceMoved)
	}
	reorg("0xb3", "")
	if got := heuristicInputs(t, pool); got != once {
		t.Fatalf("orphaning the block holding the ids:\n%s\nwant each transfer once (in 0xb1):\n%s", got, once)
	}
	reorg("0xb1", "")
	if got := heuristicInputs(t, pool); got != onlyB2 {
		t.Fatalf("orphaning the restored block again:\n%s\nwant b2's transfer alone:\n%s", got, onlyB2)
	}
}
