package read

import (
	"context"
	_ "embed"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/transfer_partitions.sql
var transferPartitionsSQL string

// flowSides are the entity_pair_rows sides a flow selects.
func flowSides(flow string) []int16 {
	switch flow {
	case "out":
		return []int16{1}
	case "in":
		return []int16{2}
	case "self":
		return []int16{3}
	case flowFrom:
		return []int16{1, 3}
	case flowTo:
		return []int16{2, 3}
	}
	return []int16{1, 2, 3}
}

// entityPairConds are the conditions on entity_pair_rows (alias e) of a pair-row-driven read of f
// for group g: the group, sides, chains and tokens, the window widened to whole hours, and the
// value and USD ranges where a pair row of one transfer already decides them (a superset
// otherwise).
func (b *sqlb) entityPairConds(f TransferFilter, g string) []string {
	c := []string{"e.grp = " + b.arg(g), "e.side = ANY(" + b.arg(flowSides(f.Flow)) + "::smallint[])"}
	c = append(c, b.entityPairSides(f)...)
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("e.chain", f.Chains))
	}
	if tc := b.tokenCond([][2]string{{"e.token", "e.token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
		c = append(c, tc)
	}
	if !f.TimeFrom.IsZero() {
		c = append(c, "e.bucket >= "+b.arg(f.TimeFrom.UTC().Truncate(time.Hour)))
	}
	if !f.TimeTo.IsZero() {
		c = append(c, "e.bucket <= "+b.arg(f.TimeTo))
	}
	// Amounts and USD are never negative, so a pair row holds a transfer at or above a lower
	// bound only if its sum is at or above it; an upper bound decides only single-transfer rows.
	// Both against the bound rounded as the sums' terms are (pairBound), so the rows kept are a
	// superset of those holding a match (the transfers' own figures decide, in the probe).
	if f.USDGte != nil {
		c = append(c, "e.usd >= "+b.pairBound(*f.USDGte))
	}
	if f.ValueGte != nil {
		c = append(c, "e.value >= "+b.pairBound(*f.ValueGte))
	}
	if f.USDLte != nil {
		c = append(c, "(e.n > 1 OR e.usd <= "+b.pairBound(*f.USDLte)+")")
	}
	if f.ValueLte != nil {
		c = append(c, "(e.n > 1 OR e.value <= "+b.pairBound(*f.ValueLte)+")")
	}
	return c
}

// pairBound is a value or USD bound as a pair row's sums hold its terms: entity_pair_rows sums
// each transfer's float8 as numeric, which keeps 15 significant digits, so a single transfer's
// row holds its figure rounded (1266.89916334383 for 1266.899163343833). Rounding is monotone:
// a figure at or above a bound rounds to at or above the rounded bound, and a rounded figure
// other than the rounded bound compares with it as the figure does with the bound; a row whose
// figure rounds to the rounded bound itself is decided by its transfer (pairTies).
func (b *sqlb) pairBound(v float64) string {
	return b.arg(v) + "::float8::numeric"
}

// pairRangeConds are f's value and USD ranges on a pair row of one transfer (e.usd, e.value)
// against the rounded bounds (pairBound), exact for rows other than pairTies.
func (b *sqlb) pairRangeConds(f TransferFilter) []string {
	var c []string
	for _, r := range []struct {
		cond string
		v    *float64
	}{{"e.usd >=", f.USDGte}, {"e.usd <=", f.USDLte}, {"e.value >=", f.ValueGte}, {"e.value <=", f.ValueLte}} {
		if r.v != nil {
			c = append(c, r.cond+" "+b.pairBound(*r.v))
		}
	}
	return c
}

// pairTies is the condition that a row of one transfer (read through entityPairSingle) is
// decided by its figures: none of them rounds to one of f's value and USD bounds (pairBound), or
// its transfer's own figures meet f (read through the row's fields, entityPairProbe, which
// checks every range). Deciding ties here, not by sending them to the rows read transfer by
// transfer, keeps entityPairNotSingle to what entity_pair_rows_multi serves. Empty without
// ranges.
func (b *sqlb) pairTies(f TransferFilter) string {
	var ties []string
	for _, r := range []struct {
		col string
		v   *float64
	}{{"e.usd", f.USDGte}, {"e.usd", f.USDLte}, {"e.value", f.ValueGte}, {"e.value", f.ValueLte}} {
		if r.v != nil {
			ties = append(ties, r.col+" = "+b.pairBound(*r.v))
		}
	}
	if len(ties) == 0 {
		return ""
	}
	return "(NOT (" + strings.Join(ties, " OR ") + ") OR EXISTS " +
		b.entityPairProbe(f, "1", time.Time{}, time.Time{}, "transfers.transfers") + ")"
}

// entityPairRows renders the pair-row-driven read of group g's transfers matching f: for each pair
// row of the group (newest hour first, or oldest), its transfers through the sender's index.
//
// lo and hi (zero: open) bound the pair rows' hours, first to last. They bound the transfers' times
// inside the lateral read as well, as constants: without them the planner cannot prune the monthly
// partitions of transfers before execution and plans every one (most of a page turn's cost).
func (b *sqlb) entityPairRows(f TransferFilter, g, cols string, lo, hi time.Time) (from string) {
	conds := b.entityPairConds(f, g)
	if !lo.IsZero() {
		conds = append(conds, "e.bucket >= "+b.arg(lo))
	}
	if !hi.IsZero() {
		conds = append(conds, "e.bucket <= "+b.arg(hi))
	}
	return `transfers.entity_pair_rows e CROSS JOIN LATERAL ` + b.entityPairProbe(f, cols, lo, hi, "transfers.transfers") + ` t WHERE ` + strings.Join(conds, " AND ")
}

// monthPartition is the monthly partition of transfers.<table> holding every time from lo to hi
// (transfers.ensure_partition's name: <table>_YYYYMM, months in UTC), or "" when they lie in
// different months.
func monthPartition(table string, lo, hi time.Time) string {
	lo, hi = lo.UTC(), hi.UTC()
	if lo.IsZero() || hi.IsZero() || lo.Year() != hi.Year() || lo.Month() != hi.Month() {
		return ""
	}
	return "transfers." + table + "_" + lo.Format("200601")
}

// attached reports whether name (schema-qualified) is a partition of transfers.transfers, from the
// catalog read at most Options.PartitionRefresh ago (again at once, at most once a second, for a
// name it did not list: a new month). A failed read answers false (the caller reads the partitioned
// table).
func (s *Reader) attached(ctx context.Context, name string) bool {
	s.mu.Lock()
	ok, age := s.parts[name], time.Since(s.partsRead)
	s.mu.Unlock()
	refresh := s.opt.PartitionRefresh
	if age < refresh && (ok || age < min(time.Second, refresh)) {
		return ok
	}
	rows, err := s.db.Pool().Query(ctx, transferPartitionsSQL)
	if err != nil {
		return false
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false
	}
	parts := make(map[string]bool, len(names))
	for _, n := range names {
		parts[n] = true
	}
	s.mu.Lock()
	s.parts, s.partsRead = parts, time.Now()
	s.mu.Unlock()
	return parts[name]
}

// entityPairProbe is the lateral read of the transfers of pair row e (from_addr, to_addr, chain,
// token, bucket) matching f, through the sender's or recipient's index, bounded by lo and hi as
// entityPairRows says, from table (transfers.transfers or one of its partitions); more are further
// conditions on them (alias t).
func (b *sqlb) entityPairProbe(f TransferFilter, cols string, lo, hi time.Time, table string, more ...string) string {
	return b.probe([]string{"t.from_addr = e.from_addr", "t.block_time >= e.bucket", "t.block_time < e.bucket + interval '1 hour'",
		"t.to_addr = e.to_addr", "t.chain = e.chain", "t.token = e.token"}, f, cols, lo, hi, table, more...)
}

// entityPairKeyProbe is entityPairProbe for a pair row of one transfer known by its natural key
// (k.uid at k.bt, entity_pair_rows.uid and t_first): that transfer, read through the natural key's
// index, if it matches f (its pair row matched the rest). The index's entries of a page's span lie
// on a few leaf pages; a probe of the sender's index reads a leaf page of its own for each pair
// row.
func (b *sqlb) entityPairKeyProbe(f TransferFilter, cols string, lo, hi time.Time, table string, more ...string) string {
	return b.probe([]string{"t.block_time = k.bt", "t.uid = k.uid"}, f, cols, lo, hi, table, more...)
}

// probe is the lateral read of transfers (alias t) from table matching rowConds, f's window and
// ranges, and more, bounded by lo and hi as entityPairRows says.
func (b *sqlb) probe(rowConds []string, f TransferFilter, cols string, lo, hi time.Time, table string, more ...string) string {
	if !lo.IsZero() {
		rowConds = append(rowConds, "t.block_time >= "+b.arg(lo))
	}
	if !hi.IsZero() {
		rowConds = append(rowConds, "t.block_time < "+b.arg(hi.Add(time.Hour)))
	}
	if !f.TimeFrom.IsZero() {
		rowConds = append(rowConds, "t.block_time >= "+b.arg(f.TimeFrom))
	}
	if !f.TimeTo.IsZero() {
		rowConds = append(rowConds, "t.block_time <= "+b.arg(f.TimeTo))
	}
	rowConds = append(rowConds, b.rangeConds(f, "t.usd", "t.unit_value")...)
	rowConds = append(rowConds, more...)
	return `(SELECT ` + cols + ` FROM ` + table + ` t WHERE ` + strings.Join(rowConds, " AND ") + `)`
}

// entityPairSides are f's from and to filters on a pair row's sender and recipient
// (entityPairSidePlan).
//
// A side of at most Options.PairJoinMax addresses (an entity, its deposit addresses) is a semi-join
// (an anti-join for an exclusion) with the set, which the planner may hash: a count over an
// entity's pair rows whose other side rarely matches then hashes the set once instead of probing
// the attribution index for every pair row (an exchange's transfers to its own deposit addresses,
// of which there are none). A larger set (an entity type) stays a probe per pair row: hashing a
// type of millions of addresses would cost more than the probes up to a page or 10,000 matches.
//
// A set of entity types whose groups are live (f.typed) is a test of the pair row's own from_t or
// to_t: the row keeps the live type group of each side (migration 15).
func (b *sqlb) entityPairSides(f TransferFilter) []string {
	var c []string
	for _, s := range []struct {
		col, tcol string
		f         AddrFilter
		in, not   bool
	}{{"e.from_addr", "e.from_t", f.From, f.typed.fromIn, f.typed.fromNot}, {"e.to_addr", "e.to_t", f.To, f.typed.toIn, f.typed.toNot}} {
		if s.f.Only {
			if s.in {
				c = append(c, s.tcol+" = ANY("+b.arg(typeGroups(s.f.In.Types))+"::text[])")
			} else {
				c = append(c, b.entityPairMember(s.col, s.f.In, false, f.sparseSides))
			}
		}
		if !s.f.NotIn.Empty() {
			if s.not {
				c = append(c, "NOT ("+s.tcol+" = ANY("+b.arg(typeGroups(s.f.NotIn.Types))+"::text[]))")
			} else {
				c = append(c, b.entityPairMember(s.col, s.f.NotIn, true, f.sparseSides))
			}
		}
	}
	return c
}

// entityPairMember is "col is (not) in s" on a entity_pair_rows column (entityPairSides). sparse
// (the conditions match few pair rows, so all are read) hashes a modelled set of at most
// Options.PairJoinMax addresses for certain: an OFFSET keeps the subquery from becoming a join the
// planner would probe per pair row, expecting a LIMIT to stop it early.
func (b *sqlb) entityPairMember(col string, s AddrSet, not, sparse bool) string {
	if s.Size > b.joinMax {
		if not {
			return b.notMember(col, s)
		}
		return b.member(col, s)
	}
	rows, counting := b.rows, b.counting
	b.rows, b.counting = false, false // renders a join: entity_pair_rows is not partitioned (see member)
	defer func() { b.rows, b.counting = rows, counting }()
	if sparse && s.modelled() {
		in := col + " IN (" + b.source(s) + " OFFSET 0)"
		if not {
			return "NOT (" + in + ")" // addresses are never NULL
		}
		return in
	}
	if not {
		return b.notMember(col, s)
	}
	return b.member(col, s)
}

// rangeConds are f's value and USD ranges on the given columns.
func (b *sqlb) rangeConds(f TransferFilter, usdCol, valueCol string) []string {
	var c []string
	for _, r := range []struct {
		cond string
		v    *float64
	}{{usdCol + " >=", f.USDGte}, {usdCol + " <=", f.USDLte}, {valueCol + " >=", f.ValueGte}, {valueCol + " <=", f.ValueLte}} {
		if r.v != nil {
			c = append(c, r.cond+" "+b.arg(*r.v))
		}
	}
	return c
}
