package read

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
)

// Reads of transfers from one live group to another (from=<entity>&to=type:<t>,
// from=type:cex&to=<entity>, ...; see pairKept), guided by the groups' pair rollup:
// grp_pair_hourly names the hours that hold such transfers, so only those hours' rows are read.
// Without it such a page walks the sender's transfers looking for matches (all of them for a
// pair with no transfers at all). Also the pages of a base of several
// entities, merged from their groups' pages.

// pairPlan returns the two live groups of f when its only address filters are from=<one live
// group> and to=<another> whose pairs are kept and it has no value or USD range, or "" when f is
// not of that shape.
func (s *Reader) pairPlan(ctx context.Context, f TransferFilter) (g1, g2 string, err error) {
	if f.HasBase || f.HasCP || !f.From.Only || !f.To.Only || !f.From.NotIn.Empty() || !f.To.NotIn.Empty() {
		return "", "", nil
	}
	// With a value or USD range the pair rollup's counts no longer say where the matches are:
	// a range matching few of a busy pair's transfers would read every hour of the pair, twice
	// (page and count), slower than the plan through the sender's and recipient's indexes.
	if f.ranged() {
		return "", "", nil
	}
	if g1, err = s.pureGroup(ctx, f.From.In); err != nil || g1 == "" {
		return "", "", err
	}
	if g2, err = s.pureGroup(ctx, f.To.In); err != nil || g2 == "" || !records.PairKept(g1, g2) {
		return "", "", err
	}
	return g1, g2, nil
}

// pairHours reads, in dir order, up to lim hours in which group g1 sent to group g2 transfers
// of f's chains and tokens inside f's window, with how many each (for a window that cuts an
// hour, or a value or USD range, an upper bound of the matches).
func (s *Reader) pairHours(ctx context.Context, f TransferFilter, g1, g2, dir string, lim int) ([]time.Time, []int64, error) {
	b := s.newb(sqlb{})
	c := append([]string{"from_grp = " + b.arg(g1), "to_grp = " + b.arg(g2)}, b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)...)
	if !f.TimeFrom.IsZero() {
		c = append(c, "bucket >= "+b.arg(f.TimeFrom.UTC().Truncate(time.Hour)))
	}
	if !f.TimeTo.IsZero() {
		c = append(c, "bucket <= "+b.arg(f.TimeTo))
	}
	rows, err := s.db.Query(ctx, "SELECT bucket, sum(n)::bigint FROM transfers.grp_pair_hourly WHERE "+strings.Join(c, " AND ")+
		" GROUP BY bucket HAVING sum(n) > 0 ORDER BY bucket "+dir+fmt.Sprintf(" LIMIT %d", lim), db.Exec(b.args)...)
	if err != nil {
		return nil, nil, fmt.Errorf("hours from %s to %s: %w", g1, g2, err)
	}
	defer rows.Close()
	var hours []time.Time
	var counts []int64
	for rows.Next() {
		var h time.Time
		var n int64
		if err := rows.Scan(&h, &n); err != nil {
			return nil, nil, fmt.Errorf("hours from %s to %s: %w", g1, g2, err)
		}
		hours, counts = append(hours, h), append(counts, n)
	}
	return hours, counts, rows.Err()
}

