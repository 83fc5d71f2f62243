package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// clear forgets the statements recorded so far.
func (l *statementLog) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls, l.args = nil, nil
}

// pairRowsWorld writes a live entity (one address, x) receiving 20,000 transfers each in a pair
// row of its own and 300 pair rows of three transfers each, values and USD spread over their
// ranges (some singles unpriced or priced 0), and analyzes them. It returns x.
func pairRowsWorld(t *testing.T, ctx context.Context, pool *pgxpool.Pool) string {
	t.Helper()
	st := newStore(pool, withGroupMin(0))
	addr := func(n int) string { return fmt.Sprintf("0x%040x", n) }
	x := addr(0xc0ffee)
	if err := st.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: x,
		Entity: &store.Entity{ID: "xx", Name: "XX", Type: "cex"}, Version: 1, UpdatedAt: time.Now()}}, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)
	var rows []store.TransferRow
	row := func(from string, bt time.Time, value float64, usd *float64) {
		h := fmt.Sprintf("0x%064x", len(rows)+1)
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(len(rows) + 1),
			BlockTime: bt, From: from, To: x, TokenID: "ethereum", TokenSymbol: "ETH", TokenDecimals: 18,
			Amount: big.NewInt(int64(len(rows) + 1)), UnitValue: value, USD: usd})
	}
	for i := 0; i < 20_000; i++ {
		usd := 3*float64(i) + 0.5
		p := &usd
		switch {
		case i%97 == 0:
			p = nil
		case i%89 == 0:
			p = new(float64)
		}
		row(addr(0x100000+i), at.Add(time.Duration(i)*10*time.Second), 1+float64(i), p)
	}
	for j := 0; j < 300; j++ {
		for k := 0; k < 3; k++ {
			v := 1 + float64(j*66+k*20)
			usd := 3 * v
			row(addr(0x200000+j), at.Add(time.Duration(j)*10*time.Minute+time.Duration(k)*time.Second), v, &usd)
		}
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE transfers.entity_pair_rows; ANALYZE transfers.transfers`); err != nil {
		t.Fatal(err)
	}
	return x
}

// pairRestIndexes are the indexes that may serve the read of pair rows entityPairSingle leaves.
var pairRestIndexes = map[string]bool{"entity_pair_rows_multi": true, "entity_pair_rows_usd": true}

// checkPairRest fails unless every read of entity_pair_rows under n goes through pairRestIndexes
// (no Seq Scan of the table, no walk of its primary key or any other index over the group), and
// returns the indexes read.
func checkPairRest(t *testing.T, what string, n planNode) []string {
	t.Helper()
	var used, bad []string
	n.walk(func(p planNode) {
		if p.Relation == "entity_pair_rows" && p.NodeType != "Bitmap Heap Scan" && !pairRestIndexes[p.Index] {
			bad = append(bad, p.NodeType+" "+p.Index)
		}
		if strings.HasPrefix(p.Index, "entity_pair_rows") {
			if !pairRestIndexes[p.Index] {
				bad = append(bad, p.NodeType+" "+p.Index)
			}
			used = append(used, p.Index)
		}
	})
	if len(bad) > 0 || len(used) == 0 {
		out, _ := json.Marshal(n)
		t.Fatalf("%s: pair rows of several transfers read by %v (indexes read: %v), not entity_pair_rows_multi or _usd; plan %s",
			what, bad, used, out)
	}
	return used
}

// explain is the EXPLAIN (ANALYZE) plan of sql with args (as the store sent them) over pool.
func explain(t *testing.T, ctx context.Context, pool *pgxpool.Pool, sql string, args []any) planNode {
	t.Helper()
	var plan []struct {
		Plan planNode `json:"Plan"`
	}
	if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	return plan[0].Plan
}

// The count and the range histogram of a large live entity's transfers within a value or USD
// range read the pair rows that entityPairSingle does not decide (several transfers, or a one-
// transfer row without a price under a USD range) through entity_pair_rows_multi, or
// entity_pair_rows_usd for the unpriced ones, never by scanning the group's pair rows (about
// 20,000 here); and both answer what a plain count of the transfers does.
func TestEntityPairRangeReadsUseMultiIndex(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	t.Cleanup(func() { reset(t, pool) })
	x := pairRowsWorld(t, ctx, pool)

	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	log := &statementLog{}
	cfg.ConnConfig.Tracer = log
	cfg.MaxConns = 1 // the plans are read on the store's own connection, with its session settings
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()
	st := newStore(traced, withGroupMin(0))
	p := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		what, cond string
		f          store.TransferFilter
		bound      float64
	}{
		{"valueGte", "unit_value >= $2", store.TransferFilter{ValueGte: p(15_000.5)}, 15_000.5},
		{"valueLte", "unit_value <= $2", store.TransferFilter{ValueLte: p(5_000.5)}, 5_000.5},
		{"usdGte", "usd >= $2", store.TransferFilter{USDGte: p(45_000)}, 45_000},
		{"usdLte", "usd <= $2", store.TransferFilter{USDLte: p(15_000)}, 15_000},
	} {
		var want int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers WHERE to_addr = $1 AND `+c.cond, x, c.bound).Scan(&want); err != nil {
			t.Fatal(err)
		}
		f := c.f
		f.Flow = "all"
		f.To = store.AddrFilter{In: store.AddrSet{Entities: []string{"xx"}, Size: 1}, Only: true}

		log.clear()
		_, count, err := listTransfers(ctx, st, f, store.Page{SortKey: "time", SortDir: "desc", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if int64(count) != want {
			t.Errorf("%s: count %d, want %d", c.what, count, want)
		}
		sql, args := log.last(t, "SELECT count(*) FROM (SELECT 1 FROM transfers.entity_pair_rows e CROSS JOIN LATERAL")
		countIdx := checkPairRest(t, c.what+" count", explain(t, ctx, traced, sql, args))

		log.clear()
		buckets, err := st.Histogram(ctx, f, store.Day)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, b := range buckets {
			sum += b.Count
		}
		if sum != want {
			t.Errorf("%s: histogram holds %d transfers, want %d", c.what, sum, want)
		}
		sql, args = log.last(t, "SELECT b, count(*), sum(usd) FROM (")
		var rest *planNode
		explain(t, ctx, traced, sql, args).walk(func(n planNode) {
			if n.NodeType == "Append" && rest == nil && len(n.Plans) == 2 {
				rest = &n.Plans[1] // the UNION ALL's second arm, entityPairNotSingle's
			}
		})
		if rest == nil {
			t.Fatalf("%s: histogram plan has no Append of two arms", c.what)
		}
		histIdx := checkPairRest(t, c.what+" histogram", *rest)
		t.Logf("%s: %d transfers; rows of several read by %v (count), %v (histogram)", c.what, want, countIdx, histIdx)
	}
}
