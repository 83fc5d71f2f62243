package read

import (
	"context"
	"strings"
)

// The plans by which rollupCount answers a /transfers count from rollups: each reads a few
// figures per bucket (a countPart each) and combines them into the bucket's count.

// countPlan is how a filter's count is read from the rollups over its window.
type countPlan struct {
	parts []countPart
	// combine turns one bucket's figures (one per part, in order) into its count.
	combine func([]int64) int64
	// pairGroup is the live group that is the whole base, whose pair rows count the hours the
	// window cuts; "": those hours are counted from the rows.
	pairGroup string
	// addrHours: some part's hours are listed addresses' pair rows, dear to read early (see
	// cappedWindowCounts).
	addrHours bool
}

// counted is a count answered without reading a plan over the window (an all-time count), or
// ok false when the rollups cannot answer it; n and ok as rollupCount returns them.
type counted struct {
	n  int
	ok bool
}

// noCount: the rollups cannot answer, the rows must.
var noCount = counted{}

// countSQL renders the parts of one filter's count: every part carries the filter's chain and
// token conditions (keys).
type countSQL struct {
	b    *sqlb
	keys []string
}

func (c countSQL) where(conds ...string) string {
	return strings.Join(append(conds, c.keys...), " AND ")
}

// groupFigure is column col (a flow's figure) of group argument ga's rollups.
func (c countSQL) groupFigure(ga, col string) countPart {
	return countPart{
		day:  "SELECT bucket b, " + col + " v FROM transfers.grp_daily WHERE " + c.where("grp = "+ga),
		hour: "SELECT bucket b, " + col + " v FROM transfers.grp_hourly WHERE " + c.where("grp = "+ga),
	}
}

// groupFlows are live group g's in, out and self figures (each including self).
func (c countSQL) groupFlows(g string) []countPart {
	ga := c.b.arg(g)
	return []countPart{c.groupFigure(ga, "in_n"), c.groupFigure(ga, "out_n"), c.groupFigure(ga, "self_n")}
}

// pairs is the address pair rollup's count under conds, by hour for both grains (its buckets
// are hours: see countPart).
func (c countSQL) pairs(conds ...string) countPart {
	q := "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + c.where(conds...)
	return countPart{day: q, hour: q}
}

// addrFlows are listed addresses' (argument a) in, out and self figures: by day from their
// daily rollup, by hour from their pair rows. in and out are the conditions on a pair row
// that it is to (from) one of them.
func (c countSQL) addrFlows(a string) (parts []countPart, in, out string) {
	in, out = "to_addr = ANY("+a+"::text[])", "from_addr = ANY("+a+"::text[])"
	daily := func(col string) string {
		return "SELECT bucket b, " + col + " v FROM transfers.addr_daily WHERE " + c.where("address = ANY("+a+"::text[])")
	}
	return []countPart{
		{day: daily("in_n"), hour: c.pairs(in).hour},
		{day: daily("out_n"), hour: c.pairs(out).hour},
		c.pairs(out, in),
	}, in, out
}

// flowCombine combines in, out and self figures (the first three parts) by f's flow.
func flowCombine(flow string) func([]int64) int64 {
	return func(v []int64) int64 { return pickN(flow, v[0], v[1], v[2]) }
}

func allTime(f TransferFilter) bool { return f.TimeFrom.IsZero() && f.TimeTo.IsZero() }

// rollupCount answers the capped count of a /transfers filter from rollups, when it can: ok is
// false when the filter needs the rows (value or USD ranges, address sets that are neither
// listed nor one live group, ...) or the window's partial hours leave the count undecided.
func (s *Reader) rollupCount(ctx context.Context, f TransferFilter) (n int, ok bool, err error) {
	if f.ranged() || f.HasCP {
		return 0, false, nil
	}
	b := s.newb(sqlb{})
	c := countSQL{b: b, keys: b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)}
	var plan *countPlan
	var done counted
	if f.HasBase {
		plan, done, err = s.baseCountPlan(ctx, f, c)
	} else {
		plan, done, err = s.sideCountPlan(ctx, f, c)
	}
	if err != nil || plan == nil {
		return done.n, done.ok && err == nil, err
	}
	return s.readCountPlan(ctx, f, b, plan)
}

