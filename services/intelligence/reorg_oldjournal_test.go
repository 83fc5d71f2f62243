package intelligence

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// A journal row written before the journal kept ids has ids '{}' (migration 00004). A reorg
// naming its orphaned block canonical again applies its transfers again, once, without
// claiming ids (as before ids were kept), rather than failing on the missing ids.
func TestReorgBackToABlockJournaledWithoutIDs(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	c1, c2, d1 := addr(0xc1), addr(0xc2), addr(0xd1)
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	both := append([]*eventsv1.Transfer{tr("a", "0xb1", c1, d1, 1000, 100)},
		tr("c", "0xb2", c2, d1, 2000, 50), tr("d", "0xb2", c1, d1, 2000, 10))
	resetDB(t)
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, both...)); err != nil {
		t.Fatal(err)
	}
	want := heuristicInputs(t, pool)
	orphan := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2"}}}}}
	if err := h.Reorgs(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if heuristicInputs(t, pool) == want {
		t.Fatal("orphaning the block changed nothing: the test would prove nothing")
	}
	tag, err := pool.Exec(ctx, `UPDATE intel.block_facts SET ids = '{}' WHERE chain = 'ethereum' AND block_hash = '0xb2'`)
	if err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("make 0xb2's journal row an old one: %v (%d rows)", err, tag.RowsAffected())
	}
	back := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2other"}}, Canonical: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2"}}}}}
	for range 2 { // redelivered
		if err := h.Reorgs(ctx, back); err != nil {
			t.Fatal(err)
		}
	}
	if got := heuristicInputs(t, pool); got != want {
		t.Fatalf("back to the block journaled without ids:\n%s\nwant (both blocks):\n%s", got, want)
	}
}
