package read

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
)

// entityPairCount counts (capped) group g's transfers matching f through its pair rows. A pair row
// of one transfer in an hour wholly inside the window decides the value and USD ranges on its
// own, so those are counted from the pair rows alone; the transfers of the other matching pair
// rows (several transfers, or an hour the window cuts) are counted from the rows.
func (s *Reader) entityPairCount(ctx context.Context, f TransferFilter, g string) (int, error) {
	b := s.newb(sqlb{rows: true})
	c := append([]string{"e.grp = " + b.arg(g), b.entityPairSingle(f), "e.side = ANY(" + b.arg(flowSides(f.Flow)) + "::smallint[])"},
		b.pairRangeConds(f)...)
	c = append(c, b.entityPairSides(f)...)
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("e.chain", f.Chains))
	}
	if tc := b.tokenCond([][2]string{{"e.token", "e.token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
		c = append(c, tc)
	}
	var lower int
	if err := s.db.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM transfers.entity_pair_rows e WHERE %s LIMIT %d) x`,
		strings.Join(c, " AND "), MaxCount), db.Exec(b.args)...).Scan(&lower); err != nil {
		return 0, fmt.Errorf("count transfers of %s: %w", g, err)
	}
	if lower >= MaxCount {
		return MaxCount, nil
	}
	b = s.newb(sqlb{rows: true})
	var rest int
	if err := s.db.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM %s AND %s LIMIT %d) x`, b.entityPairRows(f, g, "1", time.Time{}, time.Time{}), b.entityPairNotSingle(f), MaxCount-lower),
		db.Exec(b.args)...).Scan(&rest); err != nil {
		return 0, fmt.Errorf("count transfers of %s: %w", g, err)
	}
	return lower + rest, nil
}

// entityPairSingle is the condition on a pair row of entity_pair_rows that makes it stand for
// exactly one transfer of f's window with its own figures: one transfer (n = 1), inside the window
// (in a whole hour inside it, or at a known time inside it: a pair row of one transfer whose bounds
// meet is at that time), and priced when f has a USD range (a 0 is an unknown or a zero price).
// Other pair rows are decided by their transfers.
func (b *sqlb) entityPairSingle(f TransferFilter) string {
	is, _, _ := b.entityPairSingleParts(f)
	// A row of one transfer at a rounded bound stays single, decided by its transfer (pairTies;
	// here only: its arguments belong to this statement, and entityPairNotSingle has no tie arm).
	if ties := b.pairTies(f); ties != "" {
		is = append(is, ties)
	}
	// The window's hours, for the index (entityPairNotSingle's reads have them from entityPairConds).
	w := newWindow(f.TimeFrom, f.TimeTo)
	if !f.TimeFrom.IsZero() {
		is = append(is, "e.bucket >= "+b.arg(w.hLo))
	}
	if !f.TimeTo.IsZero() {
		is = append(is, "e.bucket < "+b.arg(w.hHi))
	}
	return "(" + strings.Join(is, " AND ") + ")"
}

// entityPairNotSingle is the negation of entityPairSingle, for a read through entityPairRows (whose
// entityPairConds it relies on), written as a disjunction the planner can serve from
// entity_pair_rows_multi (pair rows of several transfers, about 1% of them): with no time window
// and a positive usdGte it is "e.n <> 1" alone, since entityPairConds already keeps only rows with
// a positive usd. Pair rows whose bounds lie outside the window hold none of its transfers and are
// left out.
func (b *sqlb) entityPairNotSingle(f TransferFilter) string {
	_, not, outside := b.entityPairSingleParts(f)
	if outside != "" {
		return "(" + strings.Join(not, " OR ") + ") AND " + outside
	}
	return "(" + strings.Join(not, " OR ") + ")"
}

// entityPairSingleParts are entityPairSingle's conditions and, one for one, their negations (less
// the ones entityPairConds rules out), and the condition leaving out pair rows whose bounds lie
// outside the window (empty without one).
//
// A keyset page turn's count reads the hour its timeLte cuts from the pair rows: before the known
// times counted, each of that hour's pair rows was decided by reading its transfers (a large part
// of the turn).
func (b *sqlb) entityPairSingleParts(f TransferFilter) (is, not []string, outside string) {
	is, not = []string{"e.n = 1"}, []string{"e.n <> 1"}
	if f.USDGte != nil || f.USDLte != nil {
		is = append(is, "e.usd > 0")
		if f.USDGte == nil || *f.USDGte <= 0 {
			// n = 1 as well (n <> 1 is an arm of its own), so entity_pair_rows_usd serves it.
			not = append(not, "(e.n = 1 AND e.usd <= 0)")
		}
	}
	if f.TimeFrom.IsZero() && f.TimeTo.IsZero() {
		return is, not, ""
	}
	w := newWindow(f.TimeFrom, f.TimeTo)
	var whole, cut, known, out []string
	if !f.TimeFrom.IsZero() {
		lo, at := b.arg(w.hLo.Add(time.Hour)), b.arg(f.TimeFrom)
		whole, cut = append(whole, "e.bucket >= "+lo), append(cut, "e.bucket < "+lo)
		known, out = append(known, "e.t_first >= "+at+"::timestamptz"), append(out, "e.t_last < "+at+"::timestamptz")
	}
	if !f.TimeTo.IsZero() {
		hi, at := b.arg(w.hHi.Add(-time.Hour)), b.arg(f.TimeTo)
		whole, cut = append(whole, "e.bucket < "+hi), append(cut, "e.bucket >= "+hi)
		known, out = append(known, "e.t_first <= "+at+"::timestamptz"), append(out, "e.t_first > "+at+"::timestamptz")
	}
	k := "coalesce(e.t_first = e.t_last AND " + strings.Join(known, " AND ") + ", false)"
	is = append(is, "(("+strings.Join(whole, " AND ")+") OR "+k+")")
	not = append(not, "(("+strings.Join(cut, " OR ")+") AND NOT "+k+")")
	return is, not, "NOT coalesce(" + strings.Join(out, " OR ") + ", false)"
}

// entityPairRangeHistogramSQL buckets a live entity group's transfers within a value or USD range
// (no rollup sums per transfer) through its pair rows: a single pair row (entityPairSingle) inside
// the range is its transfer; the transfers of the other pair rows are read and filtered. In the
// sparse world of the benchmark nearly every pair row is single, so this reads about one index
// entry per transfer in range instead of the entity's rows. Columns: bucket, count, usd.
func (b *sqlb) entityPairRangeHistogramSQL(f TransferFilter, g, gran string) string {
	trunc := func(col string) string { return "date_trunc('" + gran + "', " + col + ", 'UTC')" }
	c := append(append(b.entityPairConds(f, g), b.entityPairSingle(f)), b.pairRangeConds(f)...)
	singles := "SELECT " + trunc("e.bucket") + " AS b, e.usd FROM transfers.entity_pair_rows e WHERE " + strings.Join(c, " AND ")
	rest := "SELECT " + trunc("t.block_time") + ", coalesce(t.usd, 0)::numeric FROM " +
		b.entityPairRows(f, g, "block_time, usd", time.Time{}, time.Time{}) + " AND " + b.entityPairNotSingle(f)
	return "SELECT b, count(*), sum(usd) FROM (" + singles + " UNION ALL " + rest + ") u GROUP BY b ORDER BY b"
}
