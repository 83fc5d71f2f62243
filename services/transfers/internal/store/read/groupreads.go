package read

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Reads through the live attribution groups' rollups (docs/transfers.md, "Query plans").

// singleGroup names the attribution group that a set's read-model part is, when that part is
// exactly one entity, one entity type or one deposit service.
func singleGroup(s AddrSet) (string, bool) {
	switch {
	case len(s.Entities) == 1 && len(s.Types)+len(s.Deposits) == 0:
		return records.EntityGroup(s.Entities[0]), true
	case len(s.Types) == 1 && len(s.Entities)+len(s.Deposits) == 0:
		return records.TypeGroup(s.Types[0]), true
	case len(s.Deposits) == 1 && len(s.Entities)+len(s.Types) == 0:
		return records.DepositGroup(s.Deposits[0]), true
	}
	return "", false
}

// liveGroup returns the live group standing for the read-model part of set, or "". A set whose
// size SetSize read already knows which of its groups were live then. A group that turned live
// since is read as not live (a slower plan, the same answer); a live group stops being live
// only once it has no addresses left, when its rollups and the model agree it holds nothing.
func (s *Reader) liveGroup(ctx context.Context, set AddrSet) (string, error) {
	g, ok := singleGroup(set)
	if !ok {
		return "", nil
	}
	if set.liveKnown {
		if slices.Contains(set.live, g) {
			return g, nil
		}
		return "", nil
	}
	var live bool
	err := s.db.QueryRow(ctx, `SELECT live FROM transfers.groups WHERE grp = $1`, g).Scan(&live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("group %s: %w", g, err)
	}
	return g, nil
}

// maxUnionGroups is the most entities a base may name and still be counted from the rollups
// of their groups (it reads each group's figures and every pair between them).
const maxUnionGroups = 8

