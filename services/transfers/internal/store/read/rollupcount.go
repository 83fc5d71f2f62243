package read

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
)

// keyConds are the chain and token conditions on a rollup table.
func (b *sqlb) keyConds(chains, tokenAddrs, tokenIDs []string) []string {
	var c []string
	if len(chains) > 0 {
		c = append(c, b.anyOf("chain", chains))
	}
	if tc := b.tokenCond([][2]string{{"token", "token_id"}}, tokenAddrs, tokenIDs); tc != "" {
		c = append(c, tc)
	}
	return c
}

// countPart is one quantity a rollup count combines: queries yielding (b, v) — the bucket and
// a count — from daily and from hourly rollups, already filtered by everything but time. A day
// query may yield hours (pair_hourly's buckets, not truncated to their day, so the window's
// condition on them prunes partitions and uses the index): an hour lies in the window's whole
// days exactly when its day does, and every combination is a signed sum, so summing by hour
// instead of by day changes no total. With the day computed, a hot wallet's count planned and
// probed every month's partition.
type countPart struct{ day, hour string }

// windowCounts sums parts over the window per bucket, combines each bucket's values, and
// returns the total over whole buckets inside the window (inner) and over every bucket that
// touches it (outer): the exact count lies between.
func (s *Reader) windowCounts(ctx context.Context, b *sqlb, w window, parts []countPart, combine func([]int64) int64) (inner, outer int64, err error) {
	var arms []string
	for i, p := range parts {
		if c, ok := w.dayConds(b, "b"); ok {
			where := ""
			if len(c) > 0 {
				where = " WHERE " + strings.Join(c, " AND ")
			}
			arms = append(arms, fmt.Sprintf("SELECT true AS d, b, %d AS i, v FROM (%s) x%s", i, p.day, where))
		}
		if c, ok := w.hourCond(b, "b"); ok {
			arms = append(arms, fmt.Sprintf("SELECT false AS d, b, %d AS i, v FROM (%s) x WHERE %s", i, p.hour, c))
		}
	}
	rows, err := s.db.Query(ctx, "SELECT d, b, i, sum(v)::bigint FROM ("+strings.Join(arms, " UNION ALL ")+") u GROUP BY 1, 2, 3", db.Exec(b.args)...)
	if err != nil {
		return 0, 0, fmt.Errorf("rollup count: %w", err)
	}
	defer rows.Close()
	type key struct {
		day bool
		b   time.Time
	}
	vals := map[key][]int64{}
	for rows.Next() {
		var k key
		var i int
		var v int64
		if err := rows.Scan(&k.day, &k.b, &i, &v); err != nil {
			return 0, 0, fmt.Errorf("scan rollup count: %w", err)
		}
		if vals[k] == nil {
			vals[k] = make([]int64, len(parts))
		}
		vals[k][i] = v
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("rollup count: %w", err)
	}
	for k, v := range vals {
		n := combine(v)
		outer += n
		if k.day || w.whole(k.b) {
			inner += n
		}
	}
	return inner, outer, nil
}

