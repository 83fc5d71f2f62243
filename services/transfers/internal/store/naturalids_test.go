package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
)

// movedBlock is the block the world's rows of block hash h are published in again: same
// number, another hash, an hour and a half later (another hour bucket of every rollup).
func movedBlock(h string) string { return h + "ff" }

const moveBy = 90 * time.Minute

// movedRows are the world's transactions, transfers and swaps of the blocks in (all of them
// when in is nil), as ingest publishes them again in other blocks: same natural ids, other
// block hash and time.
func movedRows(in map[string]bool) (txs []*eventsv1.Transaction, trs []*eventsv1.Transfer, sws []*eventsv1.Swap) {
	pick := func(h string) bool { return in == nil || in[h] }
	for _, m := range tw.Transactions() {
		if pick(m.BlockHash) {
			m = proto.Clone(m).(*eventsv1.Transaction)
			m.BlockHash, m.BlockTimeMs = movedBlock(m.BlockHash), m.BlockTimeMs+moveBy.Milliseconds()
			txs = append(txs, m)
		}
	}
	for _, m := range tw.Transfers() {
		if pick(m.BlockHash) {
			m = proto.Clone(m).(*eventsv1.Transfer)
			m.BlockHash, m.BlockTimeMs = movedBlock(m.BlockHash), m.BlockTimeMs+moveBy.Milliseconds()
			trs = append(trs, m)
		}
	}
	for _, m := range tw.Swaps() {
		if pick(m.BlockHash) {
			m = proto.Clone(m).(*eventsv1.Swap)
			m.BlockHash, m.BlockTimeMs = movedBlock(m.BlockHash), m.BlockTimeMs+moveBy.Milliseconds()
			sws = append(sws, m)
		}
	}
	return txs, trs, sws
}

// deliver writes the rows through the consumers' handlers.
func deliver(t *testing.T, h events.Handlers, txs []*eventsv1.Transaction, trs []*eventsv1.Transfer, sws []*eventsv1.Swap) {
	t.Helper()
	ctx := context.Background()
	if err := h.Transactions(ctx, tw.Msgs(txs)); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(trs)); err != nil {
		t.Fatal(err)
	}
	if err := h.Swaps(ctx, tw.Msgs(sws)); err != nil {
		t.Fatal(err)
	}
}

// state is snapshot with the block of every transaction and swap, and the number of natural
// ids each table holds more than once (none, always).
func state(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	s := snapshot(t, pool)
	for _, q := range []string{
		`SELECT string_agg(chain || ' ' || hash || ' ' || block_hash || ' ' || block_time, ',' ORDER BY chain, hash) FROM transfers.transactions`,
		`SELECT string_agg(chain || ' ' || id || ' ' || block_hash || ' ' || block_time, ',' ORDER BY chain, id) FROM transfers.swaps`,
		`SELECT 'transfer ids stored twice: ' || count(*) FROM (SELECT 1 FROM transfers.transfers GROUP BY chain, tx_hash, id HAVING count(*) > 1) d`,
		`SELECT 'swap ids stored twice: ' || count(*) FROM (SELECT 1 FROM transfers.swaps GROUP BY chain, tx_hash, id HAVING count(*) > 1) d`,
		`SELECT 'transactions stored twice: ' || count(*) FROM (SELECT 1 FROM transfers.transactions GROUP BY chain, hash HAVING count(*) > 1) d`,
	} {
		var v *string
		if err := pool.QueryRow(context.Background(), q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != nil {
			s += *v + "\n"
		}
	}
	return s
}

// The same transfers, swaps and transactions published again in other blocks at other times
// (ingest replaying its hashes after a restart) are stored once: rows and every rollup stay as
// they were, with the rows on their own, mixed with new rows, and redelivered.
func TestNaturalIDStoredOnce(t *testing.T) {
	ctx := context.Background()
	pool, h, _ := loadedWorld(t)
	once := state(t, pool)
	txs, trs, sws := movedRows(nil)
	deliver(t, h, txs, trs, sws)
	if got := state(t, pool); got != once {
		t.Fatalf("the same ids in other blocks changed the state:\n%s\nwant\n%s", got, once)
	}
	// Mixed in one batch with the originals, and again.
	for range 2 {
		if err := h.Transfers(ctx, tw.Msgs(append(tw.Transfers(), trs...))); err != nil {
			t.Fatal(err)
		}
		deliver(t, h, txs, trs, sws)
	}
	if got := state(t, pool); got != once {
		t.Fatalf("the same ids in other blocks, redelivered, changed the state:\n%s\nwant\n%s", got, once)
	}

	// Two blocks of one id in a batch of an empty store: one row, the one of the higher block.
	reset(t, pool)
	h, _ = handlers(pool)
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	later := func(m *eventsv1.Transfer) *eventsv1.Transfer {
		m = proto.Clone(m).(*eventsv1.Transfer)
		m.BlockNumber++
		return m
	}
	var both, want []*eventsv1.Transfer
	for i, m := range trs {
		both = append(both, tw.Transfers()[i], later(m))
		want = append(want, later(m))
	}
	if err := h.Transfers(ctx, tw.Msgs(both)); err != nil {
		t.Fatal(err)
	}
	got := state(t, pool)
	reset(t, pool)
	h, _ = handlers(pool)
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(want)); err != nil {
		t.Fatal(err)
	}
	if w := state(t, pool); got != w {
		t.Fatalf("a batch with two blocks of each id:\n%s\nwant\n%s", got, w)
	}
}