// disjointEntityGroups returns the live groups of a set that is several entities and nothing
// else, when every one is live and no address is in two of them (an address of one entity that
// is a deposit address of another): their union's figures are then sums of theirs. Otherwise
// it returns nil.
func (s *Reader) disjointEntityGroups(ctx context.Context, set AddrSet) ([]string, error) {
	if len(set.Addrs)+len(set.Types)+len(set.Deposits) > 0 || len(set.Entities) < 2 || len(set.Entities) > maxUnionGroups {
		return nil, nil
	}
	gs := make([]string, 0, len(set.Entities))
	seen := map[string]bool{}
	for _, e := range set.Entities {
		g := records.EntityGroup(e)
		if seen[g] {
			continue
		}
		seen[g] = true
		gs = append(gs, g)
	}
	var live int
	var shared bool
	if err := s.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM transfers.groups WHERE grp = ANY($1::text[]) AND live),
		EXISTS (SELECT 1 FROM transfers.attributions WHERE entity_id = ANY($2::text[]) AND deposit_service_id = ANY($2::text[])
		        AND entity_id <> '' AND deposit_service_id <> '' AND deposit_service_id <> entity_id)`, gs, set.Entities).Scan(&live, &shared); err != nil {
		return nil, fmt.Errorf("groups of %v: %w", set.Entities, err)
	}
	if live < len(gs) || shared {
		return nil, nil
	}
	return gs, nil
}

// pureGroup returns the live group that is the whole of set (no listed addresses), or "".
func (s *Reader) pureGroup(ctx context.Context, set AddrSet) (string, error) {
	if len(set.Addrs) > 0 {
		return "", nil
	}
	return s.liveGroup(ctx, set)
}

// outsideGroup returns the addresses of addrs that are not in group g.
func (s *Reader) outsideGroup(ctx context.Context, addrs []string, g string) ([]string, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	rows, err := s.db.Query(ctx, `SELECT a FROM unnest($1::text[]) a WHERE NOT EXISTS (SELECT 1 FROM transfers.attributions t
		WHERE t.address = a AND $2 = ANY(transfers.attribution_groups(t.entity_id, t.entity_type, t.deposit_service_id)))`, addrs, g)
	if err != nil {
		return nil, fmt.Errorf("addresses outside %s: %w", g, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// inGroup is the condition "col is an address of group g" (an index probe of the read model).
func (b *sqlb) inGroup(col, g string) string {
	return "EXISTS (SELECT 1 FROM transfers.attributions t WHERE t.address = " + col + " AND " + b.arg(g) +
		"::text = ANY(transfers.attribution_groups(t.entity_id, t.entity_type, t.deposit_service_id)))"
}

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

// window is a time window (from, to inclusive; zero is open) cut into rollup buckets: whole
// days [dLo, dHi) from the daily rollups, the hours at its ends [hLo, dLo) and [dHi, hHi) from
// the hourly ones (all of [hLo, hHi) when it holds no whole day).
type window struct {
	from, to time.Time
	dLo, dHi time.Time
	hLo, hHi time.Time
	noDays   bool
}

func newWindow(from, to time.Time) window {
	w := window{from: from, to: to}
	const day = 24 * time.Hour
	if !from.IsZero() {
		from = from.UTC()
		w.hLo = from.Truncate(time.Hour)
		w.dLo = from.Truncate(day)
		if w.dLo.Before(from) {
			w.dLo = w.dLo.Add(day)
		}
	}
	if !to.IsZero() {
		end := to.UTC().Add(time.Microsecond) // exclusive
		w.dHi = end.Truncate(day)
		w.hHi = end.Truncate(time.Hour)
		if w.hHi.Before(end) {
			w.hHi = w.hHi.Add(time.Hour)
		}
	}
	w.noDays = !from.IsZero() && !to.IsZero() && !w.dLo.Before(w.dHi)
	return w
}

// dayConds are the conditions on a daily bucket column b; ok is false when no day is whole.
func (w window) dayConds(b *sqlb, col string) (c []string, ok bool) {
	if w.noDays {
		return nil, false
	}
	if !w.from.IsZero() {
		c = append(c, col+" >= "+b.arg(w.dLo))
	}
	if !w.to.IsZero() {
		c = append(c, col+" < "+b.arg(w.dHi))
	}
	return c, true
}

// hourCond is the condition on an hourly bucket column; ok is false when no hour is needed.
func (w window) hourCond(b *sqlb, col string) (string, bool) {
	if w.noDays {
		return col + " >= " + b.arg(w.hLo) + " AND " + col + " < " + b.arg(w.hHi), true
	}
	var or []string
	if !w.from.IsZero() && w.hLo.Before(w.dLo) {
		or = append(or, "("+col+" >= "+b.arg(w.hLo)+" AND "+col+" < "+b.arg(w.dLo)+")")
	}
	if !w.to.IsZero() && w.dHi.Before(w.hHi) {
		or = append(or, "("+col+" >= "+b.arg(w.dHi)+" AND "+col+" < "+b.arg(w.hHi)+")")
	}
	if len(or) == 0 {
		return "", false
	}
	return "(" + strings.Join(or, " OR ") + ")", true
}

// whole reports whether the hour bucket h lies inside the window.
func (w window) whole(h time.Time) bool {
	return (w.from.IsZero() || !h.Before(w.from)) && (w.to.IsZero() || !h.Add(time.Hour).After(w.to.Add(time.Microsecond)))
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

// simpleSide is a from/to filter that is absent, one live group, or the exclusion of one.
func (s *Reader) simpleSide(ctx context.Context, f AddrFilter) (g string, negate, ok bool, err error) {
	switch {
	case !f.Active():
		return "", false, true, nil
	case f.Only && f.NotIn.Empty():
		g, err = s.pureGroup(ctx, f.In)
		return g, false, g != "", err
	case !f.Only && !f.NotIn.Empty():
		g, err = s.pureGroup(ctx, f.NotIn)
		return g, true, g != "", err
	}
	return "", false, false, nil
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

// partialHours returns the parts of the window that lie in hour buckets it does not hold
// whole (at most one at each end; inclusive bounds). ok is false when the window lies within
// one hour (nothing whole to take from the rollups) or has no bound at all.
func (w window) partialHours() (segs [][2]time.Time, ok bool) {
	if w.from.IsZero() && w.to.IsZero() {
		return nil, false
	}
	from, to := w.from.UTC(), w.to.UTC()
	if !w.from.IsZero() && !w.to.IsZero() && from.Truncate(time.Hour).Equal(to.Truncate(time.Hour)) {
		return nil, false
	}
	if !w.from.IsZero() && !from.Equal(from.Truncate(time.Hour)) {
		segs = append(segs, [2]time.Time{from, from.Truncate(time.Hour).Add(time.Hour - time.Microsecond)})
	}
	if !w.to.IsZero() {
		if h := to.Truncate(time.Hour); h.Add(time.Hour - time.Microsecond).After(to) {
			segs = append(segs, [2]time.Time{h, to})
		}
	}
	return segs, true
}

func whereOf(c []string) string {
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}

// flowSides are the grp_edges sides a flow selects.
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

// edgeConds are the conditions on grp_edges (alias e) of an edge-driven read of f for group g:
// the group, sides, chains and tokens, the window widened to whole hours, and the value and USD
// ranges where a pair row of one transfer already decides them (a superset otherwise).
func (b *sqlb) edgeConds(f TransferFilter, g string) []string {
	c := []string{"e.grp = " + b.arg(g), "e.side = ANY(" + b.arg(flowSides(f.Flow)) + "::smallint[])"}
	c = append(c, b.edgeSides(f)...)
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
	if f.USDGte != nil {
		c = append(c, "e.usd >= "+b.arg(*f.USDGte))
	}
	if f.ValueGte != nil {
		c = append(c, "e.value >= "+b.arg(*f.ValueGte))
	}
	if f.USDLte != nil {
		c = append(c, "(e.n > 1 OR e.usd <= "+b.arg(*f.USDLte)+")")
	}
	if f.ValueLte != nil {
		c = append(c, "(e.n > 1 OR e.value <= "+b.arg(*f.ValueLte)+")")
	}
	return c
}

// edgeRows renders the edge-driven read of group g's transfers matching f: for each pair row
// of the group (newest hour first, or oldest), its transfers through the sender's index.
//
// lo and hi (zero: open) bound the pair rows' hours, first to last. They bound the transfers'
// times inside the lateral read as well, as constants: without them the planner cannot prune the
// monthly partitions of transfers before execution and plans every one (most of a page turn's
// cost).
func (b *sqlb) edgeRows(f TransferFilter, g, cols string, lo, hi time.Time) (from string) {
	edge := b.edgeConds(f, g)
	if !lo.IsZero() {
		edge = append(edge, "e.bucket >= "+b.arg(lo))
	}
	if !hi.IsZero() {
		edge = append(edge, "e.bucket <= "+b.arg(hi))
	}
	return `transfers.grp_edges e CROSS JOIN LATERAL ` + b.edgeProbe(f, cols, lo, hi, "transfers.transfers") + ` t WHERE ` + strings.Join(edge, " AND ")
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

// attached reports whether name (schema-qualified) is a partition of transfers.transfers, from
// the catalog read at most Options.PartitionRefresh ago (again at once, at most once a second, for a name
// it did not list: a new month). A failed read answers false (the caller reads the partitioned
// table).
func (s *Reader) attached(ctx context.Context, name string) bool {
	s.mu.Lock()
	ok, age := s.parts[name], time.Since(s.partsRead)
	s.mu.Unlock()
	refresh := s.opt.PartitionRefresh
	if age < refresh && (ok || age < min(time.Second, refresh)) {
		return ok
	}
	rows, err := s.db.Pool().Query(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE i.inhparent = 'transfers.transfers'::regclass`)
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

