package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric/noop"
)

// With queued rollups a write stores its rows and leaves the rollups to an apply; once the queue
// is applied, the state is exactly the one inline writes leave, through redeliveries, reorgs
// (which apply the queue first), relabels between a write and its apply, and reorgs back to
// orphaned blocks. The worker applies a write's rows without being asked.
func TestQueuedRollups(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	defer func() { queuedRollups = false }()

	loadWorld(t, pool, false)
	want := snapshot(t, pool)

	_, st := loadWorld(t, pool, true)
	queued, err := st.QueuedRollups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stored, pairs int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM transfers.transfers), (SELECT count(*) FROM transfers.pair_hourly)`).Scan(&stored, &pairs); err != nil {
		t.Fatal(err)
	}
	if queued != stored || stored != int64(len(tw.Transfers())) || pairs != 0 {
		t.Fatalf("before any apply: %d transfers stored, %d queued, %d pair rows; want %d, %d, 0", stored, queued, pairs, len(tw.Transfers()), len(tw.Transfers()))
	}
	if got := snapshot(t, pool); got != want {
		t.Fatalf("queued rollups, applied:\n%s\nwant (inline):\n%s", got, want)
	}

	t.Run("reorg of queued rows", func(t *testing.T) {
		reorg := tw.Msgs([]*eventsv1.Reorg{{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{
			{Number: 103, Hash: tw.BlockHash("ethereum", 3)}, {Number: 106, Hash: tw.BlockHash("ethereum", 6)}}}})
		// Expected: inline, the world and then the reorg (TestRedeliveryAndReorg checks that
		// equals the world loaded without those blocks).
		h, _ := loadWorld(t, pool, false)
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		want := snapshot(t, pool)

		h, st := loadWorld(t, pool, true)
		if n, err := st.QueuedRollups(ctx); err != nil || n == 0 {
			t.Fatalf("%d rows queued before the reorg (%v)", n, err)
		}
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		// The reorg applied its own blocks' rows, not the backlog.
		if n, err := st.QueuedRollups(ctx); err != nil || n == 0 {
			t.Fatalf("%d rows queued after the reorg (%v), want the other blocks' rows", n, err)
		}
		if got := snapshot(t, pool); got != want {
			t.Fatalf("reorg with rows queued:\n%s\nwant (inline):\n%s", got, want)
		}
	})
	t.Run("reorg naming a block without its number", func(t *testing.T) {
		// The reorg cannot tell which queued rows are its block's: it applies the chain's.
		reorg := tw.Msgs([]*eventsv1.Reorg{{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{{Hash: tw.BlockHash("ethereum", 3)}}}})
		h, _ := loadWorld(t, pool, false)
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		want := snapshot(t, pool)
		h, _ = loadWorld(t, pool, true)
		if err := h.Reorgs(ctx, reorg); err != nil {
			t.Fatal(err)
		}
		var left int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.rollup_keys WHERE chain = 'ethereum'`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d ethereum rows left queued (%v), want 0", left, err)
		}
		if got := snapshot(t, pool); got != want {
			t.Fatalf("reorg with rows queued:\n%s\nwant (inline):\n%s", got, want)
		}
	})
	t.Run("redelivery and reorg", testRedeliveryAndReorg)
	t.Run("relabel", testRelabelIsExact)
	t.Run("reorg back to orphaned blocks", testReorgBackToOrphanedBlocks)

	t.Run("lag bound", func(t *testing.T) {
		// Past the bound a write applies as many queued rows as it wrote before it returns;
		// within it, it leaves them.
		for _, over := range []bool{false, true} {
			queuedRollups = true
			reset(t, pool)
			st := newStore(pool, withGroupMin(groupMin), func(o *store.Options) {
				o.InlineRollups, o.RollupLagMax, o.RollupBatch = false, 100, 3
				o.QueueLength = func(context.Context) (int64, error) {
					if over {
						return 101, nil
					}
					return 100, nil
				}
			})
			h := events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)}
			trs := tw.Transfers()
			if err := h.Transfers(ctx, tw.Msgs(trs[:4])); err != nil {
				t.Fatal(err)
			}
			n, err := st.QueuedRollups(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int64{false: 4, true: 0}[over]; n != want {
				t.Fatalf("over the bound %v: %d rows left queued, want %d", over, n, want)
			}
		}
	})

	t.Run("worker", func(t *testing.T) {
		reset(t, pool)
		h, st := handlers(pool)
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- st.RunRollups(wctx, time.Hour, slog.New(slog.DiscardHandler), noop.Meter{}) }()
		defer func() {
			stop()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		if err := tw.Load(ctx, h); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := st.QueuedRollups(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d rows still queued: the worker did not apply the write", n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		queuedRollups = false // nothing left to apply: snapshot must not apply it itself
		defer func() { queuedRollups = true }()
		if got := snapshot(t, pool); got != want {
			t.Fatalf("applied by the worker:\n%s\nwant (inline):\n%s", got, want)
		}
	})
}

// loadWorld empties the database and loads the test world with handlers whose store queues the
// rollups (queued) or applies them inline; queuedRollups is left as queued says.
func loadWorld(t *testing.T, pool *pgxpool.Pool, queued bool) (events.Handlers, *store.Store) {
	t.Helper()
	queuedRollups = queued
	reset(t, pool)
	h, st := handlers(pool)
	if err := tw.Load(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return h, st
}

// The queue's length (the lag bound's figure, transfers_rollup_queue_rows and the
// transfers.rollups job's remaining rows) is the statistics' live-tuple estimate, which can stay
// a few rows off for good on a quiet chain (a table below its autovacuum threshold is not
// counted again): an empty queue must read 0 and a non-empty one at least 1. The estimate is
// made stale here by deleting the rows right after a forced flush of the statistics (a backend
// flushes them at most once a second), so the length would read the deleted rows.
func TestQueueLengthExactAtEmpty(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := newStore(pool)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	length := func() int64 {
		t.Helper()
		n, err := st.QueueLength(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func(n int) {
		exec(fmt.Sprintf(`INSERT INTO transfers.rollup_keys (block_time, uid, block_number, chain)
			SELECT now(), gen_random_uuid(), g, 'ethereum' FROM generate_series(1, %d) g`, n))
	}
	exec(`DELETE FROM transfers.rollup_keys`)
	insert(5)
	exec(`SELECT pg_stat_force_next_flush()`)
	if n := length(); n < 1 {
		t.Fatalf("5 rows queued: length %d, want at least 1", n)
	}
	exec(`DELETE FROM transfers.rollup_keys`)
	if n := length(); n != 0 {
		t.Fatalf("empty queue: length %d, want 0", n)
	}
	insert(1)
	if n := length(); n < 1 {
		t.Fatalf("1 row queued: length %d, want at least 1", n)
	}
	exec(`DELETE FROM transfers.rollup_keys`)
}