// pairRows renders the rows of f from g1 to g2 inside the given hours (a FROM clause and its
// conditions). When one of the groups is an entity, its pair rows of those hours (entity_pair_rows)
// drive the read: the other side's membership and, for a pair row of one transfer, the value and
// USD ranges are decided there, and only the matching pair rows' transfers are read. Between two
// type groups each hour's transfers are read through the time index and filtered. Either way
// the first and last hours also bound the rows as constants, so the planner prunes the monthly
// partitions outside them.
func (b *sqlb) pairRows(f TransferFilter, g1, g2 string, hours []time.Time, cols string) string {
	lo, hi := hours[0], hours[0]
	for _, h := range hours {
		if h.Before(lo) {
			lo = h
		}
		if h.After(hi) {
			hi = h
		}
	}
	// The groups decide both sides (the pair row's group and inGroup on its other address).
	f.From, f.To = AddrFilter{}, AddrFilter{}
	pairRows := func(g, sides, other string) string {
		return b.entityPairRows(f, g, cols, lo, hi) + " AND e.bucket = ANY(" + b.arg(hours) + "::timestamptz[]) AND e.side = ANY('" + sides +
			"'::smallint[]) AND " + other
	}
	// The other group, when it is a type (live, as both are), is the pair row's own from_t or
	// to_t (migration 15); another entity is probed in the read model.
	other := func(col, tcol, g string) string {
		if strings.HasPrefix(g, "t:") {
			return tcol + " = " + b.arg(g)
		}
		return b.inGroup(col, g)
	}
	switch {
	case strings.HasPrefix(g1, "e:"): // the sender's group: its out and self pair rows to g2
		return pairRows(g1, "{1,3}", other("e.to_addr", "e.to_t", g2))
	case strings.HasPrefix(g2, "e:"): // the recipient's group: its in and self pair rows from g1
		return pairRows(g2, "{2,3}", other("e.from_addr", "e.from_t", g1))
	}
	conds := append([]string{"block_time >= h.bucket", "block_time < h.bucket + interval '1 hour'",
		"block_time >= " + b.arg(lo), "block_time < " + b.arg(hi.Add(time.Hour))}, b.transferConds(f, "block_time")...)
	return "unnest(" + b.arg(hours) + "::timestamptz[]) h(bucket) CROSS JOIN LATERAL (SELECT " + cols +
		" FROM transfers.transfers WHERE " + strings.Join(conds, " AND ") + ") t"
}

// pairPage reads one page of f's transfers from g1 to g2, sorted by time. The pair rollup's
// hours (newest or oldest first) are read with their counts until they hold offset+limit
// transfers; when the counts are exact (entityPairCountsExact), the hours wholly before the page are
// skipped by count. Only the rows of the remaining hours are read, sorted and sliced. When a
// range or a cut hour leaves too few, more hours are read.
func (s *Reader) pairPage(ctx context.Context, f TransferFilter, g1, g2 string, p Page) ([]TransferRow, error) {
	need := int64(p.Offset + p.Limit)
	dir := "DESC"
	if p.SortDir == "asc" {
		dir = "ASC"
	}
	exact := entityPairCountsExact(f)
	// want is how many transfers the hours read must count: when the rows of those hours fall
	// short of the page (a range, or a cut hour, leaves fewer than the counts say), the next
	// round wants four times as many, so it reads further instead of the same hours again.
	want := need
	for lim := 8; ; { // hours; a busy pair fills a page from a few
		hours, counts, err := s.pairHours(ctx, f, g1, g2, dir, lim)
		if err != nil || len(hours) == 0 {
			return nil, err
		}
		var read []time.Time
		var skipped, sum int64
		all := len(hours) < lim // every hour of the pair is in hours
		for i, h := range hours {
			if sum >= want {
				all = false
				break
			}
			if exact && sum+counts[i] <= int64(p.Offset) {
				skipped += counts[i]
			} else {
				read = append(read, h)
			}
			sum += counts[i]
		}
		if sum < want && len(hours) == lim {
			lim *= 4 // the hours read so far cannot hold the page
			continue
		}
		if len(read) == 0 {
			return nil, nil // the offset is past the last transfer
		}
		b := s.newb(sqlb{rows: true})
		q := "SELECT " + transferSelectOuter + " FROM (SELECT t.* FROM " + b.pairRows(f, g1, g2, read, transferSelect) +
			") u ORDER BY " + orderBy("time", p.SortDir) + fmt.Sprintf(" LIMIT %d", need-skipped)
		rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
		if err != nil {
			return nil, fmt.Errorf("transfers from %s to %s: %w", g1, g2, err)
		}
		list, err := scanTransfers(rows)
		if err != nil {
			return nil, err
		}
		if int64(len(list)) >= need-skipped || all {
			at := p.Offset - int(skipped)
			if at >= len(list) {
				return nil, nil
			}
			return list[at:], nil
		}
		want *= 4
	}
}