// edgeProbe is the lateral read of the transfers of pair row e (from_addr, to_addr, chain,
// token, bucket) matching f, through the sender's or recipient's index, bounded by lo and hi
// as edgeRows says, from table (transfers.transfers or one of its partitions); more are further
// conditions on them (alias t).
func (b *sqlb) edgeProbe(f TransferFilter, cols string, lo, hi time.Time, table string, more ...string) string {
	return b.probe([]string{"t.from_addr = e.from_addr", "t.block_time >= e.bucket", "t.block_time < e.bucket + interval '1 hour'",
		"t.to_addr = e.to_addr", "t.chain = e.chain", "t.token = e.token"}, f, cols, lo, hi, table, more...)
}

// edgeKeyProbe is edgeProbe for a pair row of one transfer known by its natural key (k.uid at
// k.bt, grp_edges.uid and t_first): that transfer, read through the natural key's index, if it
// matches f (its pair row matched the rest). The index's entries of a page's span lie on a few
// leaf pages; a probe of the sender's index reads a leaf page of its own for each pair row.
func (b *sqlb) edgeKeyProbe(f TransferFilter, cols string, lo, hi time.Time, table string, more ...string) string {
	return b.probe([]string{"t.block_time = k.bt", "t.uid = k.uid"}, f, cols, lo, hi, table, more...)
}

// probe is the lateral read of transfers (alias t) from table matching rowConds, f's window and
// ranges, and more, bounded by lo and hi as edgeRows says.
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

// edgeSides are f's from and to filters on a pair row's sender and recipient (edgeSidePlan).
//
// A side of at most Options.PairJoinMax addresses (an entity, its deposit addresses) is a semi-join (an
// anti-join for an exclusion) with the set, which the planner may hash: a count over an
// entity's pair rows whose other side rarely matches then hashes the set once instead of probing
// the attribution index for every pair row (an exchange's transfers to its own deposit
// addresses, of which there are none). A larger set (an entity type)
// stays a probe per pair row: hashing a type of millions of addresses would cost more than the
// probes up to a page or 10,000 matches.
//
// A set of entity types whose groups are live (f.typed) is a test of the pair row's own
// from_t or to_t: the row keeps the live type group of each side (migration 15).
func (b *sqlb) edgeSides(f TransferFilter) []string {
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
				c = append(c, b.edgeMember(s.col, s.f.In, false, f.sparseSides))
			}
		}
		if !s.f.NotIn.Empty() {
			if s.not {
				c = append(c, "NOT ("+s.tcol+" = ANY("+b.arg(typeGroups(s.f.NotIn.Types))+"::text[]))")
			} else {
				c = append(c, b.edgeMember(s.col, s.f.NotIn, true, f.sparseSides))
			}
		}
	}
	return c
}

func typeGroups(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = records.TypeGroup(t)
	}
	return out
}