// baseCountPlan chooses the plan of a count with a base (and no from or to filter).
func (s *Reader) baseCountPlan(ctx context.Context, f TransferFilter, c countSQL) (*countPlan, counted, error) {
	if f.From.Active() || f.To.Active() {
		return nil, noCount, nil
	}
	g, err := s.pureGroup(ctx, f.Base)
	switch {
	case err != nil:
		return nil, noCount, err
	case g != "" && allTime(f):
		n, err := s.groupCountAllTime(ctx, f, g)
		return nil, counted{n, true}, err
	case g != "":
		return groupCountPlan(f, c, g), noCount, nil
	case len(f.Base.Entities) > 1:
		return s.unionCountPlan(ctx, f, c)
	case len(f.Base.Addrs) > 0 && len(f.Base.Entities) == 1 && len(f.Base.Types)+len(f.Base.Deposits) == 0:
		return s.entityAddrsCountPlan(ctx, f, c)
	case !f.Base.modelled():
		return s.addrsCountPlan(ctx, f, c)
	}
	return nil, noCount, nil
}

// groupCountPlan counts a base that is one live group g: the flow's figure per bucket in one
// read of its rows (reading in, out and self apart scanned them three times: a keyset page
// turn's count read three rows of each of an exchange's days instead of one).
func groupCountPlan(f TransferFilter, c countSQL, g string) *countPlan {
	return &countPlan{
		parts:     []countPart{c.groupFigure(c.b.arg(g), flowExpr(f.Flow))},
		combine:   func(v []int64) int64 { return v[0] },
		pairGroup: g,
	}
}

// unionCountPlan counts a base of several entities whose live groups are disjoint: the union's
// in (out) figures are the sum of the groups' in (out) figures, and what stays inside it is
// each group's self plus the transfers from one of the groups to another (pair rollups).
func (s *Reader) unionCountPlan(ctx context.Context, f TransferFilter, c countSQL) (*countPlan, counted, error) {
	gs, err := s.disjointEntityGroups(ctx, f.Base)
	if err != nil || gs == nil {
		return nil, noCount, err
	}
	if allTime(f) {
		n, err := s.unionCountAllTime(ctx, f, gs)
		return nil, counted{n, true}, err
	}
	var parts []countPart
	for _, g := range gs {
		parts = append(parts, c.groupFlows(g)...)
	}
	all := c.b.arg(gs)
	between := c.where("from_grp = ANY("+all+"::text[])", "to_grp = ANY("+all+"::text[])")
	parts = append(parts, countPart{
		day:  "SELECT bucket b, n v FROM transfers.grp_pair_daily WHERE " + between,
		hour: "SELECT bucket b, n v FROM transfers.grp_pair_hourly WHERE " + between,
	})
	combine := func(v []int64) int64 {
		var in, out, self int64
		for i := range gs {
			in, out, self = in+v[3*i], out+v[3*i+1], self+v[3*i+2]
		}
		return pickN(f.Flow, in, out, self+v[3*len(gs)])
	}
	return &countPlan{parts: parts, combine: combine}, noCount, nil
}

// entityAddrsCountPlan counts a base of one entity and listed addresses (a caller's additions
// to it, or addresses named beside it): the entity's group g and the addresses A outside it are
// disjoint, so the union's in (out) figures are theirs summed, and what stays inside it is g's
// self, A's own transfers among themselves, and those between A and g (pair_hourly: A's pair
// rows whose other side is in g), rather than the matching rows.
func (s *Reader) entityAddrsCountPlan(ctx context.Context, f TransferFilter, c countSQL) (*countPlan, counted, error) {
	g, err := s.liveGroup(ctx, f.Base)
	if err != nil || g == "" {
		return nil, noCount, err
	}
	outside, err := s.outsideGroup(ctx, f.Base.Addrs, g)
	if err != nil {
		return nil, noCount, err
	}
	if allTime(f) && (len(outside) == 0 || f.Flow == "all" || f.Flow == "self") {
		// All time: the entity's own count, newest days first. With flow all or self the union
		// holds at least the entity's transfers, so a busy entity's count is capped without
		// reading the rest.
		n, err := s.groupCountAllTime(ctx, f, g)
		if err != nil || len(outside) == 0 || n >= MaxCount {
			return nil, counted{n, true}, err
		}
	}
	plan := &countPlan{parts: c.groupFlows(g), combine: flowCombine(f.Flow)}
	if len(outside) == 0 {
		return plan, noCount, nil
	}
	plan.addrHours = true
	addrs, in, out := c.addrFlows(c.b.arg(outside))
	plan.parts = append(plan.parts, addrs...)
	// The other side in g: a probe per pair row of the listed addresses. As a set the planner
	// hashed all of an exchange's addresses for every count, costing far more than the page
	// beside it.
	plan.parts = append(plan.parts, c.pairs(out, c.b.inGroup("to_addr", g)), c.pairs(in, c.b.inGroup("from_addr", g)))
	plan.combine = func(v []int64) int64 {
		return pickN(f.Flow, v[0]+v[3], v[1]+v[4], v[2]+v[5]+v[6]+v[7])
	}
	return plan, noCount, nil
}

