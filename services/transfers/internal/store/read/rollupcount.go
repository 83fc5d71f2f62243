package read

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
)

//go:embed sql/newest_day.sql
var newestDaySQL string

//go:embed sql/oldest_day.sql
var oldestDaySQL string

//go:embed sql/groups_days.sql
var groupsDaysSQL string

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
	span := time.Duration(s.opt.CountChunkDays) * 24 * time.Hour
	top, err := s.countTop(ctx, w)
	if err != nil {
		return 0, 0, err
	}
	if top.IsZero() || !w.from.IsZero() && !top.Add(-span).After(w.from) {
		return s.windowCounts(ctx, b, w, parts, combine)
	}
	c := &spanCounts{s: s, b: b, parts: parts, combine: combine}
	lastDay, capped, err := c.readSpans(ctx, w, top, span, cheapHours)
	if err != nil {
		return 0, 0, err
	}
	if !capped && !w.to.IsZero() && lastDay.Before(w.to.UTC()) { // the last day's hours
		if err := c.read(ctx, lastDay, w.to); err != nil {
			return 0, 0, err
		}
	}
	return c.inner, c.outer, nil
}

// countTop is the exclusive end of the whole days a capped count reads first: the end of the
// window's last whole day, or with no upper end the day after the newest stored (zero when
// none is).
func (s *Reader) countTop(ctx context.Context, w window) (time.Time, error) {
	const day = 24 * time.Hour
	if !w.to.IsZero() {
		return w.to.UTC().Add(time.Microsecond).Truncate(day), nil
	}
	var newest *time.Time
	if err := s.db.QueryRow(ctx, newestDaySQL).Scan(&newest); err != nil {
		return time.Time{}, fmt.Errorf("newest day: %w", err)
	}
	if newest == nil {
		return time.Time{}, nil
	}
	return newest.UTC().Truncate(day).Add(day), nil
}

// spanCounts sums windowCounts over spans of a window (cappedWindowCounts).
type spanCounts struct {
	s            *Reader
	b            *sqlb
	parts        []countPart
	combine      func([]int64) int64
	inner, outer int64
}

// read adds the counts of the window from..to. Each query appends its bounds to the arguments
// the parts were built with.
func (c *spanCounts) read(ctx context.Context, from, to time.Time) error {
	sb := c.s.newb(sqlb{rows: c.b.rows, counting: c.b.counting, args: slices.Clone(c.b.args)})
	in, out, err := c.s.windowCounts(ctx, sb, newWindow(from, to), c.parts, c.combine)
	c.inner, c.outer = c.inner+in, c.outer+out
	return err
}

// readSpans reads the whole days of w below top, newest first, a span at a time, as
// cappedWindowCounts says. lastDay is where the window's last day's hours, still to read,
// start (top when none were read); capped reports the count reached MaxCount.
func (c *spanCounts) readSpans(ctx context.Context, w window, top time.Time, span time.Duration, cheapHours bool) (lastDay time.Time, capped bool, err error) {
	const µs = time.Microsecond
	lastDay = top
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
		if err := c.read(ctx, from, to); err != nil || c.inner >= MaxCount {
			return lastDay, err == nil, err
		}
		if last {
			return lastDay, false, nil
		}
		// Days read so far that project to well under the cap after the next span: read the rest
		// at once rather than span by span.
		rest = c.inner*5 < MaxCount/4
		if i == 0 && !rest && w.from.IsZero() {
			// A busy set's window that starts with the data (a keyset turn at its first days) fell
			// short: the spans before the first stored day hold nothing, and would be read one by
			// one (three statements).
			older, err := c.s.daysBefore(ctx, lo)
			if err != nil || !older {
				return lastDay, false, err
			}
		}
		top, span = lo, span*4
	}
}

// daysBefore reports whether any rollup holds a day before t. Every rollup is applied with the
// chains' days, so none holds a day before chain_daily's first.
func (s *Reader) daysBefore(ctx context.Context, t time.Time) (bool, error) {
	var oldest *time.Time
	if err := s.db.QueryRow(ctx, oldestDaySQL).Scan(&oldest); err != nil {
		return false, fmt.Errorf("oldest day: %w", err)
	}
	return oldest != nil && oldest.Before(t), nil
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
	if err := s.db.QueryRow(ctx, groupsDaysSQL, gs).Scan(&first, &last); err != nil {
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
