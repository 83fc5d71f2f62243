package store_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// argTracer records the SQL and arguments of every statement its pool runs.
type argTracer struct {
	mu    sync.Mutex
	stmts []pgx.TraceQueryStartData
}

func (a *argTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	a.mu.Lock()
	a.stmts = append(a.stmts, d)
	a.mu.Unlock()
	return ctx
}

func (a *argTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// keyCol renders argument i of d (an array) at row r as text, uuids as their bytes.
func keyCol(t *testing.T, d pgx.TraceQueryStartData, i, r int) string {
	switch v := d.Args[i].(type) {
	case []string:
		return v[r]
	case []pgtype.UUID:
		return string(v[r].Bytes[:])
	default:
		t.Fatalf("%s: argument %d is a %T", firstLine(d.SQL), i, d.Args[i])
		return ""
	}
}

func argLen(d pgx.TraceQueryStartData, i int) int {
	switch v := d.Args[i].(type) {
	case []string:
		return len(v)
	case []pgtype.UUID:
		return len(v)
	}
	return 0
}

func firstLine(sql string) string {
	for _, l := range strings.Split(strings.TrimSpace(sql), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return l
		}
	}
	return sql
}

// Transfer batches run side by side (reorgLock shared), so each multi-row write of a batch, and
// of a reorg taking a batch back, lists its rows in key order: two batches sharing pairs then
// lock them in the same order instead of each holding a row the other waits for. Checked on
// the statements themselves: the key arguments of every such write, row by row, ascend.
func TestBatchWritesRowsInKeyOrder(t *testing.T) {
	ctx := context.Background()
	reset(t)
	if _, err := pgtest.Pool(t).Exec(ctx, `TRUNCATE intel.edges, intel.address_activity, intel.settled_activity, intel.pair_activity, intel.entity_internal,
		intel.entity_moves, intel.transfer_ids, intel.displaced_facts, intel.block_facts, intel.orphaned_blocks, intel.consumer_offsets`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &argTracer{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool)

	rng := rand.New(rand.NewPCG(1, 2))
	var ts []store.TransferFact
	for i := range 200 {
		from, to := addr(rng.IntN(40)), addr(rng.IntN(40))
		ts = append(ts, store.TransferFact{Offset: store.Offset{Topic: "chain.transfers.v1", Partition: i % 7, Offset: int64(i)},
			Chain: []string{"ethereum", "base"}[i%2], ChainType: "evm", BlockHash: fmt.Sprintf("0xb%d", i%3),
			ID: fmt.Sprintf("t%03d", rng.IntN(1000)), From: from, To: to, TimeMs: int64(1000 + i), USD: 1})
	}
	// Some without a block hash: settled at once.
	for i := range 30 {
		ts = append(ts, store.TransferFact{Offset: store.Offset{Topic: "chain.transfers.v1", Partition: i % 7, Offset: int64(500 + i)},
			Chain: "ethereum", ChainType: "evm", ID: fmt.Sprintf("n%03d", i), From: addr(rng.IntN(40)), To: addr(rng.IntN(40)), TimeMs: int64(1000 + i), USD: 1})
	}
	// Half of them again in other blocks: displaced, their ids held.
	for i := range 100 {
		d := ts[i]
		d.Offset.Offset += 1000
		d.BlockHash = "0xd" + d.BlockHash
		ts = append(ts, d)
	}
	if err := st.ApplyTransfers(ctx, ts); err != nil {
		t.Fatal(err)
	}
	for _, chain := range []string{"ethereum", "base"} {
		if err := st.ApplyReorg(ctx, chain, []string{"0xb0", "0xb1", "0xb2"}, nil); err != nil {
			t.Fatal(err)
		}
	}

	// Each write: a distinctive part of its SQL and the arguments holding its key, in key order.
	writes := []struct {
		sql  string
		keys []int
	}{
		{"INSERT INTO intel.pair_activity AS p", []int{0, 1, 2}},
		{"INSERT INTO intel.edges", []int{0, 2, 3}},
		{"INSERT INTO intel.address_activity", []int{0, 1}},
		{"INSERT INTO intel.transfer_ids", []int{0}},
		{"INSERT INTO intel.displaced_facts", []int{0, 1, 2}},
		{"UPDATE intel.pair_activity", []int{0, 1, 2}},
		{"DELETE FROM intel.pair_activity", []int{0, 1, 2}},
		{"INSERT INTO intel.entity_internal AS i (entity_id, volume_usd, transfer_count)\nSELECT af.entity_id, sum(d.usd), sum(d.n)\nFROM unnest", []int{0, 1, 2}},
		{"UPDATE intel.address_activity", []int{0, 1}},
		{"DELETE FROM intel.address_activity", []int{0, 1}},
		{"UPDATE intel.edges", []int{0, 1, 2}},
		{"DELETE FROM intel.edges", []int{0, 1, 2}},
		{"INSERT INTO intel.settled_activity", []int{0, 1}},
		{"DELETE FROM intel.block_facts b USING unnest", []int{0}},
		{"DELETE FROM intel.displaced_facts f USING unnest", []int{0}},
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, w := range writes {
		most := 0
		for _, d := range tr.stmts {
			if !strings.Contains(d.SQL, w.sql) {
				continue
			}
			n := argLen(d, w.keys[0])
			most = max(most, n)
			for r := 1; r < n; r++ {
				var c int
				for _, i := range w.keys {
					c = cmp.Or(c, bytes.Compare([]byte(keyCol(t, d, i, r-1)), []byte(keyCol(t, d, i, r))))
				}
				if c > 0 {
					t.Errorf("%q: row %d's key is before row %d's: the rows are not in key order", firstLine(w.sql), r, r-1)
					break
				}
			}
		}
		if most < 2 {
			t.Errorf("%q: no statement of it wrote more than %d rows; the test needs more to say anything", firstLine(w.sql), most)
		}
	}
}
