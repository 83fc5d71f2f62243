package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// snapshot renders every row of the chain tables and rollups, so two states compare exactly.
//
// With queued rollups it applies the queue first: the state compared is the one the rollup worker
// converges to. With inline rollups the queue must be empty already.
func snapshot(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	if queuedRollups {
		if _, err := newStore(pool).DrainRollups(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else if n, err := newStore(pool).QueuedRollups(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d rows left queued after inline writes (%v)", n, err)
	}
	var b strings.Builder
	for _, q := range []string{
		`SELECT chain, id, block_hash FROM transfers.transfers ORDER BY 1, 2, 3`,
		`SELECT chain, hash FROM transfers.transactions ORDER BY 1, 2`,
		`SELECT chain, id FROM transfers.swaps ORDER BY 1, 2`,
		`SELECT address, bucket, chain, token, token_id, in_n, in_usd, in_value, out_n, out_usd, out_value FROM transfers.addr_daily ORDER BY 1, 2, 3, 4`,
		`SELECT from_addr, to_addr, bucket, chain, token, n, usd, value FROM transfers.pair_hourly ORDER BY 1, 2, 3, 4, 5`,
		`SELECT bucket, chain, token, n, usd FROM transfers.chain_hourly ORDER BY 1, 2, 3`,
		`SELECT bucket, chain, token, n, usd FROM transfers.chain_daily ORDER BY 1, 2, 3`,
		`SELECT grp, size, live FROM transfers.groups ORDER BY 1`,
		`SELECT grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd FROM transfers.grp_hourly ORDER BY 1, 2, 3, 4`,
		`SELECT grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd FROM transfers.grp_daily ORDER BY 1, 2, 3, 4`,
		`SELECT from_grp, to_grp, bucket, chain, token, token_id, n, usd FROM transfers.grp_pair_hourly ORDER BY 1, 2, 3, 4, 5`,
		`SELECT from_grp, to_grp, bucket, chain, token, token_id, n, usd FROM transfers.grp_pair_daily ORDER BY 1, 2, 3, 4, 5`,
		`SELECT grp, bucket, from_addr, to_addr, chain, token, token_id, side, n, usd, value, from_t, to_t FROM transfers.entity_pair_rows ORDER BY 1, 2, 3, 4, 5, 6`,
		`SELECT grp, chain, cp, in_n, in_usd, in_value, out_n, out_usd, out_value FROM transfers.grp_cp ORDER BY 1, 2, 3`,
	} {
		rows, err := pool.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, _ := rows.Values()
			for _, v := range vals {
				b.WriteString(strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", " ")))
				b.WriteByte('|')
			}
			b.WriteByte('\n')
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

func reset(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `TRUNCATE transfers.transfers, transfers.transactions, transfers.swaps,
		transfers.addr_daily, transfers.pair_hourly, transfers.chain_hourly, transfers.chain_daily, transfers.blocks,
		transfers.orphaned_blocks, transfers.attributions, transfers.groups, transfers.grp_hourly, transfers.grp_daily,
		transfers.grp_pair_hourly, transfers.grp_pair_daily, transfers.entity_pair_rows, transfers.grp_cp,
		transfers.parked_transfers, transfers.parked_transactions, transfers.parked_swaps, transfers.attribution_changes,
		transfers.rollup_keys, transfers.transfer_ids, transfers.swap_ids, transfers.transaction_ids;
		UPDATE transfers.attribution_log SET pruned = 0`); err != nil {
		t.Fatal(err)
	}
}

// groupMin is the live-group threshold the store tests run with: 0 makes every attribution
// group of the small world live, so its rollups are checked too.
var groupMin = 0

// queuedRollups makes handlers' stores leave rows queued for the rollups (TestQueuedRollups).
var queuedRollups = false

// loadedWorld is a fresh test database with the test world loaded through the handlers.
func loadedWorld(t *testing.T) (*pgxpool.Pool, events.Handlers, *store.Store) {
	t.Helper()
	pool := pgtest.Pool(t)
	reset(t, pool)
	h, st := handlers(pool)
	if err := tw.Load(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return pool, h, st
}

func handlers(pool *pgxpool.Pool) (events.Handlers, *store.Store) {
	st := newStore(pool, withGroupMin(groupMin), func(o *store.Options) {
		if queuedRollups {
			o.InlineRollups, o.RollupLagMax = false, 0
			o.RollupBatch = 3 // several applies per drain, and a reorg's drain takes more than one
		}
	})
	return events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)}, st
}

// Delivering the same records again writes nothing and changes no rollup; a reorg removes its
// blocks' rows and exactly their contribution, once, however often it is delivered; rows of an
// orphaned block arriving later are dropped. With live attribution groups (every group of the
// world) and without (none).
func TestRedeliveryAndReorg(t *testing.T) {
	for _, min := range []int{0, store.DefaultOptions().GroupMin} {
		t.Run(fmt.Sprintf("groups above %d addresses live", min), func(t *testing.T) {
			defer func(m int) { groupMin = m }(groupMin)
			groupMin = min
			testRedeliveryAndReorg(t)
		})
	}
}

func testRedeliveryAndReorg(t *testing.T) {
	ctx := context.Background()
	pool, h, st := loadedWorld(t)
	once := snapshot(t, pool)
	if strings.Count(once, "\n") < 40 {
		t.Fatalf("world looks empty:\n%s", once)
	}
	if err := tw.Load(ctx, h); err != nil {
		t.Fatal(err)
	}
	// A batch holding the same transfer twice, and one holding new and old rows.
	dup := append(tw.Transfers(), tw.Transfers()...)
	if err := h.Transfers(ctx, tw.Msgs(dup)); err != nil {
		t.Fatal(err)
	}
	if twice := snapshot(t, pool); twice != once {
		t.Fatalf("redelivery changed state:\nbefore\n%s\nafter\n%s", once, twice)
	}
	n, err := st.WriteTransfers(ctx, rows(t, tw.Transfers()))
	if err != nil || n != 0 {
		t.Fatalf("rewrite wrote %d rows (%v), want 0", n, err)
	}

	// Orphan the blocks of t3 and t6 (and of tx 20's swap).
	orphans := []string{tw.BlockHash("ethereum", 3), tw.BlockHash("ethereum", 6), tw.BlockHash("ethereum", 20)}
	reorg := &eventsv1.Reorg{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{{Number: 103, Hash: orphans[0]}, {Number: 106, Hash: orphans[1]}, {Number: 120, Hash: orphans[2]}}}
	for i := 0; i < 2; i++ { // delivered twice
		if err := h.Reorgs(ctx, tw.Msgs([]*eventsv1.Reorg{reorg})); err != nil {
			t.Fatal(err)
		}
	}
	// The same rows arriving after the reorg are dropped.
	if err := h.Transfers(ctx, tw.Msgs(tw.Transfers())); err != nil {
		t.Fatal(err)
	}
	if err := h.Swaps(ctx, tw.Msgs(tw.Swaps())); err != nil {
		t.Fatal(err)
	}
	afterReorg := snapshot(t, pool)

	// The expected state: the world loaded without the orphaned blocks' rows.
	reset(t, pool)
	h, _ = handlers(pool)
	keep := func(chain, block string) bool {
		return !(chain == "ethereum" && (block == orphans[0] || block == orphans[1] || block == orphans[2]))
	}
	var trs []*eventsv1.Transfer
	for _, m := range tw.Transfers() {
		if keep(m.Chain, m.BlockHash) {
			trs = append(trs, m)
		}
	}
	var txs []*eventsv1.Transaction
	for _, m := range tw.Transactions() {
		if keep(m.Chain, m.BlockHash) {
			txs = append(txs, m)
		}
	}
	var sws []*eventsv1.Swap
	for _, m := range tw.Swaps() {
		if keep(m.Chain, m.BlockHash) {
			sws = append(sws, m)
		}
	}
	if len(trs) != len(tw.Transfers())-2 || len(sws) != 1 {
		t.Fatalf("world changed: %d transfers, %d swaps kept", len(trs), len(sws))
	}
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(trs)); err != nil {
		t.Fatal(err)
	}
	if err := h.Transactions(ctx, tw.Msgs(txs)); err != nil {
		t.Fatal(err)
	}
	if err := h.Swaps(ctx, tw.Msgs(sws)); err != nil {
		t.Fatal(err)
	}
	if want := snapshot(t, pool); afterReorg != want {
		t.Fatalf("after reorg:\n%s\nwant (world without the orphaned blocks):\n%s", afterReorg, want)
	}
	if afterReorg == once {
		t.Fatal("reorg removed nothing")
	}
}

// A reorg can name canonical again blocks an earlier reorg orphaned (the chain went back to
// them): their rows come back exactly as if never orphaned, whether the rows were redelivered
// while the blocks were orphaned (set aside, then written) or arrive after; redelivering either
// reorg changes nothing.
func TestReorgBackToOrphanedBlocks(t *testing.T) { testReorgBackToOrphanedBlocks(t) }

func testReorgBackToOrphanedBlocks(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	orphans := []string{tw.BlockHash("ethereum", 3), tw.BlockHash("ethereum", 6), tw.BlockHash("ethereum", 20)}
	var blocks []*eventsv1.Reorg_Block
	for i, h := range orphans {
		blocks = append(blocks, &eventsv1.Reorg_Block{Number: uint64(100 + []int{3, 6, 20}[i]), Hash: h})
	}
	away := &eventsv1.Reorg{Chain: "ethereum", Orphaned: blocks}
	back := &eventsv1.Reorg{Chain: "ethereum", Canonical: blocks}
	redeliver := func(h events.Handlers) {
		t.Helper()
		if err := h.Transfers(ctx, tw.Msgs(tw.Transfers())); err != nil {
			t.Fatal(err)
		}
		if err := h.Transactions(ctx, tw.Msgs(tw.Transactions())); err != nil {
			t.Fatal(err)
		}
		if err := h.Swaps(ctx, tw.Msgs(tw.Swaps())); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(h events.Handlers, r *eventsv1.Reorg) {
		t.Helper()
		if err := h.Reorgs(ctx, tw.Msgs([]*eventsv1.Reorg{r})); err != nil {
			t.Fatal(err)
		}
	}
	parked := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM transfers.parked_transfers) + (SELECT count(*) FROM transfers.parked_transactions)
			+ (SELECT count(*) FROM transfers.parked_swaps)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, rowsFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("rows redelivered before the reorg back: %v", rowsFirst), func(t *testing.T) {
			reset(t, pool)
			h, _ := handlers(pool)
			if err := tw.Load(ctx, h); err != nil {
				t.Fatal(err)
			}
			once := snapshot(t, pool)
			apply(h, away)
			gone := snapshot(t, pool)
			if gone == once {
				t.Fatal("the reorg removed nothing")
			}
			if rowsFirst {
				redeliver(h)
				if got := snapshot(t, pool); got != gone {
					t.Fatalf("rows of orphaned blocks were written:\n%s\nwant\n%s", got, gone)
				}
				if parked() == 0 {
					t.Fatal("rows of orphaned blocks were not set aside")
				}
			}
			apply(h, back)
			apply(h, back) // redelivered
			if !rowsFirst {
				redeliver(h)
			}
			if got := snapshot(t, pool); got != once {
				t.Fatalf("after the chain went back:\n%s\nwant (the world as loaded):\n%s", got, once)
			}
			if n := parked(); n != 0 {
				t.Fatalf("%d rows left set aside", n)
			}
			redeliver(h)
			apply(h, back)
			if got := snapshot(t, pool); got != once {
				t.Fatal("redelivery after the chain went back changed state")
			}
		})
	}
}

