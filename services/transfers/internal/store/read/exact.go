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
// of the window's hours; one live entity and listed addresses outside it (a caller's additions,
// entityAddrsPlan) as the group's pair rows and the addresses' rows (entityAddrsSplit); any other
// filter through the rows of the window, each tested against the sets. "" when nothing can match.
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
	if g != "" {
		return "SELECT t.* FROM " + b.entityPairRows(f, g, windowCols, time.Time{}, time.Time{}), nil
	}
	g, addrs, err := s.entityAddrsPlan(ctx, f)
	if err != nil {
		return "", err
	}
	if g == "" {
		return b.windowRowArms(f), nil
	}
	fe, fa := entityAddrsSplit(f, addrs)
	q := "SELECT t.* FROM " + b.entityPairRows(fe, g, windowCols, time.Time{}, time.Time{})
	// The addresses' rows are few: the entity is probed per row rather than hashed whole.
	b.counting = false
	if arms := b.windowRowArms(fa); arms != "" {
		q += " UNION ALL " + arms
	}
	return q, nil
}

// windowCols are the columns windowRows yields, from transfers.
const windowCols = "chain, block_time, from_addr, to_addr, coalesce(usd, 0)::numeric AS usd, unit_value::numeric AS value"

// windowRowArms renders the rows of f as windowRows yields them, from transfers and the sets'
// membership tests ("" when nothing can match).
func (b *sqlb) windowRowArms(f TransferFilter) string {
	var parts []string
	for _, br := range b.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP) {
		if !br.empty() {
			parts = append(parts, b.aggArm("transfers.transfers", windowCols, br, b.transferConds(f, "block_time")))
		}
	}
	return strings.Join(parts, " UNION ALL ")
}

// entityAddrsSplit splits f, whose base is one live entity and the listed addresses addrs outside
// it (entityAddrsPlan), into two filters whose transfers are f's, each once: the entity's (fe,
// through its pair rows) and the addresses' (fa) that do not touch the entity. With flow in (out)
// the entity's leave out transfers from (to) the addresses, which stay inside the base; flow
// self keeps the entity's own, and the addresses' with both sides in the base, as
// entityAddrsPage reads them.
func entityAddrsSplit(f TransferFilter, addrs []string) (fe, fa TransferFilter) {
	fe, fa = f, f
	fa.Base = Addrs(addrs)
	listed := AddrFilter{NotIn: fa.Base}
	ent := AddrFilter{NotIn: AddrSet{Entities: f.Base.Entities, Size: f.Base.Size}}
	switch f.Flow {
	case "in":
		fe.From, fa.From = listed, ent
	case "out":
		fe.To, fa.To = listed, ent
	case "self":
		union := AddrFilter{In: f.Base, Only: true}
		fa.Flow, fa.From, fa.To = "all", union, union
	default: // all: the addresses' transfers with neither side in the entity
		fa.From, fa.To = ent, ent
	}
	return fe, fa
}

// rowsHistogram is the histogram of f's transfers (f's window a part of a bucket) from the rows.
func (s *Reader) rowsHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	b := s.newb(sqlb{})
	q, err := s.windowRows(ctx, b, f)
	if err != nil || q == "" {
		return nil, err
	}
	return s.buckets(ctx, "SELECT date_trunc('"+g+"', block_time, 'UTC'), count(*), sum(usd) FROM ("+q+") r GROUP BY 1", b.args)
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
			t.USD = t.USD.Add(bk.USD)
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