// cappedWindowCounts is windowCounts read a span of whole days at a time from the window's
// upper end (or, with none, from the newest day stored, that span open above), newest first:
// Options.CountChunkDays days, four times more each next time, and the rest after the third, or at once
// when the days read so far hold too few for the next span to reach MaxCount; it stops once the
// whole days hold MaxCount. The hours of the window's last day are read after the whole days,
// and only when those fall short. A busy group's count over a long window — a keyset page turn,
// base=<exchange>&timeLte=<the last row's time>, or all time with a caller's additions and
// flow in — then reads days, not the window's whole history (read whole, the keyset turn's
// count read every day before timeLte, most of the turn's cost). A hot wallet's hours cost more
// than its days (its pair rows of the month, read for their hour), so a count the days cap
// skips them. Spans are cut at midnight UTC, so no bucket is in two of them and the window's
// partial hours stay at its ends, where the caller counts them. A window shorter than the
// first span is read at once. Where the parts' hours are cheap (cheapHours: group and chain
// rollups, no listed address's pair rows), the last day's hours are read with the first span: a window that falls short of
// the cap then costs one statement less (a keyset turn at an entity's first days).
func (s *Reader) cappedWindowCounts(ctx context.Context, b *sqlb, w window, parts []countPart, combine func([]int64) int64, cheapHours bool) (inner, outer int64, err error) {
	const day = 24 * time.Hour
	const µs = time.Microsecond
	span := time.Duration(s.opt.CountChunkDays) * day
	var top time.Time // the exclusive end of the whole days read first
	if !w.to.IsZero() {
		top = w.to.UTC().Add(µs).Truncate(day)
	} else {
		var newest *time.Time
		if err := s.db.QueryRow(ctx, `SELECT max(bucket) FROM transfers.chain_daily`).Scan(&newest); err != nil {
			return 0, 0, fmt.Errorf("newest day: %w", err)
		}
		if newest == nil {
			return s.windowCounts(ctx, b, w, parts, combine)
		}
		top = newest.UTC().Truncate(day).Add(day)
	}
	if !w.from.IsZero() && !top.Add(-span).After(w.from) {
		return s.windowCounts(ctx, b, w, parts, combine)
	}
	// Each query appends its bounds to the arguments the parts were built with.
	read := func(from, to time.Time) error {
		sb := s.newb(sqlb{rows: b.rows, counting: b.counting, args: slices.Clone(b.args)})
		in, out, err := s.windowCounts(ctx, sb, newWindow(from, to), parts, combine)
		inner, outer = inner+in, outer+out
		return err
	}
	lastDay := top
	rest := false // the next span is the rest of the window
	for i := 0; ; i++ {
		lo := top.Add(-span)
		last := rest || i == 3 || (!w.from.IsZero() && !lo.After(w.from))
		from, to := lo, top.Add(-µs)
		if last {
			from = w.from
		}
		if i == 0 && w.to.IsZero() {
			to = time.Time{} // open above: days written since the newest was read
		}
		if i == 0 && cheapHours && !w.to.IsZero() {
			to, lastDay = w.to, w.to // the last day's hours too
		}
		if err := read(from, to); err != nil || inner >= MaxCount {
			return inner, outer, err
		}
		if last {
			break
		}
		// Days read so far that project to well under the cap after the next span: read the rest
		// at once rather than span by span.
		rest = inner*5 < MaxCount/4
		if i == 0 && !rest && w.from.IsZero() {
			// A busy set's window that starts with the data (a keyset turn at its first days) fell
			// short: the spans before the first stored day hold nothing, and were read one by one
			// (three statements). Every rollup is applied with the chains' days, so none holds a
			// day before chain_daily's first.
			var oldest *time.Time
			if err := s.db.QueryRow(ctx, `SELECT min(bucket) FROM transfers.chain_daily`).Scan(&oldest); err != nil {
				return 0, 0, fmt.Errorf("oldest day: %w", err)
			}
			if oldest == nil || !oldest.Before(lo) {
				break
			}
		}
		top, span = lo, span*4
	}
	if !w.to.IsZero() && lastDay.Before(w.to.UTC()) { // the last day's hours
		if err := read(lastDay, w.to); err != nil {
			return 0, 0, err
		}
	}
	return inner, outer, nil
}

// flowExpr is pickN over a group rollup's in_n, out_n and self_n columns, in SQL.
func flowExpr(flow string) string {
	switch flow {
	case "in":
		return "in_n - self_n"
	case "out":
		return "out_n - self_n"
	case "self":
		return "self_n"
	case flowFrom:
		return "out_n"
	case flowTo:
		return "in_n"
	}
	return "in_n + out_n - self_n"
}

// pickN applies a flow to in, out and self counts.
func pickN(flow string, in, out, self int64) int64 {
	n, _ := flowSums{inN: in, outN: out, selfN: self}.pick(flow)
	return n
}

