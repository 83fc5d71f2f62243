package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// statementLog records the statements run over a pool, with their arguments.
type statementLog struct {
	mu   sync.Mutex
	sqls []string
	args [][]any
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls = append(l.sqls, d.SQL)
	l.args = append(l.args, d.Args)
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// last returns the last statement recorded that starts with prefix.
func (l *statementLog) last(t *testing.T, prefix string) (string, []any) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.sqls) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(l.sqls[i]), prefix) {
			return l.sqls[i], l.args[i]
		}
	}
	t.Fatalf("no statement starting with %q ran", prefix)
	return "", nil
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node the test reads.
type planNode struct {
	NodeType   string     `json:"Node Type"`
	Relation   string     `json:"Relation Name"`
	Index      string     `json:"Index Name"`
	ActualRows float64    `json:"Actual Rows"`
	Loops      float64    `json:"Actual Loops"`
	Plans      []planNode `json:"Plans"`
}

// walk calls f on n and every node below it.
func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// A page of swaps sorted by value over a table of 240,000 swaps in four monthly partitions
// walks the value index (swaps_value, migration 25) of each partition and stops at its limit,
// with or without a time window: every scan of a swaps partition is an index scan of it, and
// all of them together return fewer rows than a hundredth of the table. Without the index the
// page read every swap of its window and sorted them.
func TestSwapPageByValueWalksIndex(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	t.Cleanup(func() { reset(t, pool) })
	const n = 240_000
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for m := 0; m < 4; m++ {
		if _, err := pool.Exec(ctx, `SELECT transfers.ensure_partition('swaps', $1)`, start.AddDate(0, m, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO transfers.swaps
SELECT (ARRAY['ethereum','base'])[1 + i % 2], lpad(to_hex(i), 64, '0') || '_1', lpad(to_hex(i), 64, '0'), lpad(to_hex(i), 64, 'b'),
  i, $1::timestamptz + (i * interval '1 second') * (119 * 86400 / $2::int), 1,
  '0x' || lpad(to_hex(i % 97), 40, '0'), '0x' || lpad(to_hex(i % 5003), 40, '0'), '0x' || lpad(to_hex(i % 4001), 40, '0'),
  '0x' || lpad(to_hex(i % 31), 40, '0'), 't', 'T', 'T', (ARRAY[6, 8, 18])[1 + i % 3], (i * 7919 % 100003 - 50000)::numeric * 10::numeric ^ (ARRAY[6, 8, 18])[1 + i % 3],
  '0x' || lpad('c', 40, '0'), 'usd-coin', 'USD Coin', 'USDC', 6, i, NULL, true, 'uniswap_v2'
FROM generate_series(1, $2::int) i`, start, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE transfers.swaps`); err != nil {
		t.Fatal(err)
	}
	valueIndexes := map[string]bool{}
	rows, err := pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'transfers.swaps_value'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		valueIndexes[name] = true
	}
	if len(valueIndexes) != 4 {
		t.Fatalf("swaps_value has %d partition indexes, want 4", len(valueIndexes))
	}

	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	log := &statementLog{}
	cfg.ConnConfig.Tracer = log
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	st := newStore(traced)
	windows := []struct{ from, to time.Time }{
		{},
		{start.AddDate(0, 0, 10), start.AddDate(0, 3, 10)},
	}
	for _, w := range windows {
		for _, dir := range []string{"desc", "asc"} {
			page, _, err := st.ListSwaps(ctx, store.SwapFilter{TimeFrom: w.from, TimeTo: w.to, Flow: "all"},
				store.Page{SortKey: "value", SortDir: dir, Limit: 20, Offset: 20})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != 20 {
				t.Fatalf("window %v %s: %d swaps, want 20", w, dir, len(page))
			}
			sql, args := log.last(t, "SELECT chain, id, tx_hash")
			var plan []struct {
				Plan planNode `json:"Plan"`
			}
			if err := traced.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			scanned, scans := 0.0, 0
			plan[0].Plan.walk(func(p planNode) {
				if !strings.HasPrefix(p.Relation, "swaps") {
					return
				}
				scans++
				if !valueIndexes[p.Index] {
					out, _ := json.Marshal(plan)
					t.Fatalf("window %v %s: %s of %s, not a walk of its value index; plan %s", w, dir, p.NodeType, p.Relation, out)
				}
				scanned += p.ActualRows * p.Loops
			})
			if scans == 0 || scanned > n/100 {
				t.Fatalf("window %v %s: %d scans of the swaps read %.0f rows, want some and at most %d", w, dir, scans, scanned, n/100)
			}
			t.Logf("window %s..%s %s, offset 20 limit 20: %d index scans of swaps_value read %.0f of %d swaps",
				w.from.Format(time.DateOnly), w.to.Format(time.DateOnly), dir, scans, scanned, n)
		}
	}
}
