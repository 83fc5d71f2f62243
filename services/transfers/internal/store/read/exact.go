package read

import (
	"context"
	"strings"
	"time"
)

// Exact windows: the rollups hold whole hours and days, so a window that cuts a bucket is
// answered from the rollups for the buckets wholly inside it (cutWindow) and from the rows for
// the parts of the buckets it cuts (at most one at each end), read as /transfers reads them.

// windowRows renders f's transfers, each once, as a query yielding (chain, block_time, from_addr,
// to_addr, usd, value): usd is 0 where no price was known, value the token units, as the rollups
// sum them. It reads rows, so f's window should be a part of a bucket. A base that is one live
// entity group (or a side that is one, entityPairSidePlan) is read through the group's pair rows
// of the window's hours; any other filter through the rows of the window, each tested against
// the sets. "" when nothing can match.
func (s *Reader) windowRows(ctx context.Context, b *sqlb, f TransferFilter) (string, error) {
	rows, counting := b.rows, b.counting
	b.rows, b.counting = true, true
	defer func() { b.rows, b.counting = rows, counting }()
	g, err := s.entityPairPlan(ctx, f)
	if err != nil {
		return "", err
	}
	if g == "" {
		if f, g, err = s.entityPairSidePlan(ctx, f); err != nil {
			return "", err
		}
	}
	const cols = "chain, block_time, from_addr, to_addr, coalesce(usd, 0)::numeric AS usd, unit_value::numeric AS value"
	if g != "" {
		return "SELECT t.* FROM " + b.entityPairRows(f, g, cols, time.Time{}, time.Time{}), nil
	}
	var parts []string
	for _, br := range b.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP) {
		if !br.empty() {
			parts = append(parts, b.aggArm("transfers.transfers", cols, br, b.transferConds(f, "block_time")))
		}
	}
	return strings.Join(parts, " UNION ALL "), nil
}

// rowsHistogram is the histogram of f's transfers (f's window a part of a bucket) from the rows.
func (s *Reader) rowsHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	b := s.newb(sqlb{})
	q, err := s.windowRows(ctx, b, f)
	if err != nil || q == "" {
		return nil, err
	}
	return s.buckets(ctx, "SELECT date_trunc('"+g+"', block_time, 'UTC'), count(*), sum(usd)::float8 FROM ("+q+") r GROUP BY 1", b.args)
}

// windowHistogram is the histogram of f (no value or USD range) over its exact window: the whole
// buckets inside it from the rollups (rollupHistogram), and each bucket it cuts from its whole
// hours (a day's) and the rows of the hours it cuts.
func (s *Reader) windowHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	c := cutWindow(f.TimeFrom, f.TimeTo, gran(g))
	var all []Bucket
	if c.hasWhole {
		fw := f
		fw.TimeFrom, fw.TimeTo = c.wFrom, c.wTo
		bs, err := s.rollupHistogram(ctx, fw, g)
		if err != nil || c.aligned() {
			return bs, err
		}
		all = bs
	}
	parts := c.parts
	if !c.hasWhole {
		// At most two buckets, each cut: read as one (a day's whole hours from the rollups).
		parts = [][2]time.Time{{f.TimeFrom, f.TimeTo}}
	}
	for _, p := range parts {
		fp := f
		fp.TimeFrom, fp.TimeTo = p[0], p[1]
		var bs []Bucket
		var err error
		if g == Day {
			bs, err = s.windowHistogram(ctx, fp, Hour)
		} else {
			bs, err = s.rowsHistogram(ctx, fp, g)
		}
		if err != nil {
			return nil, err
		}
		for _, bk := range bs {
			bk.Time = bk.Time.UTC().Truncate(gran(g))
			all = append(all, bk)
		}
	}
	return mergeBuckets(all), nil
}

// mergeBuckets sums buckets of the same time and keeps those holding transfers, in time order.
func mergeBuckets(bs []Bucket) []Bucket {
	sums := map[time.Time]*Bucket{}
	var out []Bucket
	for _, bk := range bs {
		if t := sums[bk.Time]; t != nil {
			t.Count += bk.Count
			t.USD += bk.USD
			continue
		}
		b := bk
		sums[bk.Time] = &b
	}
	for _, bk := range sums {
		if bk.Count > 0 {
			out = append(out, *bk)
		}
	}
	sortBuckets(out)
	return out
}