// rollupCount answers the capped count of a /transfers filter from rollups, when it can: ok is
// false when the filter needs the rows (value or USD ranges, address sets that are neither
// listed nor one live group, ...) or the window's partial hours leave the count undecided.
func (s *Reader) rollupCount(ctx context.Context, f TransferFilter) (n int, ok bool, err error) {
	if f.ValueGte != nil || f.ValueLte != nil || f.USDGte != nil || f.USDLte != nil || f.HasCP {
		return 0, false, nil
	}
	b := s.newb(sqlb{})
	keys := b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)
	where := func(c ...string) string { return strings.Join(append(c, keys...), " AND ") }
	// groupFlows are live group g's in, out and self figures (each including self).
	groupFlows := func(g string) []countPart {
		ga := b.arg(g)
		var ps []countPart
		for _, col := range []string{"in_n", "out_n", "self_n"} {
			ps = append(ps, countPart{
				day:  "SELECT bucket b, " + col + " v FROM transfers.grp_daily WHERE " + where("grp = "+ga),
				hour: "SELECT bucket b, " + col + " v FROM transfers.grp_hourly WHERE " + where("grp = "+ga),
			})
		}
		return ps
	}
	var parts []countPart
	var combine func([]int64) int64
	var edgeGrp string // a base of one live group, whose partial hours its pair rows count
	addrHours := false // some part's hours are listed addresses' pair rows (dear; see cappedWindowCounts)
	switch {
	case f.HasBase:
		if f.From.Active() || f.To.Active() {
			return 0, false, nil
		}
		g, err := s.pureGroup(ctx, f.Base)
		if err != nil {
			return 0, false, err
		}
		switch {
		case g != "" && f.TimeFrom.IsZero() && f.TimeTo.IsZero():
			n, err := s.groupCountAllTime(ctx, f, g)
			return n, err == nil, err
		case g != "":
			// One group: the flow's figure per bucket in one read of its rows (reading in, out
			// and self apart scanned them three times: a keyset page turn's count read 780 rows
			// of an exchange's 16 days instead of 260).
			ga := b.arg(g)
			v := flowExpr(f.Flow)
			parts = []countPart{{
				day:  "SELECT bucket b, " + v + " v FROM transfers.grp_daily WHERE " + where("grp = "+ga),
				hour: "SELECT bucket b, " + v + " v FROM transfers.grp_hourly WHERE " + where("grp = "+ga),
			}}
			combine = func(v []int64) int64 { return v[0] }
			edgeGrp = g
		case len(f.Base.Entities) > 1:
			gs, err := s.disjointEntityGroups(ctx, f.Base)
			if err != nil || gs == nil {
				return 0, false, err
			}
			if f.TimeFrom.IsZero() && f.TimeTo.IsZero() {
				n, err := s.unionCountAllTime(ctx, f, gs)
				return n, err == nil, err
			}
			// The union of disjoint groups: its in (out) figures are the sum of the groups' in
			// (out) figures, and what stays inside it is each group's self plus the transfers
			// from one of the groups to another (pair rollups).
			for _, g := range gs {
				parts = append(parts, groupFlows(g)...)
			}
			all := b.arg(gs)
			parts = append(parts, countPart{
				day:  "SELECT bucket b, n v FROM transfers.grp_pair_daily WHERE " + where("from_grp = ANY("+all+"::text[])", "to_grp = ANY("+all+"::text[])"),
				hour: "SELECT bucket b, n v FROM transfers.grp_pair_hourly WHERE " + where("from_grp = ANY("+all+"::text[])", "to_grp = ANY("+all+"::text[])"),
			})
			combine = func(v []int64) int64 {
				var in, out, self int64
				for i := range gs {
					in, out, self = in+v[3*i], out+v[3*i+1], self+v[3*i+2]
				}
				return pickN(f.Flow, in, out, self+v[3*len(gs)])
			}
		case len(f.Base.Addrs) > 0 && len(f.Base.Entities) == 1 && len(f.Base.Types)+len(f.Base.Deposits) == 0:
			// One entity and listed addresses (a caller's additions to it, or addresses named
			// beside it): the entity's group g and the addresses A outside it are disjoint, so
			// the union's in (out) figures are theirs summed, and what stays inside it is g's
			// self, A's own transfers among themselves, and those between A and g (pair_hourly:
			// A's pair rows whose other side is in g), rather than the matching rows.
			g, err := s.liveGroup(ctx, f.Base)
			if err != nil || g == "" {
				return 0, false, err
			}
			outside, err := s.outsideGroup(ctx, f.Base.Addrs, g)
			if err != nil {
				return 0, false, err
			}
			if f.TimeFrom.IsZero() && f.TimeTo.IsZero() && (len(outside) == 0 || f.Flow == "all" || f.Flow == "self") {
				// All time: the entity's own count, newest days first. With flow all or self
				// the union holds at least the entity's transfers, so a busy entity's count is
				// capped without reading the rest.
				n, err := s.groupCountAllTime(ctx, f, g)
				if err != nil || len(outside) == 0 || n >= MaxCount {
					return n, err == nil, err
				}
			}
			parts = groupFlows(g)
			if len(outside) > 0 {
				addrHours = true
				a := b.arg(outside)
				in, out := "to_addr = ANY("+a+"::text[])", "from_addr = ANY("+a+"::text[])"
				pairs := func(c ...string) countPart {
					return countPart{
						day:  "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(c...),
						hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(c...),
					}
				}
				parts = append(parts,
					countPart{day: "SELECT bucket b, in_n v FROM transfers.addr_daily WHERE " + where("address = ANY("+a+"::text[])"),
						hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(in)},
					countPart{day: "SELECT bucket b, out_n v FROM transfers.addr_daily WHERE " + where("address = ANY("+a+"::text[])"),
						hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(out)},
					pairs(out, in),
					// The other side in g: a probe per pair row of the listed addresses. As a set
					// the planner hashed all of an exchange's addresses for every count, costing far
					// more than the page beside it.
					pairs(out, b.inGroup("to_addr", g)),
					pairs(in, b.inGroup("from_addr", g)))
			}
			combine = func(v []int64) int64 {
				in, out, self := v[0], v[1], v[2]
				if len(v) > 3 {
					in, out, self = in+v[3], out+v[4], self+v[5]+v[6]+v[7]
				}
				return pickN(f.Flow, in, out, self)
			}
		case !f.Base.modelled():
			if len(f.Base.Addrs) == 0 {
				return 0, true, nil
			}
			if len(f.Base.Addrs) == 1 && f.TimeFrom.IsZero() && f.TimeTo.IsZero() {
				n, err := s.addrCountAllTime(ctx, f, f.Base.Addrs[0])
				return n, err == nil, err
			}
			addrHours = true
			a := b.arg(f.Base.Addrs)
			in := "to_addr = ANY(" + a + "::text[])"
			out := "from_addr = ANY(" + a + "::text[])"
			parts = []countPart{
				{day: "SELECT bucket b, in_n v FROM transfers.addr_daily WHERE " + where("address = ANY("+a+"::text[])"),
					hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(in)},
				{day: "SELECT bucket b, out_n v FROM transfers.addr_daily WHERE " + where("address = ANY("+a+"::text[])"),
					hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(out)},
				{day: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(out, in),
					hour: "SELECT bucket b, n v FROM transfers.pair_hourly WHERE " + where(out, in)},
			}
		default:
			return 0, false, nil
		}
		if combine == nil {
			combine = func(v []int64) int64 { return pickN(f.Flow, v[0], v[1], v[2]) }
		}
	default:
		g1, neg1, ok1, err := s.simpleSide(ctx, f.From)
		if err != nil || !ok1 {
			return 0, false, err
		}
		g2, neg2, ok2, err := s.simpleSide(ctx, f.To)
		if err != nil || !ok2 {
			return 0, false, err
		}
		if g1 != "" && g2 != "" && g1 != g2 && !records.PairKept(g1, g2) {
			return 0, false, nil // no pair rollup of these groups
		}
		// The count is a signed sum of at most four figures: every transfer (total), g1's out,
		// g2's in, and those from g1 to g2 (p12). Only the figures it uses are read: reading
		// every transfer per day over all time for from=<exchange>&to=type:cex, which is p12
		// alone, read every day of both groups for one term.
		type term struct {
			sign int64
			part countPart
		}
		var terms []term
		add := func(sign int64, p countPart) { terms = append(terms, term{sign, p}) }
		total := countPart{
			day:  "SELECT bucket b, n v FROM transfers.chain_daily" + whereOf(keys),
			hour: "SELECT bucket b, n v FROM transfers.chain_hourly" + whereOf(keys),
		}
		grpPart := func(g, col string) countPart {
			a := b.arg(g)
			return countPart{
				day:  "SELECT bucket b, " + col + " v FROM transfers.grp_daily WHERE " + where("grp = "+a),
				hour: "SELECT bucket b, " + col + " v FROM transfers.grp_hourly WHERE " + where("grp = "+a),
			}
		}
		pairPart := func() countPart {
			if g1 == g2 { // within one group: its self figures
				return grpPart(g1, "self_n")
			}
			a1, a2 := b.arg(g1), b.arg(g2)
			return countPart{
				day:  "SELECT bucket b, n v FROM transfers.grp_pair_daily WHERE " + where("from_grp = "+a1, "to_grp = "+a2),
				hour: "SELECT bucket b, n v FROM transfers.grp_pair_hourly WHERE " + where("from_grp = "+a1, "to_grp = "+a2),
			}
		}
		// One side only: its group's figure, or every transfer less it (an exclusion).
		oneSide := func(p countPart, neg bool) {
			if neg {
				add(1, total)
				add(-1, p)
			} else {
				add(1, p)
			}
		}
		switch {
		case g1 == "" && g2 == "":
			add(1, total)
		case g2 == "": // from only
			oneSide(grpPart(g1, "out_n"), neg1)
		case g1 == "": // to only
			oneSide(grpPart(g2, "in_n"), neg2)
		case !neg1 && !neg2:
			add(1, pairPart())
		case !neg1:
			add(1, grpPart(g1, "out_n"))
			add(-1, pairPart())
		case !neg2:
			add(1, grpPart(g2, "in_n"))
			add(-1, pairPart())
		default:
			add(1, total)
			add(-1, grpPart(g1, "out_n"))
			add(-1, grpPart(g2, "in_n"))
			add(1, pairPart())
		}
		for _, t := range terms {
			parts = append(parts, t.part)
		}
		combine = func(v []int64) int64 {
			var n int64
			for i, t := range terms {
				n += t.sign * v[i]
			}
			return n
		}
	}
	inner, outer, err := s.cappedWindowCounts(ctx, b, newWindow(f.TimeFrom, f.TimeTo), parts, combine, !addrHours)
	if err != nil {
		return 0, false, err
	}
	switch {
	case inner >= MaxCount:
		return MaxCount, true, nil
	case inner == outer:
		return int(inner), true, nil
	}
	// Undecided: the hours the window cuts hold transfers. Count exactly those (at most two
	// partial hours): a live group's through its pair rows of the hour, else from the rows
	// through the time index (from the rows, every transfer of the hour is tested against the
	// group's addresses).
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
		if edgeGrp != "" {
			n, err = s.edgeCount(ctx, g, edgeGrp)
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

// groupCountAllTime counts (capped) live group g's transfers matching f's flow, chains and
// tokens over all time: its daily rollup, newest days first, a chunk of days at a time (16, then
// four times more each time; one ordered pass over the group's index per chunk), stopping once
// the count reaches MaxCount. A busy entity's count reads days, not its whole history.
func (s *Reader) groupCountAllTime(ctx context.Context, f TransferFilter, g string) (int, error) {
	chunk := s.opt.CountChunkDays
	var total int64
	var before time.Time
	for {
		b := s.newb(sqlb{})
		c := append([]string{"grp = " + b.arg(g)}, b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)...)
		if !before.IsZero() {
			c = append(c, "bucket < "+b.arg(before))
		}
		rows, err := s.db.Query(ctx, `SELECT bucket, sum(in_n)::bigint, sum(out_n)::bigint, sum(self_n)::bigint FROM transfers.grp_daily WHERE `+
			strings.Join(c, " AND ")+fmt.Sprintf(" GROUP BY bucket ORDER BY bucket DESC LIMIT %d", chunk), db.Exec(b.args)...)
		if err != nil {
			return 0, fmt.Errorf("count transfers of %s: %w", g, err)
		}
		read := 0
		for rows.Next() {
			var in, out, self int64
			if err := rows.Scan(&before, &in, &out, &self); err != nil {
				rows.Close()
				return 0, fmt.Errorf("count transfers of %s: %w", g, err)
			}
			read++
			total += pickN(f.Flow, in, out, self)
		}
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("count transfers of %s: %w", g, err)
		}
		if total >= MaxCount {
			return MaxCount, nil
		}
		if read < chunk {
			return int(total), nil
		}
		chunk *= 4
	}
}