// pairCount counts (capped) f's transfers from g1 to g2 in the pair rollup's hours, newest
// first, reading more hours until the cap or the last hour.
func (s *Reader) pairCount(ctx context.Context, f TransferFilter, g1, g2 string) (int, error) {
	for lim := 64; ; lim *= 4 {
		hours, _, err := s.pairHours(ctx, f, g1, g2, "DESC", lim)
		if err != nil || len(hours) == 0 {
			return 0, err
		}
		b := s.newb(sqlb{rows: true, counting: true})
		var n int
		q := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) c", b.pairRows(f, g1, g2, hours, "1"), MaxCount)
		if err := s.db.QueryRow(ctx, q, db.Exec(b.args)...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count transfers from %s to %s: %w", g1, g2, err)
		}
		if n >= MaxCount || len(hours) < lim {
			return n, nil
		}
	}
}

// unionPlan returns the live groups of f's base when it is several disjoint entity groups (see
// disjointEntityGroups) with flow all and no other address filter, or nil.
func (s *Reader) unionPlan(ctx context.Context, f TransferFilter) ([]string, error) {
	if !f.HasBase || f.HasCP || f.From.Active() || f.To.Active() || f.Flow != "all" {
		return nil, nil
	}
	return s.disjointEntityGroups(ctx, f.Base)
}

// entityAddrsPlan returns the live group of f's base and the base's listed addresses outside it,
// when the base is one entity and listed addresses (a caller's additions to it) with no other
// address filter, and flow all, or flow in, out or self without a value or USD range (the
// rollups then count it); otherwise "" and nil.
func (s *Reader) entityAddrsPlan(ctx context.Context, f TransferFilter) (string, []string, error) {
	ranged := f.ranged()
	flowOK := f.Flow == "all" || (f.Flow == "in" || f.Flow == "out" || f.Flow == "self") && !ranged
	if !f.HasBase || f.HasCP || f.From.Active() || f.To.Active() || !flowOK ||
		len(f.Base.Addrs) == 0 || len(f.Base.Entities) != 1 || len(f.Base.Types)+len(f.Base.Deposits) > 0 {
		return "", nil, nil
	}
	g, err := s.liveGroup(ctx, f.Base)
	if err != nil || g == "" {
		return "", nil, err
	}
	outside, err := s.outsideGroup(ctx, f.Base.Addrs, g)
	if err != nil || len(outside) == 0 {
		return "", nil, err // all inside: the entity's own plans serve it (none here: rows)
	}
	return g, outside, nil
}

