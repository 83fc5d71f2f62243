package read

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/shopspring/decimal"
)

// Bucket is one histogram bucket; USD is its exact sum (converted once, where it is answered).
type Bucket struct {
	Time  time.Time
	Count int64
	USD   decimal.Decimal
}

// Granularity of a histogram.
const (
	Hour = "hour"
	Day  = "day"
)

func gran(g string) time.Duration {
	if g == Hour {
		return time.Hour
	}
	return 24 * time.Hour
}

// Histogram buckets the transfers matching f by hour or day (UTC); a bucket the window cuts
// counts only the transfers inside the window. Value and USD ranges, which no rollup can answer,
// go through a live entity's pair rows (entityPairRangeHistogramSQL) or aggregate the matching
// rows themselves; any other filter is answered over its exact window (windowHistogram).
func (s *Reader) Histogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	f = sideAsBase(f)
	if f.ranged() {
		return s.rangeHistogram(ctx, f, g)
	}
	return s.windowHistogram(ctx, f, g)
}

// rollupHistogram buckets the transfers matching f (no range; its window whole buckets of g)
// from the rollups: per address (base, flow, chains, tokens), per sender and recipient pair
// (from, to, counterparties), per chain (no address filter).
func (s *Reader) rollupHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	switch {
	case !f.HasBase && !f.HasCP && (f.From.Active() || f.To.Active()):
		if bs, ok, err := s.groupSideHistogram(ctx, f, g); err != nil || ok {
			return bs, err
		}
		return s.pairHistogram(ctx, f, g)
	case f.From.Active() || f.To.Active() || f.HasCP:
		return s.pairHistogram(ctx, f, g)
	case f.HasBase:
		return s.baseHistogram(ctx, f, g)
	}
	return s.chainHistogram(ctx, f, g)
}

// rangeHistogram is the histogram of a filter with a value or USD range: through a live
// entity's pair rows where one is the base or a side (entityPairRangeHistogramSQL), an entity and
// addresses beside it in parts (entityAddrsRangeHistogram), else from the matching rows.
func (s *Reader) rangeHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	grp, err := s.entityPairPlan(ctx, f)
	if err != nil {
		return nil, err
	}
	if grp == "" {
		if f, grp, err = s.entityPairSidePlan(ctx, f); err != nil {
			return nil, err
		}
	}
	b := s.newb(sqlb{rows: true, counting: true})
	if grp != "" {
		return s.buckets(ctx, b.entityPairRangeHistogramSQL(f, grp, g), b.args)
	}
	ga, addrs, err := s.entityAddrsPlan(ctx, f)
	if err != nil {
		return nil, err
	}
	if addrs != nil {
		return s.entityAddrsRangeHistogram(ctx, f, ga, addrs, g)
	}
	q := b.rowsHistogramSQL(f, g)
	if q == "" {
		return nil, nil
	}
	return s.buckets(ctx, q, b.args)
}

// pairHistogram is the histogram of a filter with from, to or counterparty sets, from the
// address pair rollup.
func (s *Reader) pairHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	b := s.newb(sqlb{})
	arms := b.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP)
	common := append(b.rollupConds(f, true), b.side("from_addr", f.From)...)
	common = append(common, b.side("to_addr", f.To)...)
	var parts []string
	for _, br := range arms {
		if !br.empty() {
			parts = append(parts, b.aggArm("transfers.pair_hourly", "date_trunc('"+g+"', bucket, 'UTC') AS b, n, usd", br, common))
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	q := "SELECT b, sum(n), sum(usd) FROM (" + strings.Join(parts, " UNION ALL ") + ") u GROUP BY b HAVING sum(n) > 0 ORDER BY b"
	return s.buckets(ctx, q, b.args)
}

// chainHistogram is the histogram of a filter with no address set, from the per-chain rollup.
func (s *Reader) chainHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	b := s.newb(sqlb{})
	table := "chain_hourly"
	if g == Day {
		table = "chain_daily"
	}
	q := "SELECT date_trunc('" + g + "', bucket, 'UTC') AS b, sum(n), sum(usd) FROM transfers." + table + whereOf(b.rollupConds(f, true)) +
		" GROUP BY 1 HAVING sum(n) > 0 ORDER BY 1"
	return s.buckets(ctx, q, b.args)
}

// buckets runs a histogram query yielding (bucket, count, usd), usd a numeric sum.
func (s *Reader) buckets(ctx context.Context, q string, args []any) ([]Bucket, error) {
	rows, err := s.db.Query(ctx, q, db.Exec(args)...)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	defer rows.Close()
	var out []Bucket
	for rows.Next() {
		var bk Bucket
		if err := rows.Scan(&bk.Time, &bk.Count, num(&bk.USD)); err != nil {
			return nil, fmt.Errorf("scan histogram: %w", err)
		}
		bk.Time = bk.Time.UTC()
		out = append(out, bk)
	}
	return out, rows.Err()
}