// liveTypes reports whether set is entity types and nothing else, every one a live group: a
// pair row's from_t/to_t then decide membership (edgeSides).
func (s *Reader) liveTypes(ctx context.Context, set AddrSet) (bool, error) {
	if len(set.Types) == 0 || len(set.Addrs)+len(set.Entities)+len(set.Deposits) > 0 {
		return false, nil
	}
	gs := typeGroups(set.Types)
	slices.Sort(gs)
	gs = slices.Compact(gs)
	if set.liveKnown {
		return !slices.ContainsFunc(gs, func(g string) bool { return !slices.Contains(set.live, g) }), nil
	}
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM transfers.groups WHERE grp = ANY($1::text[]) AND live`, gs).Scan(&n); err != nil {
		return false, fmt.Errorf("live types: %w", err)
	}
	return n == len(gs), nil
}

// typeSides sets f.typed for the sets of f's sides that are live entity types.
func (s *Reader) typeSides(ctx context.Context, f *TransferFilter) error {
	for _, c := range []struct {
		set AddrSet
		use bool
		out *bool
	}{{f.From.In, f.From.Only, &f.typed.fromIn}, {f.From.NotIn, !f.From.NotIn.Empty(), &f.typed.fromNot},
		{f.To.In, f.To.Only, &f.typed.toIn}, {f.To.NotIn, !f.To.NotIn.Empty(), &f.typed.toNot}} {
		*c.out = false
		if !c.use {
			continue
		}
		ok, err := s.liveTypes(ctx, c.set)
		if err != nil {
			return err
		}
		*c.out = ok
	}
	return nil
}

// edgeMember is "col is (not) in s" on a grp_edges column (edgeSides). sparse (the conditions
// match few pair rows, so all are read) hashes a modelled set of at most Options.PairJoinMax addresses
// for certain: an OFFSET keeps the subquery from becoming a join the planner would probe per
// pair row, expecting a LIMIT to stop it early.
func (b *sqlb) edgeMember(col string, s AddrSet, not, sparse bool) string {
	if s.Size > b.joinMax {
		if not {
			return b.notMember(col, s)
		}
		return b.member(col, s)
	}
	rows, counting := b.rows, b.counting
	b.rows, b.counting = false, false // renders a join: grp_edges is not partitioned (see member)
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

// edgeSidePlan restates from=<one live entity>&to=<anything> (or from=<anything>&to=<one
// live entity>), with no base or counterparties, as the entity's base with flow "from" ("to")
// and the other side a condition on its pair rows' other address, and returns the entity's
// group: its pages, counts and range histograms then read its pair rows (every transfer from
// it, or to it, is one of them) instead of walking every transfer for the pair, e.g.
// from=deposit:<exchange>&to=<exchange> (whose count would otherwise scan every row).
// Where both sides are live groups whose pair the rollups keep, pairPlan serves it instead.
func (s *Reader) edgeSidePlan(ctx context.Context, f TransferFilter) (TransferFilter, string, error) {
	if f.HasBase || f.HasCP || !f.From.Active() || !f.To.Active() {
		return f, "", nil
	}
	for _, c := range []struct {
		side, other AddrFilter
		flow        string
	}{{f.From, f.To, flowFrom}, {f.To, f.From, flowTo}} {
		if !oneEntity(c.side) {
			continue
		}
		g, err := s.pureGroup(ctx, c.side.In)
		if err != nil {
			return f, "", err
		}
		if g == "" {
			continue
		}
		r := f
		r.Base, r.HasBase, r.Flow = c.side.In, true, c.flow
		if c.flow == flowFrom {
			r.From = AddrFilter{}
		} else {
			r.To = AddrFilter{}
		}
		// The entity's own deposit addresses on the other side (its sweeps): transfers inside
		// the entity, its self pair rows alone.
		o := c.other.In
		if c.other.Only && c.other.NotIn.Empty() && len(o.Addrs)+len(o.Entities)+len(o.Types) == 0 &&
			len(o.Deposits) == 1 && o.Deposits[0] == c.side.In.Entities[0] {
			r.Flow = "self"
		}
		if err := s.typeSides(ctx, &r); err != nil {
			return f, "", err
		}
		return r, g, nil
	}
	// One side the deposit addresses of one entity whose group is live: they are addresses of
	// its group, so the transfers from (to) them are the group's transfers from (to) its pair
	// rows' sender (recipient) in them; the side stays as that condition.
	for _, c := range []struct {
		side AddrFilter
		flow string
	}{{f.From, flowFrom}, {f.To, flowTo}} {
		if !oneDeposit(c.side) {
			continue
		}
		base := AddrSet{Entities: c.side.In.Deposits, Size: c.side.In.Size}
		g, err := s.pureGroup(ctx, base)
		if err != nil {
			return f, "", err
		}
		if g == "" {
			continue
		}
		r := f
		r.Base, r.HasBase, r.Flow = base, true, c.flow
		if err := s.typeSides(ctx, &r); err != nil {
			return f, "", err
		}
		return r, g, nil
	}
	return f, "", nil
}

// oneDeposit reports whether a from/to filter is exactly the deposit addresses of one entity.
func oneDeposit(a AddrFilter) bool {
	return a.Only && a.NotIn.Empty() && len(a.In.Deposits) == 1 && len(a.In.Addrs)+len(a.In.Types)+len(a.In.Entities) == 0
}

// edgePlan reports whether f's page can be read through group g's pair rows: a base that is one
// live entity group and nothing else, no from/to/counterparty filter, sorted by time.
func (s *Reader) edgePlan(ctx context.Context, f TransferFilter) (string, error) {
	if !f.HasBase || f.HasCP || f.From.Active() || f.To.Active() {
		return "", nil
	}
	if len(f.Base.Entities) != 1 {
		return "", nil
	}
	return s.pureGroup(ctx, f.Base)
}

// edgePage reads one page of group g's transfers matching f, sorted by time, through its pair
// rows. The pair rows of the newest (oldest) hours are read in order from the group's index
// until they hold offset+limit transfers; the transfers of those hours are fetched through the
// sender's index, filtered, sorted and sliced. When filters leave too few, more hours are read.
func (s *Reader) edgePage(ctx context.Context, f TransferFilter, g string, p Page) ([]TransferRow, error) {
	if p.Offset > 0 && edgeCountsExact(f) {
		return s.edgePageSkipping(ctx, f, g, p)
	}
	if p.Offset == 0 {
		list, ok, err := s.edgeNewestPage(ctx, f, g, p)
		if err != nil || ok {
			return list, err
		}
		s.shortPages.Add(1)
	}
	need := p.Offset + p.Limit
	asc := p.SortDir == "asc"
	dir := "DESC"
	if asc {
		dir = "ASC"
	}
	// The hour the window cuts where the read starts (timeLte inside an hour, for a keyset page
	// turn) holds transfers outside it: its pair rows count towards the page by the part of
	// the hour inside the window. Counted whole, they stopped the first round at that hour (two
	// minutes of transfers, say) and a second round read the page again: 2 of 3 keyset page
	// turns of an exchange did so. Left out, the page read an hour more than it needed.
	var cutHour time.Time
	cutPart := 1.0
	const cutMargin = 0.6 // an even share would fall short of a page about half the time
	if t := f.TimeTo.UTC(); !asc && !t.IsZero() {
		if end := t.Add(time.Microsecond); !end.Equal(end.Truncate(time.Hour)) {
			cutHour, cutPart = end.Truncate(time.Hour), float64(end.Sub(end.Truncate(time.Hour)))/float64(time.Hour)
		}
	} else if t := f.TimeFrom.UTC(); asc && !t.IsZero() && !t.Equal(t.Truncate(time.Hour)) {
		cutHour, cutPart = t.Truncate(time.Hour), float64(t.Truncate(time.Hour).Add(time.Hour).Sub(t))/float64(time.Hour)
	}
	// Each round reads pair rows holding want transfers (more of them while those read hold
	// fewer: reading pair rows is cheap beside reading their transfers), then the transfers of
	// their hours. When the filters leave fewer than need of them (a value range, a window that
	// cuts its far hour, or a cut hour whose transfers lie mostly outside the window), the next
	// round wants four times as many, so the bound moves on instead of stopping at the same hour
	// again.
	for want := float64(need); ; want *= 4 {
		var bound time.Time
		var exhausted bool
		lim := int(want)
		if !cutHour.IsZero() {
			lim *= 4 // the cut hour's pair rows count for less: a busy one fills the first read
		}
		for ; ; lim *= 4 {
			b := s.newb(sqlb{rows: true})
			rows, err := s.db.Query(ctx, `SELECT e.bucket, e.n FROM transfers.grp_edges e WHERE `+strings.Join(b.edgeConds(f, g), " AND ")+
				` ORDER BY e.bucket `+dir+fmt.Sprintf(" LIMIT %d", lim), db.Exec(b.args)...)
			if err != nil {
				return nil, fmt.Errorf("pair rows of %s: %w", g, err)
			}
			var sum float64
			read := 0
			bound = time.Time{}
			for rows.Next() {
				var t time.Time
				var n int64
				if err := rows.Scan(&t, &n); err != nil {
					rows.Close()
					return nil, fmt.Errorf("scan pair rows of %s: %w", g, err)
				}
				read++
				if sum < want || t.Equal(bound) {
					bound = t
					if t.Equal(cutHour) {
						sum += float64(n) * cutPart * cutMargin
					} else {
						sum += float64(n)
					}
				}
			}
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("pair rows of %s: %w", g, err)
			}
			if read == 0 {
				return nil, nil
			}
			if exhausted = read < lim; exhausted || sum >= want {
				break
			}
		}
		b := s.newb(sqlb{rows: true})
		var lo, hi time.Time
		if !exhausted {
			if asc {
				hi = bound
			} else {
				lo = bound
			}
		}
		from := b.edgeRows(f, g, transferSelect, lo, hi)
		out, err := s.db.Query(ctx, `SELECT `+transferSelectOuter+` FROM (SELECT t.* FROM `+from+`) u ORDER BY `+orderBy("time", p.SortDir)+
			fmt.Sprintf(" LIMIT %d", need), db.Exec(b.args)...)
		if err != nil {
			return nil, fmt.Errorf("list transfers of %s: %w", g, err)
		}
		list, err := scanTransfers(out)
		if err != nil {
			return nil, err
		}
		if len(list) >= need || exhausted {
			if p.Offset >= len(list) {
				return nil, nil
			}
			return list[p.Offset:], nil
		}
	}
}

// edgeNewestPage reads a first page (no offset: a first page or a keyset page turn) of group
// g's transfers matching f, sorted by time, from only the pair rows that can hold it, by the
// bounds on their transfers' times (grp_edges.t_first, t_last; the hour's when unknown). Newest
// first, each pair row's key is the latest its transfers in the window can be (least of t_last
// and timeLte), and:
//
//   - the pair rows of the newest hours holding Limit rows are read (rows of older hours have keys
//     below those hours), and the cut is the Limit-th highest time among them at or after which
//     a pair row surely holds a transfer of the window (below), though not below those hours;
//   - every pair row with a key at or above the cut is read for its transfers at or after the
//     cut. Any other transfer is older than the cut: in another pair row every transfer is at
//     or before its key, which is below the cut.
//   - when fewer than Limit of the pair rows read have such a time (an entity's first hours,
//     fewer pair rows than a page, or unknown times), there is no cut: all their transfers are
//     read. They are the newest hours' pair rows; every other transfer is of an older hour.
//
// So when at least Limit transfers are read, the newest Limit of them are the page (oldest first
// mirrors it with t_first and timeGte). A pair row of one transfer whose uid it keeps (migration
// 22, nearly all of them) is read by the natural key, whose index entries for the page's span
// lie on a few leaf pages; the others through their sender's index, a leaf page each. A keyset
// turn of an exchange read about 250 pair rows' transfers for a page of 50, hour by hour; this
// reads about 50. ok is false when fewer are
// read (filters, bounds a reorg left loose or unknown bounds, or fewer transfers than a page):
// the caller then reads the page hour by hour.
func (s *Reader) edgeNewestPage(ctx context.Context, f TransferFilter, g string, p Page) (list []TransferRow, ok bool, err error) {
	if p.Limit < 1 {
		return nil, false, nil
	}
	asc := p.SortDir == "asc"
	b := s.newb(sqlb{rows: true})
	conds := strings.Join(b.edgeConds(f, g), " AND ")
	first, last := "coalesce(e.t_first, e.bucket)", "coalesce(e.t_last, e.bucket + interval '1 hour' - interval '1 microsecond')"
	key, dir, cmp, open := last, "DESC", ">=", "'-infinity'"
	if asc {
		key, dir, cmp, open = first, "ASC", "<=", "'infinity'"
	}
	// A window cutting an hour: pair rows whose transfers all lie outside it are left out (each
	// would take a place among the page's pair rows and hold nothing), the others keyed by the
	// window's end at the latest.
	//
	// The cut is taken from another time of each pair row, one it surely has a transfer of the
	// window at or beyond (newest first: at or after; oldest first: at or before), where its
	// bounds tell one: its newest transfer when inside the window, else its oldest (the window's
	// end falls between them), else its hour when the window holds all of it; else none (NULL).
	// A pair row whose transfers straddle the window's end has its key at that end but may hold
	// nothing from the cut on; cut by keys, it took a place among the page's Limit with nothing,
	// the page fell short and was read again hour by hour (a few in a hundred keyset turns of an
	// exchange). Each such time lies in its pair row's hour, so the cut lies in the hours read,
	// and every pair row keyed at or beyond it is among them.
	hourEnd := "e.bucket + interval '1 hour' - interval '1 microsecond'"
	sure := "coalesce(e.t_last, e.bucket)"
	if asc {
		sure = "coalesce(e.t_first, " + hourEnd + ")"
	}
	var in string
	if t := f.TimeFrom; asc && !t.IsZero() {
		a := b.arg(t)
		key, in = "greatest("+key+", "+a+"::timestamptz)", " AND "+last+" >= "+a+"::timestamptz"
		sure = "CASE WHEN e.t_first IS NULL THEN CASE WHEN e.bucket >= " + a + "::timestamptz THEN " + hourEnd + " END WHEN e.t_first >= " +
			a + "::timestamptz THEN e.t_first ELSE e.t_last END"
	} else if t := f.TimeTo; !asc && !t.IsZero() {
		a := b.arg(t)
		key, in = "least("+key+", "+a+"::timestamptz)", " AND "+first+" <= "+a+"::timestamptz"
		sure = "CASE WHEN e.t_last IS NULL THEN CASE WHEN " + hourEnd + " <= " + a + "::timestamptz THEN e.bucket END WHEN e.t_last <= " +
			a + "::timestamptz THEN e.t_last ELSE e.t_first END"
	}
	conds += in
	// A page of the group's transfers by chain, token and time alone has one best plan whatever
	// the values (the group's pair rows by hour; each pair row's transfers by its sender's index):
	// its two reads keep their generic plans. Ranges and side conditions stay planned with their
	// values (a USD bound may be best read through grp_edges_usd, a set hashed).
	query := func(sql string, args []any) (pgx.Rows, error) { return s.db.Query(ctx, sql, db.Exec(args)...) }
	if !f.From.Active() && !f.To.Active() && !f.HasCP && f.USDGte == nil && f.USDLte == nil && f.ValueGte == nil && f.ValueLte == nil {
		query = func(sql string, args []any) (pgx.Rows, error) { return s.db.QueryGeneric(ctx, sql, args...) }
	}
	rows, err := query(fmt.Sprintf(`WITH pr AS MATERIALIZED (
  SELECT e.from_addr, e.to_addr, e.chain, e.token, e.bucket, e.uid, e.t_first, %[1]s AS k, %[7]s AS g FROM transfers.grp_edges e
  WHERE %[2]s AND e.bucket %[3]s coalesce((SELECT e.bucket FROM transfers.grp_edges e WHERE %[2]s
                                         ORDER BY e.bucket %[4]s OFFSET %[5]d LIMIT 1), %[6]s)
), cut AS (SELECT (SELECT g FROM pr ORDER BY g %[4]s NULLS LAST OFFSET %[5]d LIMIT 1) AS k)
SELECT pr.from_addr, pr.to_addr, pr.chain, pr.token, pr.bucket, pr.uid, pr.t_first, cut.k FROM pr, cut
WHERE cut.k IS NULL OR pr.k %[3]s cut.k`,
		key, conds, cmp, dir, p.Limit-1, open, sure), b.args)
	if err != nil {
		return nil, false, fmt.Errorf("pair rows of %s: %w", g, err)
	}
	// Pair rows of one known transfer (uid, migration 22) are read by the natural key, the others
	// through their sender's index; the attributions of every pair row's addresses are read beside the transfers (Page.Attributions).
	var from, to, chain, token, allChains, allAddrs []string
	var buckets, uidTimes []time.Time
	var uids []pgtype.UUID
	var lo, hi time.Time
	var cut *time.Time // none: fewer than Limit pair rows with a sure time (below)
	for rows.Next() {
		var fa, ta, c, tk string
		var bk time.Time
		var uid pgtype.UUID
		var tf *time.Time
		if err := rows.Scan(&fa, &ta, &c, &tk, &bk, &uid, &tf, &cut); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("scan pair rows of %s: %w", g, err)
		}
		allChains, allAddrs = append(allChains, c, c), append(allAddrs, fa, ta)
		if uid.Valid && tf != nil && s.opt.PairUIDs {
			uids, uidTimes = append(uids, uid), append(uidTimes, *tf)
		} else {
			from, to, chain, token, buckets = append(from, fa), append(to, ta), append(chain, c), append(token, tk), append(buckets, bk)
		}
		if lo.IsZero() || bk.Before(lo) {
			lo = bk
		}
		if bk.After(hi) {
			hi = bk
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("pair rows of %s: %w", g, err)
	}
	if len(allAddrs) == 0 {
		return nil, false, nil // fewer pair rows than a page
	}
	// The page's transfers are among these pair rows': their senders and recipients.
	p.beside.start(ctx, s, allChains, allAddrs)
	// The pair rows as a relation (their text in the transfers columns' collation, so each probe
	// uses the index), and their hours' span as parameters, by which the executor prunes the
	// partitions. When the hours lie in one month (nearly every page) the read names that month's
	// partition: its generic plan is one table's, where the partitioned table's plans every
	// partition (paid by each connection on its first turn, and growing with the months kept). A
	// partition that is not there (dropped) falls back to the partitioned table.
	read := func(table string) ([]TransferRow, error) {
		b := s.newb(sqlb{rows: true})
		e := `(SELECT u.f COLLATE "C" AS from_addr, u.t COLLATE "C" AS to_addr, u.c COLLATE "C" AS chain, u.k COLLATE "C" AS token, u.b AS bucket
  FROM unnest(` + b.arg(from) + `::text[], ` + b.arg(to) + `::text[], ` + b.arg(chain) + `::text[], ` + b.arg(token) + `::text[], ` +
			b.arg(buckets) + `::timestamptz[]) u(f, t, c, k, b)) e`
		var atCut []string
		if cut != nil {
			atCut = append(atCut, "t.block_time "+cmp+" "+b.arg(*cut)+"::timestamptz")
		}
		probe := b.edgeProbe(f, transferSelect, lo, hi, table, atCut...)
		k := `unnest(` + b.arg(uids) + `::uuid[], ` + b.arg(uidTimes) + `::timestamptz[]) k(uid, bt)`
		byKey := b.edgeKeyProbe(f, transferSelect, lo, hi, table, atCut...)
		out, err := query(`SELECT `+transferSelectOuter+` FROM (SELECT t.* FROM `+k+` CROSS JOIN LATERAL `+byKey+` t
  UNION ALL SELECT t.* FROM `+e+` CROSS JOIN LATERAL `+probe+` t) u ORDER BY `+
			orderBy("time", p.SortDir)+fmt.Sprintf(" LIMIT %d", p.Limit), b.args)
		if err != nil {
			return nil, err
		}
		return scanTransfers(out) // an error of the statement may come with its rows
	}
	part := monthPartition("transfers", lo, hi.Add(time.Hour-time.Microsecond))
	if part != "" && !s.attached(ctx, part) {
		part = ""
	}
	if part != "" {
		list, err = read(part)
	}
	if part == "" || pgstore.IsCode(err, "42P01") { // undefined_table
		list, err = read("transfers.transfers")
	}
	if err != nil {
		return nil, false, fmt.Errorf("list transfers of %s: %w", g, err)
	}
	return list, len(list) == p.Limit, nil
}

// edgeCountsExact reports whether the pair rows of f's read count its transfers exactly, hour
// by hour: no value or USD range (a pair row's sums cannot decide one per transfer) and a window
// of whole hours (a cut hour's pair rows hold transfers outside it).
func edgeCountsExact(f TransferFilter) bool {
	if f.USDGte != nil || f.USDLte != nil || f.ValueGte != nil || f.ValueLte != nil {
		return false
	}
	whole := func(t time.Time) bool { return t.IsZero() || t.Equal(t.Truncate(time.Hour)) }
	return whole(f.TimeFrom) && (f.TimeTo.IsZero() || whole(f.TimeTo.Add(time.Microsecond)))
}

// edgePageSkipping reads a page at an offset without reading the transfers before it: the
// group's hours (newest or oldest first) with their transfer counts from the pair rows are read
// until they reach offset+limit; the hours wholly before the page are skipped by count, and
// only the transfers of the hours the page spans are fetched (through the sender's index),
// sorted and sliced. A page turn costs about one page, not offset+limit rows. Only for reads
// whose pair rows count transfers exactly (edgeCountsExact).
func (s *Reader) edgePageSkipping(ctx context.Context, f TransferFilter, g string, p Page) ([]TransferRow, error) {
	need := int64(p.Offset + p.Limit)
	asc := p.SortDir == "asc"
	dir := "DESC"
	if asc {
		dir = "ASC"
	}
	var first, last time.Time // the hours the page spans (first in read order)
	var skipped, sum int64    // transfers in the hours before first; in all hours read
	found := false
	for lim := 8; ; lim *= 4 { // hours; a busy entity fills a page turn from a few
		b := s.newb(sqlb{rows: true})
		rows, err := s.db.Query(ctx, `SELECT e.bucket, sum(e.n)::bigint FROM transfers.grp_edges e WHERE `+strings.Join(b.edgeConds(f, g), " AND ")+
			` GROUP BY e.bucket ORDER BY e.bucket `+dir+fmt.Sprintf(" LIMIT %d", lim), db.Exec(b.args)...)
		if err != nil {
			return nil, fmt.Errorf("hours of %s: %w", g, err)
		}
		read := 0
		skipped, sum, found = 0, 0, false
		for rows.Next() {
			var t time.Time
			var n int64
			if err := rows.Scan(&t, &n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan hours of %s: %w", g, err)
			}
			read++
			if sum >= need {
				continue
			}
			if sum+n <= int64(p.Offset) {
				skipped += n
			} else if !found {
				first, found = t, true
			}
			sum += n
			last = t
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("hours of %s: %w", g, err)
		}
		if sum >= need || read < lim {
			break
		}
	}
	if !found {
		return nil, nil // the offset is past the last transfer
	}
	b := s.newb(sqlb{rows: true})
	lo, hi := last, first
	if asc {
		lo, hi = first, last
	}
	// The transfers of the first hour before the page are sorted past on the server, not sent.
	from := b.edgeRows(f, g, transferSelect, lo, hi)
	out, err := s.db.Query(ctx, `SELECT `+transferSelectOuter+` FROM (SELECT t.* FROM `+from+`) u ORDER BY `+orderBy("time", p.SortDir)+
		fmt.Sprintf(" LIMIT %d OFFSET %d", p.Limit, int64(p.Offset)-skipped), db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("list transfers of %s: %w", g, err)
	}
	return scanTransfers(out)
}

// edgeCount counts (capped) group g's transfers matching f through its pair rows. A pair row
// of one transfer in an hour wholly inside the window decides the value and USD ranges on its
// own, so those are counted from the pair rows alone; the transfers of the other matching pair
// rows (several transfers, or an hour the window cuts) are counted from the rows.
func (s *Reader) edgeCount(ctx context.Context, f TransferFilter, g string) (int, error) {
	b := s.newb(sqlb{rows: true})
	c := append([]string{"e.grp = " + b.arg(g), b.edgeSingle(f), "e.side = ANY(" + b.arg(flowSides(f.Flow)) + "::smallint[])"},
		b.rangeConds(f, "e.usd", "e.value")...)
	c = append(c, b.edgeSides(f)...)
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("e.chain", f.Chains))
	}
	if tc := b.tokenCond([][2]string{{"e.token", "e.token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
		c = append(c, tc)
	}
	var lower int
	if err := s.db.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM transfers.grp_edges e WHERE %s LIMIT %d) x`,
		strings.Join(c, " AND "), MaxCount), db.Exec(b.args)...).Scan(&lower); err != nil {
		return 0, fmt.Errorf("count transfers of %s: %w", g, err)
	}
	if lower >= MaxCount {
		return MaxCount, nil
	}
	b = s.newb(sqlb{rows: true})
	var rest int
	if err := s.db.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM %s AND %s LIMIT %d) x`, b.edgeRows(f, g, "1", time.Time{}, time.Time{}), b.edgeNotSingle(f), MaxCount-lower),
		db.Exec(b.args)...).Scan(&rest); err != nil {
		return 0, fmt.Errorf("count transfers of %s: %w", g, err)
	}
	return lower + rest, nil
}

// edgeSingle is the condition on a pair row of grp_edges that makes it stand for exactly one
// transfer of f's window with its own figures: one transfer (n = 1), inside the window (in a
// whole hour inside it, or at a known time inside it: a pair row of one transfer whose bounds
// meet is at that time), and priced when f has a USD range (a 0 is an unknown or a zero price).
// Other pair rows are decided by their transfers.
func (b *sqlb) edgeSingle(f TransferFilter) string {
	is, _, _ := b.edgeSingleParts(f)
	// The window's hours, for the index (edgeNotSingle's reads have them from edgeConds).
	w := newWindow(f.TimeFrom, f.TimeTo)
	if !f.TimeFrom.IsZero() {
		is = append(is, "e.bucket >= "+b.arg(w.hLo))
	}
	if !f.TimeTo.IsZero() {
		is = append(is, "e.bucket < "+b.arg(w.hHi))
	}
	return "(" + strings.Join(is, " AND ") + ")"
}

// edgeNotSingle is the negation of edgeSingle, for a read through edgeRows (whose edgeConds
// it relies on), written as a disjunction the planner can serve from grp_edges_multi (pair rows
// of several transfers, about 1% of them): with no time window and a positive usdGte it is
// "e.n <> 1" alone, since edgeConds already keeps only rows with a positive usd. Pair rows
// whose bounds lie outside the window hold none of its transfers and are left out.
func (b *sqlb) edgeNotSingle(f TransferFilter) string {
	_, not, outside := b.edgeSingleParts(f)
	if outside != "" {
		return "(" + strings.Join(not, " OR ") + ") AND " + outside
	}
	return "(" + strings.Join(not, " OR ") + ")"
}

// edgeSingleParts are edgeSingle's conditions and, one for one, their negations (less the
// ones edgeConds rules out), and the condition leaving out pair rows whose bounds lie outside
// the window (empty without one).
//
// A keyset page turn's count reads the hour its timeLte cuts from the pair rows: before the
// known times counted, each of that hour's pair rows was decided by reading its transfers (a
// large part of the turn).
func (b *sqlb) edgeSingleParts(f TransferFilter) (is, not []string, outside string) {
	is, not = []string{"e.n = 1"}, []string{"e.n <> 1"}
	if f.USDGte != nil || f.USDLte != nil {
		is = append(is, "e.usd > 0")
		if f.USDGte == nil || *f.USDGte <= 0 {
			not = append(not, "e.usd <= 0")
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

// edgeRangeHistogramSQL buckets a live entity group's transfers within a value or USD range
// (no rollup sums per transfer) through its pair rows: a single pair row (edgeSingle) inside
// the range is its transfer; the transfers of the other pair rows are read and filtered. In the
// sparse world of the benchmark nearly every pair row is single, so this reads about one index
// entry per transfer in range instead of the entity's rows. Columns: bucket, count, usd.
func (b *sqlb) edgeRangeHistogramSQL(f TransferFilter, g, gran string) string {
	trunc := func(col string) string { return "date_trunc('" + gran + "', " + col + ", 'UTC')" }
	c := append(append(b.edgeConds(f, g), b.edgeSingle(f)), b.rangeConds(f, "e.usd", "e.value")...)
	singles := "SELECT " + trunc("e.bucket") + " AS b, e.usd::float8 AS usd FROM transfers.grp_edges e WHERE " + strings.Join(c, " AND ")
	rest := "SELECT " + trunc("t.block_time") + ", coalesce(t.usd, 0) FROM " +
		b.edgeRows(f, g, "block_time, usd", time.Time{}, time.Time{}) + " AND " + b.edgeNotSingle(f)
	return "SELECT b, count(*), sum(usd) FROM (" + singles + " UNION ALL " + rest + ") u GROUP BY b ORDER BY b"
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