// addrsCountPlan counts a base of listed addresses only, from their own rollups.
func (s *Reader) addrsCountPlan(ctx context.Context, f TransferFilter, c countSQL) (*countPlan, counted, error) {
	if len(f.Base.Addrs) == 0 {
		return nil, counted{0, true}, nil
	}
	if len(f.Base.Addrs) == 1 && allTime(f) {
		n, err := s.addrCountAllTime(ctx, f, f.Base.Addrs[0])
		return nil, counted{n, true}, err
	}
	parts, _, _ := c.addrFlows(c.b.arg(f.Base.Addrs))
	return &countPlan{parts: parts, combine: flowCombine(f.Flow), addrHours: true}, noCount, nil
}

// sideCountPlan counts a filter without a base whose from and to are each absent, one live
// group or its exclusion, from the terms sideTerms gives. Only the figures the terms use are
// read: reading every transfer per day over all time for from=<exchange>&to=type:cex, which is
// the pair figure alone, read every day of both groups for one term.
func (s *Reader) sideCountPlan(ctx context.Context, f TransferFilter, c countSQL) (*countPlan, counted, error) {
	sides, ok, err := s.groupSides(ctx, f)
	if err != nil || !ok {
		return nil, noCount, err
	}
	terms := sides.terms()
	plan := &countPlan{}
	for _, t := range terms {
		a1, a2 := sides.figureArgs(c.b, t.fig)
		day := sides.figureSQL(t.fig, "_daily", c.keys, a1, a2)
		hour := sides.figureSQL(t.fig, "_hourly", c.keys, a1, a2)
		plan.parts = append(plan.parts, countPart{
			day:  "SELECT bucket b, " + day.n + " v FROM " + day.from,
			hour: "SELECT bucket b, " + hour.n + " v FROM " + hour.from,
		})
	}
	plan.combine = func(v []int64) int64 {
		var n int64
		for i, t := range terms {
			n += t.sign * v[i]
		}
		return n
	}
	return plan, noCount, nil
}

// readCountPlan reads plan over f's window, capped. When the hours the window cuts hold
// transfers (the whole buckets inside it and those touching it differ), those (at most two
// partial hours) are counted exactly: a live group's through its pair rows of the hour, else
// from the rows through the time index (from the rows, every transfer of the hour is tested
// against the group's addresses).
func (s *Reader) readCountPlan(ctx context.Context, f TransferFilter, b *sqlb, plan *countPlan) (int, bool, error) {
	inner, outer, err := s.cappedWindowCounts(ctx, b, newWindow(f.TimeFrom, f.TimeTo), plan.parts, plan.combine, !plan.addrHours)
	if err != nil {
		return 0, false, err
	}
	switch {
	case inner >= MaxCount:
		return MaxCount, true, nil
	case inner == outer:
		return int(inner), true, nil
	}
	segs, ok := newWindow(f.TimeFrom, f.TimeTo).partialHours()
	if !ok {
		return 0, false, nil
	}
	total := inner
	for _, sg := range segs {
		g := f
		g.TimeFrom, g.TimeTo = sg[0], sg[1]
		var n int
		var err error
		if plan.pairGroup != "" {
			n, err = s.entityPairCount(ctx, g, plan.pairGroup)
		} else {
			n, err = s.rowCount(ctx, g)
		}
		if err != nil {
			return 0, false, err
		}
		total += int64(n)
	}
	return int(min(total, MaxCount)), true, nil
}
