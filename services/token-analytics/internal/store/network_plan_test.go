package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// A /networks/status request reads the tip and the hour of blocks it reports, not the two days
// a chain keeps: with 14,400 blocks retained (12 s apart) it reads about the hour's 300.
func TestNetworkStatusReadsTheHour(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.network_blocks, market.orphaned_blocks`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO market.network_blocks (chain, block_hash, number, time, transactions, min_gas_price)
		SELECT 'ethereum', '0x' || n, n, timestamptz '2026-01-10 00:00:00+00' + n * interval '12 seconds', 150, 1e9
		FROM generate_series(1, 14400) AS n;
		ANALYZE market.network_blocks`); err != nil {
		t.Fatal(err)
	}
	var plan []byte
	if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sqlNetworkStatus,
		[]string{"ethereum"}, []string{"ethereum"}).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if read := rowsRead(t, plan, "network_blocks"); read > 1000 {
		t.Fatalf("the status read %.0f rows of network_blocks; the tip and its hour are about 300", read)
	}
}

// rowsRead is how many rows of relation an EXPLAIN (ANALYZE, FORMAT JSON) plan read: rows
// returned plus rows removed by filters and rechecks, over every loop.
func rowsRead(t *testing.T, plan []byte, relation string) float64 {
	t.Helper()
	var doc []struct{ Plan map[string]any }
	if err := json.Unmarshal(plan, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any) float64
	walk = func(n map[string]any) float64 {
		var sum float64
		if n["Relation Name"] == relation {
			loops, _ := n["Actual Loops"].(float64)
			for _, k := range []string{"Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck"} {
				v, _ := n[k].(float64)
				sum += v * loops
			}
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			sum += walk(k.(map[string]any))
		}
		return sum
	}
	return walk(doc[0].Plan)
}