// entityAddrsPage reads one page of the transfers of entity group g and the addresses addrs
// outside it, sorted by time: the group's first offset+limit transfers (through its pair rows)
// and the addresses' (through their indexes), merged, a transfer between the two kept once.
// With flow in (out), each part leaves out the transfers from (to) the other, which stay inside
// the union: an exchange's inflow with a caller's additions read every inflow through the
// attribution indexes before. With flow self, the entity's part is its own self transfers and
// the addresses' part those with both sides in the union (among them, and between them and the
// entity).
func (s *Reader) entityAddrsPage(ctx context.Context, f TransferFilter, g string, addrs []string, p Page) ([]TransferRow, error) {
	first := Page{SortKey: p.SortKey, SortDir: p.SortDir, Limit: p.Offset + p.Limit}
	fe, fa := f, f
	fa.Base = Addrs(addrs)
	ent := AddrFilter{NotIn: AddrSet{Entities: f.Base.Entities, Size: f.Base.Size}}
	switch f.Flow {
	case "in":
		fe.From, fa.From = AddrFilter{NotIn: fa.Base}, ent
	case "out":
		fe.To, fa.To = AddrFilter{NotIn: fa.Base}, ent
	case "self":
		union := AddrFilter{In: f.Base, Only: true}
		fa.Flow, fa.From, fa.To = "all", union, union
	}
	lists := make([][]TransferRow, 2)
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		lists[0], err = s.entityPairPage(ectx, fe, g, first)
		return err
	})
	eg.Go(func() (err error) {
		lists[1], err = s.listRows(ectx, fa, first)
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return mergePages(lists, p), nil
}

// entityAddrsCount counts (capped) f's transfers, f's base being entity group g and the
// addresses addrs outside it: from the rollups when they answer it; otherwise (flow all with a
// value or USD range) the group's count through its pair rows, plus the addresses', less those
// between the two, which both count. The union holds each part, so a part at the cap is the
// answer.
func (s *Reader) entityAddrsCount(ctx context.Context, f TransferFilter, g string, addrs []string) (int, error) {
	n, ok, err := s.rollupCount(ctx, f)
	if err != nil || ok {
		return n, err
	}
	if f.Flow != "all" { // no range (entityAddrsPlan): a window within one hour
		return s.rowCount(ctx, f)
	}
	ng, err := s.entityPairCount(ctx, f, g)
	if err != nil || ng >= MaxCount {
		return ng, err
	}
	fa, between := entityAddrsParts(f, addrs)
	na, err := s.rowCount(ctx, fa)
	if err != nil || na >= MaxCount {
		return na, err
	}
	for _, fb := range between {
		m, err := s.rowCount(ctx, fb)
		if err != nil {
			return 0, err
		}
		na -= m
	}
	return min(ng+na, MaxCount), nil
}

// entityAddrsParts splits f, whose base is one entity and the addresses addrs outside it, into
// the addresses' own filter and the two filters of the transfers between them and the entity
// (from the addresses to it, and from it to them), which the entity's and the addresses' both
// hold.
func entityAddrsParts(f TransferFilter, addrs []string) (fa TransferFilter, between [2]TransferFilter) {
	fa = f
	fa.Base = Addrs(addrs)
	ent := AddrFilter{In: AddrSet{Entities: f.Base.Entities, Size: f.Base.Size}, Only: true}
	listed := AddrFilter{In: fa.Base, Only: true}
	for i, side := range [2][2]AddrFilter{{listed, ent}, {ent, listed}} {
		fb := f
		fb.Base, fb.HasBase, fb.From, fb.To = AddrSet{}, false, side[0], side[1]
		between[i] = fb
	}
	return fa, between
}

// unionPage reads one page of the transfers of several disjoint entity groups, sorted by time:
// each group's first offset+limit transfers through its pair rows (entityPairPage), merged in the
// page's order, a transfer between two of the groups kept once. The union's first offset+limit
// transfers are among them: each touches a group, and is among that group's first ones.
func (s *Reader) unionPage(ctx context.Context, f TransferFilter, gs []string, p Page) ([]TransferRow, error) {
	first := Page{SortKey: p.SortKey, SortDir: p.SortDir, Limit: p.Offset + p.Limit}
	// The groups' pages are read side by side, each on a connection of its own.
	lists := make([][]TransferRow, len(gs))
	eg, ectx := errgroup.WithContext(ctx)
	for i, g := range gs {
		eg.Go(func() (err error) {
			lists[i], err = s.entityPairPage(ectx, f, g, first)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return mergePages(lists, p), nil
}

// mergePages merges lists, each sorted by time in p's direction, keeping a transfer that is in
// several once, and slices p's page out of the result.
func mergePages(lists [][]TransferRow, p Page) []TransferRow {
	seen := map[[3]string]bool{}
	var all []TransferRow
	for _, list := range lists {
		for _, r := range list {
			k := [3]string{r.Chain, r.ID, r.BlockHash}
			if !seen[k] {
				seen[k] = true
				all = append(all, r)
			}
		}
	}
	asc := p.SortDir == "asc"
	slices.SortFunc(all, func(a, b TransferRow) int {
		c := a.BlockTime.Compare(b.BlockTime)
		if c == 0 {
			c = strings.Compare(a.Chain, b.Chain)
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if !asc {
			c = -c
		}
		return c
	})
	if p.Offset >= len(all) {
		return nil
	}
	return all[p.Offset:min(len(all), p.Offset+p.Limit)]
}