// rowsHistogramSQL aggregates the rows matching f into buckets of granularity g ("": none
// can match). b must render rows in counting mode.
func (b *sqlb) rowsHistogramSQL(f TransferFilter, g string) string {
	arms := b.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP)
	common := b.transferConds(f, "block_time")
	var parts []string
	for _, br := range arms {
		if !br.empty() {
			parts = append(parts, b.aggArm("transfers.transfers", "date_trunc('"+g+"', block_time, 'UTC') AS b, 1::bigint AS n, coalesce(usd, 0)::numeric AS usd", br, common))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "SELECT b, sum(n), sum(usd) FROM (" + strings.Join(parts, " UNION ALL ") + ") u GROUP BY b ORDER BY b"
}

// entityAddrsRangeHistogram is the histogram, with a value or USD range, of f's base of entity
// group ga and the addresses addrs outside it (flow all): the entity's through its pair rows,
// plus the addresses' from their rows, less the transfers between the two, which both hold.
// Aggregating the union's rows instead reads every transfer of the entity in the window.
func (s *Reader) entityAddrsRangeHistogram(ctx context.Context, f TransferFilter, ga string, addrs []string, g string) ([]Bucket, error) {
	type part struct {
		sign int64
		q    string
		args []any
	}
	var parts []part
	b := s.newb(sqlb{rows: true, counting: true})
	parts = append(parts, part{1, b.entityPairRangeHistogramSQL(f, ga, g), b.args})
	fa, between := entityAddrsParts(f, addrs)
	b = s.newb(sqlb{rows: true, counting: true})
	if q := b.rowsHistogramSQL(fa, g); q != "" {
		parts = append(parts, part{1, q, b.args})
	}
	for _, fb := range between {
		b = s.newb(sqlb{rows: true, counting: true})
		if q := b.rowsHistogramSQL(fb, g); q != "" {
			parts = append(parts, part{-1, q, b.args})
		}
	}
	sums := map[time.Time]*Bucket{}
	for _, p := range parts {
		bs, err := s.buckets(ctx, p.q, p.args)
		if err != nil {
			return nil, err
		}
		for _, bk := range bs {
			t := sums[bk.Time]
			if t == nil {
				t = &Bucket{Time: bk.Time}
				sums[bk.Time] = t
			}
			t.Count += p.sign * bk.Count
			t.USD = t.USD.Add(bk.USD.Mul(decimal.NewFromInt(p.sign)))
		}
	}
	out := make([]Bucket, 0, len(sums))
	for _, bk := range sums {
		if bk.Count > 0 {
			out = append(out, *bk)
		}
	}
	slices.SortFunc(out, func(x, y Bucket) int { return x.Time.Compare(y.Time) })
	return out, nil
}

// groupSideHistogram answers a histogram whose only address filters are from and to, each one
// live group or its exclusion, from the group rollups: the signed sum of the figures
// groupSides.terms names, per bucket.
func (s *Reader) groupSideHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, bool, error) {
	sides, ok, err := s.groupSides(ctx, f)
	if err != nil || !ok {
		return nil, false, err
	}
	b := s.newb(sqlb{})
	common := b.rollupConds(f, true)
	sfx := "_daily"
	if g == Hour {
		sfx = "_hourly"
	}
	terms := sides.terms()
	arms := make([]string, len(terms))
	for i, t := range terms {
		a1, a2 := sides.figureArgs(b, t.fig)
		fs := sides.figureSQL(t.fig, sfx, common, a1, a2)
		arms[i] = fmt.Sprintf("SELECT bucket, %d * %s, %d * %s FROM %s", t.sign, fs.n, t.sign, fs.usd, fs.from)
	}
	// The terms' signed sum is taken in the statement, numeric, as any other rollup sum.
	bs, err := s.buckets(ctx, "SELECT date_trunc('"+g+"', bucket, 'UTC'), sum(n)::bigint, coalesce(sum(usd), 0)::numeric FROM ("+
		strings.Join(arms, " UNION ALL ")+") u(bucket, n, usd) GROUP BY 1 HAVING sum(n) > 0 ORDER BY 1", b.args)
	return bs, err == nil, err
}

func (s *Reader) baseHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	if f.Base.Empty() {
		return nil, nil
	}
	sums, err := s.setSums(ctx, f, g, false)
	if err != nil {
		return nil, err
	}
	var out []Bucket
	for k, fs := range sums {
		n, usd := fs.pick(f.Flow)
		if n <= 0 {
			continue
		}
		t, _ := time.Parse(time.RFC3339, k[1])
		out = append(out, Bucket{Time: t.UTC(), Count: n, USD: usd})
	}
	sortBuckets(out)
	return out, nil
}

func sortBuckets(b []Bucket) {
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j].Time.Before(b[j-1].Time); j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
}
