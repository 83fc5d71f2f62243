package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// rankingWorld stores 2,009 operator entities (the first two of type dex, the rest cex) each
// holding ten ethereum tokens (the native coin and tokens 0x…01 to 0x…09, priced p0 to p9) with
// a change on each of the 60 days up to day, and analyzes the tables.
func rankingWorld(t *testing.T, day time.Time) *store.Store {
	t.Helper()
	st := fresh(t)
	if _, err := st.Pool().Exec(context.Background(), `
		INSERT INTO balances.entities (id, name, type)
		SELECT 'e' || lpad(i::text, 5, '0'), 'E' || i, CASE WHEN i < 2 THEN 'dex' ELSE 'cex' END FROM generate_series(0, 2008) i;
		INSERT INTO balances.market_tokens (pricing_id, name, symbol)
		SELECT 'p' || k, 'P' || k, 'P' || k FROM generate_series(1, 9) k;
		INSERT INTO balances.deployments (chain, token, pricing_id, decimals)
		SELECT 'ethereum', '0x' || lpad(k::text, 40, '0'), 'p' || k, 18 FROM generate_series(1, 9) k;
		INSERT INTO balances.entity_change (entity_id, chain, token, day, delta)
		SELECT e.id, 'ethereum', CASE WHEN k = 0 THEN '' ELSE '0x' || lpad(k::text, 40, '0') END, '`+day.Format("2006-01-02")+`'::date - d, 1000 + d
		FROM balances.entities e, generate_series(0, 9) k, generate_series(0, 59) d;
		INSERT INTO balances.entity_current (entity_id, chain, token, balance)
		SELECT entity_id, chain, token, sum(delta) FROM balances.entity_change GROUP BY 1, 2, 3;
		ANALYZE balances.entities; ANALYZE balances.deployments; ANALYZE balances.entity_change; ANALYZE balances.entity_current`); err != nil {
		t.Fatal(err)
	}
	return st
}

// changeRowsRead is how many rows of entity_change the plan's nodes read (returned or removed
// by a filter or recheck, times their loops).
func changeRowsRead(t *testing.T, plan []byte) float64 {
	t.Helper()
	var doc []struct{ Plan map[string]any }
	if err := json.Unmarshal(plan, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any) float64
	walk = func(n map[string]any) float64 {
		sum := 0.0
		if n["Relation Name"] == "entity_change" {
			num := func(k string) float64 { v, _ := n[k].(float64); return v }
			sum += (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")) * num("Actual Loops")
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			sum += walk(k.(map[string]any))
		}
		return sum
	}
	return walk(doc[0].Plan)
}

// A narrow filter of the ranking (read_entity_ranking.sql) reads the changes of the entities
// and tokens it keeps only, never every entity's changes of the interval (2,009 entities × 10
// tokens × 30 days = 602,700 rows); the unfiltered ranking reads each change of the interval
// once.
func TestRankingFiltersNarrowTheChangesRead(t *testing.T) {
	ctx := context.Background()
	today := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	st := rankingWorld(t, today)
	then := today.AddDate(0, 0, -30).Format("2006-01-02")
	chainsArg, nat, natID := []string{"ethereum"}, []string{"ethereum"}, []string{"ethereum"}
	var none []string
	for _, c := range []struct {
		name string
		args []any
		max  float64
	}{
		{"entityTypes=dex", []any{chainsArg, then, none, []string{"dex"}, none, none, none, nat, natID}, 2 * 10 * 30},
		{"entityIds", []any{chainsArg, then, []string{"e00007", "e01000"}, none, none, none, none, nat, natID}, 2 * 10 * 30},
		{"pricingIds", []any{chainsArg, then, none, none, none, none, []string{"p3"}, nat, natID}, 2009 * 30},
		{"entityTags", []any{chainsArg, then, none, none, []string{"nobody"}, none, none, nat, natID}, 0},
		{"none", []any{chainsArg, then, none, none, none, none, none, nat, natID}, 2009 * 10 * 60},
	} {
		var plan []byte
		if err := st.Pool().QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+store.QueryText("read_entity_ranking"), c.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if read := changeRowsRead(t, plan); read > c.max {
			t.Errorf("%s read %.0f rows of entity_change, want at most %.0f", c.name, read, c.max)
		}
		rows, err := st.Pool().Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+store.QueryText("read_entity_ranking"), c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		t.Logf("%s:\n%s", c.name, strings.Join(lines, "\n"))
	}
}