func rows(t *testing.T, ms []*eventsv1.Transfer) []store.TransferRow {
	var out []store.TransferRow
	for _, m := range ms {
		r, err := events.TransferRow(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// The read model keeps the newest version per address, a tombstone deletes, and entity
// membership follows relabels without touching chain rows.
func TestAttributionReadModel(t *testing.T) {
	ctx := context.Background()
	_, h, st := loadedWorld(t)
	addrs := func(id string) string {
		a, err := st.SetAddresses(ctx, store.AddrSet{Entities: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(a, ",")
	}
	if got := addrs("coinbase"); got != tw.H2+","+tw.D3 {
		t.Fatalf("coinbase: %s", got)
	}
	// U2 is relabelled to coinbase (v2); a stale v1 of D3 moving it away is ignored; D3 is
	// then deleted by a tombstone in the same batch as a newer version of H2.
	batch := tw.Msgs([]*eventsv1.Attribution{
		tw.Attribution(tw.U2, tw.Coinbase, "Customer", "", false, 2),
		tw.Attribution(tw.D3, tw.Binance, "", "", false, 0),
	})
	if err := h.Attributions(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got := addrs("coinbase"); got != tw.H2+","+tw.D3+","+tw.U2 {
		t.Fatalf("coinbase after relabel: %s", got)
	}
	tomb := tw.Msgs([]*eventsv1.Attribution{tw.Attribution(tw.H2, tw.Coinbase, "Hot Wallet 2", "", false, 3), {}})
	tomb[1].Tombstone, tomb[1].Key = true, eventsv1.AttributionKey("evm", tw.D3)
	if err := h.Attributions(ctx, tomb); err != nil {
		t.Fatal(err)
	}
	if got := addrs("coinbase"); got != tw.H2+","+tw.U2 {
		t.Fatalf("coinbase after tombstone: %s", got)
	}
	got, err := st.Attributions(ctx, []store.AddressKey{{ChainType: "evm", Address: tw.H2}})
	if err != nil || got[store.AddressKey{ChainType: "evm", Address: tw.H2}].Label != "Hot Wallet 2" {
		t.Fatalf("H2 after v3: %+v %v", got, err)
	}
	if dep, _ := st.SetAddresses(ctx, store.AddrSet{Deposits: []string{"coinbase"}}); len(dep) != 0 {
		t.Fatalf("coinbase deposits after tombstone: %v", dep)
	}
}

// /internal/activity figures come from the rollups: a transfer between two of the addresses
// counts once.
func TestActivity(t *testing.T) {
	ctx := context.Background()
	_, _, st := loadedWorld(t)
	a, err := st.Activity(ctx, []string{tw.U1, tw.U2})
	if err != nil {
		t.Fatal(err)
	}
	// t1 1000, t3 4000, t4 500, t9 (no price), t10 2000: five transfers.
	if a.TransferCount != 5 || a.VolumeUSD != 7500 || a.First == nil || !a.First.Equal(tw.D0.Add(10*3600e9)) ||
		a.Last == nil || !a.Last.Equal(tw.D0.Add(99*3600e9)) {
		t.Fatalf("activity %+v first %v last %v", a, a.First, a.Last)
	}
	if a, _ := st.Activity(ctx, []string{"0x9999999999999999999999999999999999999999"}); a.TransferCount != 0 || a.First != nil {
		t.Fatalf("idle address: %+v", a)
	}
}