// A reorg that moves transactions to other blocks (at other times) replaces their rows, with
// every rollup, whether the rows of the new blocks arrive before the reorg (set aside until the
// reorg frees their ids) or after it; redelivering any of it changes nothing, and rows of the
// new blocks arriving again once the chain went back are set aside again.
func TestReorgReplacesByNaturalID(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	blocks := map[string]uint64{tw.BlockHash("ethereum", 3): 103, tw.BlockHash("ethereum", 6): 106, tw.BlockHash("ethereum", 20): 120}
	in := map[string]bool{}
	var orphaned, canonical []*eventsv1.Reorg_Block
	for h, n := range blocks {
		in[h] = true
		orphaned = append(orphaned, &eventsv1.Reorg_Block{Number: n, Hash: h})
		canonical = append(canonical, &eventsv1.Reorg_Block{Number: n, Hash: movedBlock(h)})
	}
	reorg := &eventsv1.Reorg{Chain: "ethereum", Orphaned: orphaned, Canonical: canonical}
	apply := func(h events.Handlers) {
		t.Helper()
		if err := h.Reorgs(ctx, tw.Msgs([]*eventsv1.Reorg{reorg})); err != nil {
			t.Fatal(err)
		}
	}
	txs, trs, sws := movedRows(in)
	if len(trs) < 2 || len(sws) != 1 || len(txs) < 2 {
		t.Fatalf("world changed: %d transactions, %d transfers, %d swaps moved", len(txs), len(trs), len(sws))
	}

	// The expected state: the world loaded with the moved blocks' rows in their new blocks.
	reset(t, pool)
	h, _ := handlers(pool)
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	keep := func(hash string) bool { return !in[hash] }
	var wtx []*eventsv1.Transaction
	for _, m := range tw.Transactions() {
		if keep(m.BlockHash) {
			wtx = append(wtx, m)
		}
	}
	var wtr []*eventsv1.Transfer
	for _, m := range tw.Transfers() {
		if keep(m.BlockHash) {
			wtr = append(wtr, m)
		}
	}
	var wsw []*eventsv1.Swap
	for _, m := range tw.Swaps() {
		if keep(m.BlockHash) {
			wsw = append(wsw, m)
		}
	}
	deliver(t, h, append(wtx, txs...), append(wtr, trs...), append(wsw, sws...))
	want := state(t, pool)

	for _, rowsFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("rows of the new blocks before the reorg: %v", rowsFirst), func(t *testing.T) {
			reset(t, pool)
			h, _ := handlers(pool)
			if err := tw.Load(ctx, h); err != nil {
				t.Fatal(err)
			}
			once := state(t, pool)
			if once == want {
				t.Fatal("moving the blocks changes nothing")
			}
			if rowsFirst {
				deliver(t, h, txs, trs, sws)
				if got := state(t, pool); got != once {
					t.Fatalf("rows of the new blocks were written before their reorg:\n%s\nwant\n%s", got, once)
				}
			}
			apply(h)
			if !rowsFirst {
				deliver(t, h, txs, trs, sws)
			}
			if got := state(t, pool); got != want {
				t.Fatalf("after the reorg:\n%s\nwant (the world with the blocks moved):\n%s", got, want)
			}
			apply(h)
			deliver(t, h, txs, trs, sws)
			if err := tw.Load(ctx, h); err != nil { // the orphaned blocks' rows again: set aside
				t.Fatal(err)
			}
			if got := state(t, pool); got != want {
				t.Fatalf("redelivery after the reorg changed the state:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
