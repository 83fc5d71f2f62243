package intelligence

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

// heuristicInputs renders the edges (with their transfer counts), the address activity (volume,
// count, first and last time) and its settled part, the pair activity (volume and count) and
// the entities' internal figures, what a reorg takes transfers back out of.
func heuristicInputs(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT chain, from_addr, to_addr, n FROM intel.edges ORDER BY 1, 2, 3`,
		`SELECT chain_type, address, volume_usd, transfer_count, first_ms, last_ms FROM intel.address_activity ORDER BY 1, 2`,
		`SELECT 'settled', chain_type, address, transfer_count, first_ms, last_ms FROM intel.settled_activity ORDER BY 2, 3`,
		`SELECT chain_type, from_addr, to_addr, volume_usd, transfer_count FROM intel.pair_activity ORDER BY 1, 2, 3`,
		`SELECT entity_id, volume_usd, transfer_count FROM intel.entity_internal WHERE transfer_count <> 0 ORDER BY 1`,
	} {
		rows, err := pool.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

// A reorg takes the transfers of its orphaned blocks back out of the edges and the address
// activity: applying two blocks and then orphaning one leaves exactly what applying the other
// alone leaves. A redelivered reorg changes nothing, and the orphaned block's transfers arriving
// again afterwards are not counted; a reorg naming the block canonical again counts them once.
// A transfer published twice counts once. Batches and reorgs run concurrently end in the same state as the
// kept blocks alone (the advisory lock that orders a reorg after a batch of its own block,
// store.reorgLock, is there for a window this run does not reliably hit).
func TestReorgTakesTransfersBack(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	h := events.Handlers{Store: store.New(pool)}
	hot, c1, c2, d1 := addr(0x100), addr(0xc1), addr(0xc2), addr(0xd1)
	tr := func(id, block, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	b1 := []*eventsv1.Transfer{tr("a", "0xb1", c1, d1, 1000, 100), tr("b", "0xb1", d1, hot, 1000, 100)}
	b2 := []*eventsv1.Transfer{tr("c", "0xb2", c2, d1, 2000, 50), tr("d", "0xb2", c1, d1, 2000, 10), tr("e", "0xb2", c2, c2, 2000, 7)}

	resetDB(t)
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, b1...)); err != nil {
		t.Fatal(err)
	}
	want := heuristicInputs(t, pool)

	resetDB(t)
	if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, append(append([]*eventsv1.Transfer{}, b1...), b2...)...)); err != nil {
		t.Fatal(err)
	}
	if heuristicInputs(t, pool) == want {
		t.Fatal("the second block changed nothing: the test would prove nothing")
	}
	reorg := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2"}}}}}
	for range 2 {
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		if got := heuristicInputs(t, pool); got != want {
			t.Fatalf("after the reorg:\n%s\nwant (the first block alone):\n%s", got, want)
		}
	}
	late := msgs(eventsv1.TopicTransfers, b2...)
	for i := range late {
		late[i].Offset += 100 // new records, not a redelivery
	}
	if err := h.Transfers(ctx, late); err != nil {
		t.Fatal(err)
	}
	if got := heuristicInputs(t, pool); got != want {
		t.Fatalf("the orphaned block's transfers arriving late were counted:\n%s\nwant:\n%s", got, want)
	}

	// The chain goes back to the orphaned block: its transfers (those applied before the reorg
	// and those that arrived late) count again, once, as when both blocks were applied.
	both := func() string {
		resetDB(t)
		if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, append(append([]*eventsv1.Transfer{}, b1...), b2...)...)); err != nil {
			t.Fatal(err)
		}
		return heuristicInputs(t, pool)
	}
	wantBoth := both()
	back := []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2other"}}, Canonical: []*eventsv1.Reorg_Block{{Number: 2, Hash: "0xb2"}}}}}
	for _, lateFirst := range []bool{true, false} {
		both()
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		late := msgs(eventsv1.TopicTransfers, b2[:2]...) // published again after the reorg
		for i := range late {
			late[i].Offset += 100
		}
		if lateFirst {
			if err := h.Transfers(ctx, late); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // redelivered
			if err := h.Reorgs(ctx, back); err != nil {
				t.Fatal(err)
			}
		}
		if !lateFirst {
			if err := h.Transfers(ctx, late); err != nil {
				t.Fatal(err)
			}
		}
		if got := heuristicInputs(t, pool); got != wantBoth {
			t.Fatalf("back to the orphaned block (its transfers published again first: %v):\n%s\nwant (both blocks):\n%s", lateFirst, got, wantBoth)
		}
	}

	// The same transfers published again at new offsets (an ingest restarted mid-batch) are
	// counted once.
	both()
	again := msgs(eventsv1.TopicTransfers, append(append([]*eventsv1.Transfer{}, b1...), b2...)...)
	for i := range again {
		again[i].Offset += 1000
	}
	if err := h.Transfers(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got := heuristicInputs(t, pool); got != wantBoth {
		t.Fatalf("transfers published twice:\n%s\nwant:\n%s", got, wantBoth)
	}

	// Beside each other: batches of many blocks and reorgs of half of them, concurrently. Every
	// transfer of an orphaned block must end up taken back or dropped, whichever ran first.
	resetDB(t)
	var all, kept []*eventsv1.Transfer
	var orphaned []string
	for blk := range 40 {
		hash := fmt.Sprintf("0xc%d", blk)
		for i := range 3 {
			m := tr(fmt.Sprintf("%d-%d", blk, i), hash, addr(0x1000+blk*3+i), addr(0x2000+blk), int64(blk*1000), float64(i+1))
			all = append(all, m)
			if blk%2 == 1 {
				kept = append(kept, m)
			}
		}
		if blk%2 == 0 {
			orphaned = append(orphaned, hash)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(all)+len(orphaned))
	for i, m := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms := msgs(eventsv1.TopicTransfers, m)
			ms[0].Partition, ms[0].Offset = i, 0 // a partition each: batches of one partition come in order
			errs <- h.Transfers(ctx, ms)
		}()
	}
	for _, hash := range orphaned {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.Reorgs(ctx, []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs,
				Msg: &eventsv1.Reorg{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{{Hash: hash}}}}})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := heuristicInputs(t, pool)
	resetDB(t)
	for i, m := range kept {
		ms := msgs(eventsv1.TopicTransfers, m)
		ms[0].Offset = int64(i)
		if err := h.Transfers(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	if want := heuristicInputs(t, pool); got != want {
		t.Fatalf("concurrent batches and reorgs:\n%s\nwant (the kept blocks alone):\n%s", got, want)
	}
}