// unionCountAllTime counts (capped) the transfers of the union of disjoint live groups gs
// matching f's flow, chains and tokens over all time, as groupCountAllTime counts one group's:
// newest days first, a span of days at a time (16, then four times more each time), stopping
// once the count reaches MaxCount. Each span is one read of the groups' daily rollup (in, out
// and self together) and of the pair rollup between them, rather than every day of every
// group, once per figure.
func (s *Reader) unionCountAllTime(ctx context.Context, f TransferFilter, gs []string) (int, error) {
	var first, last *time.Time
	if err := s.db.QueryRow(ctx, `SELECT min(lo), max(hi) FROM unnest($1::text[]) g(grp),
		LATERAL (SELECT min(bucket) lo, max(bucket) hi FROM transfers.grp_daily d WHERE d.grp = g.grp) x`, gs).Scan(&first, &last); err != nil {
		return 0, fmt.Errorf("days of %v: %w", gs, err)
	}
	if first == nil {
		return 0, nil
	}
	var total int64
	hi := last.Add(24 * time.Hour) // exclusive
	for span := time.Duration(s.opt.CountChunkDays) * 24 * time.Hour; ; span *= 4 {
		lo := hi.Add(-span)
		b := s.newb(sqlb{})
		ga := b.arg(gs)
		keys := b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)
		days := []string{"bucket >= " + b.arg(lo), "bucket < " + b.arg(hi)}
		grp := append(append([]string{"grp = ANY(" + ga + "::text[])"}, days...), keys...)
		pair := append(append([]string{"from_grp = ANY(" + ga + "::text[])", "to_grp = ANY(" + ga + "::text[])"}, days...), keys...)
		var in, out, self int64
		if err := s.db.QueryRow(ctx, `SELECT coalesce(sum(in_n), 0)::bigint, coalesce(sum(out_n), 0)::bigint, coalesce(sum(self_n), 0)::bigint
			+ (SELECT coalesce(sum(n), 0)::bigint FROM transfers.grp_pair_daily WHERE `+strings.Join(pair, " AND ")+`)
			FROM transfers.grp_daily WHERE `+strings.Join(grp, " AND "), db.Exec(b.args)...).Scan(&in, &out, &self); err != nil {
			return 0, fmt.Errorf("count transfers of %v: %w", gs, err)
		}
		total += pickN(f.Flow, in, out, self)
		if total >= MaxCount {
			return MaxCount, nil
		}
		if !lo.After(*first) {
			return int(total), nil
		}
		hi = lo
	}
}

// addrCountAllTime counts (capped) address a's transfers matching f's flow, chains and tokens
// over all time: its daily rollup (in and out, one read of its rows) and its transfers to itself
// (pair_hourly). The generic rollup count (windowCounts) reads the address's daily rows once
// for in and once for out, which for a hot wallet costs several times the page beside it.
func (s *Reader) addrCountAllTime(ctx context.Context, f TransferFilter, a string) (int, error) {
	b := s.newb(sqlb{})
	aa := b.arg(a)
	keys := b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)
	day := append([]string{"address = " + aa}, keys...)
	self := append([]string{"from_addr = " + aa, "to_addr = " + aa}, keys...)
	var in, out, selfN int64
	if err := s.db.QueryRow(ctx, `SELECT coalesce(sum(in_n), 0)::bigint, coalesce(sum(out_n), 0)::bigint,
		(SELECT coalesce(sum(n), 0)::bigint FROM transfers.pair_hourly WHERE `+strings.Join(self, " AND ")+`)
		FROM transfers.addr_daily WHERE `+strings.Join(day, " AND "), db.Exec(b.args)...).Scan(&in, &out, &selfN); err != nil {
		return 0, fmt.Errorf("count transfers of %s: %w", a, err)
	}
	return int(min(pickN(f.Flow, in, out, selfN), MaxCount)), nil
}

func whereOf(c []string) string {
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}
