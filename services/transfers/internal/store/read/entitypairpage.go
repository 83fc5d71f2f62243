package read

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// entityPairSidePlan restates from=<one live entity>&to=<anything> (or from=<anything>&to=<one
// live entity>), with no base or counterparties, as the entity's base with flow "from" ("to")
// and the other side a condition on its pair rows' other address, and returns the entity's
// group: its pages, counts and range histograms then read its pair rows (every transfer from
// it, or to it, is one of them) instead of walking every transfer for the pair, e.g.
// from=deposit:<exchange>&to=<exchange> (whose count would otherwise scan every row).
// Where both sides are live groups whose pair the rollups keep, pairPlan serves it instead.
func (s *Reader) entityPairSidePlan(ctx context.Context, f TransferFilter) (TransferFilter, string, error) {
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

// entityPairPlan reports whether f's page can be read through group g's pair rows: a base that is
// one live entity group and nothing else, no from/to/counterparty filter, sorted by time.
func (s *Reader) entityPairPlan(ctx context.Context, f TransferFilter) (string, error) {
	if !f.HasBase || f.HasCP || f.From.Active() || f.To.Active() {
		return "", nil
	}
	if len(f.Base.Entities) != 1 {
		return "", nil
	}
	return s.pureGroup(ctx, f.Base)
}

// entityPairPage reads one page of group g's transfers matching f, sorted by time, through its pair
// rows. The pair rows of the newest (oldest) hours are read in order from the group's index
// until they hold offset+limit transfers; the transfers of those hours are fetched through the
// sender's index, filtered, sorted and sliced. When filters leave too few, more hours are read.
func (s *Reader) entityPairPage(ctx context.Context, f TransferFilter, g string, p Page) ([]TransferRow, error) {
	if p.Offset > 0 && entityPairCountsExact(f) {
		return s.entityPairPageSkipping(ctx, f, g, p)
	}
	if p.Offset == 0 {
		list, ok, err := s.entityPairNewestPage(ctx, f, g, p)
		if err != nil || ok {
			return list, err
		}
		s.shortPages.Add(1)
	}
	need := p.Offset + p.Limit
	asc := p.SortDir == "asc"
	cut := newPageCut(f, asc)
	// Each round reads pair rows holding want transfers (more of them while those read hold
	// fewer: reading pair rows is cheap beside reading their transfers), then the transfers of
	// their hours. When the filters leave fewer than need of them (a value range, a window that
	// cuts its far hour, or a cut hour whose transfers lie mostly outside the window), the next
	// round wants four times as many, so the bound moves on instead of stopping at the same hour
	// again.
	for want := float64(need); ; want *= 4 {
		lim := int(want)
		if !cut.hour.IsZero() {
			lim *= 4 // the cut hour's pair rows count for less: a busy one fills the first read
		}
		bound, exhausted, found, err := s.pageBound(ctx, f, g, asc, want, lim, cut)
		if err != nil || !found {
			return nil, err
		}
		var lo, hi time.Time
		if !exhausted {
			if asc {
				hi = bound
			} else {
				lo = bound
			}
		}
		b := s.newb(sqlb{rows: true})
		from := b.entityPairRows(f, g, transferSelect, lo, hi)
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

// pageCut is the hour the window cuts where a page's read starts (timeLte inside an hour, for
// a keyset page turn), and the share of that hour inside the window. That hour holds transfers
// outside the window: its pair rows count towards the page by the part of the hour inside it.
// Counted whole, they stopped the first round at that hour (two minutes of transfers, say) and
// a second round read the page again (most keyset page turns of an exchange did so). Left out,
// the page read an hour more than it needed.
type pageCut struct {
	hour time.Time // zero: none
	part float64
}

// cutMargin scales a cut hour's share: an even share would fall short of a page about half the
// time.
const cutMargin = 0.6

func newPageCut(f TransferFilter, asc bool) pageCut {
	if t := f.TimeTo.UTC(); !asc && !t.IsZero() {
		if end := t.Add(time.Microsecond); !end.Equal(end.Truncate(time.Hour)) {
			return pageCut{end.Truncate(time.Hour), float64(end.Sub(end.Truncate(time.Hour))) / float64(time.Hour)}
		}
	} else if t := f.TimeFrom.UTC(); asc && !t.IsZero() && !t.Equal(t.Truncate(time.Hour)) {
		return pageCut{t.Truncate(time.Hour), float64(t.Truncate(time.Hour).Add(time.Hour).Sub(t)) / float64(time.Hour)}
	}
	return pageCut{part: 1}
}

// weight is how many of a pair row's n transfers of hour t count towards a page.
func (c pageCut) weight(t time.Time, n int64) float64 {
	if t.Equal(c.hour) {
		return float64(n) * c.part * cutMargin
	}
	return float64(n)
}

// pageBound reads group g's pair rows matching f in page order, lim at first and four times
// more each time, until those read hold want transfers (weighed by cut), and returns the hour
// of the last of them (bound: all pair rows of that hour count). exhausted reports every pair
// row was read; found is false when there is none.
func (s *Reader) pageBound(ctx context.Context, f TransferFilter, g string, asc bool, want float64, lim int, cut pageCut) (bound time.Time, exhausted, found bool, err error) {
	dir := "DESC"
	if asc {
		dir = "ASC"
	}
	for ; ; lim *= 4 {
		b := s.newb(sqlb{rows: true})
		rows, err := s.db.Query(ctx, `SELECT e.bucket, e.n FROM transfers.entity_pair_rows e WHERE `+strings.Join(b.entityPairConds(f, g), " AND ")+
			` ORDER BY e.bucket `+dir+fmt.Sprintf(" LIMIT %d", lim), db.Exec(b.args)...)
		if err != nil {
			return bound, false, false, fmt.Errorf("pair rows of %s: %w", g, err)
		}
		var sum float64
		var read int
		bound, sum, read, err = boundOf(rows, want, cut)
		if err != nil {
			return bound, false, false, fmt.Errorf("pair rows of %s: %w", g, err)
		}
		if read == 0 {
			return bound, false, false, nil
		}
		if exhausted = read < lim; exhausted || sum >= want {
			return bound, exhausted, true, nil
		}
	}
}

// boundOf scans pair rows (hour, n) in page order: bound is the hour at which they hold want
// transfers (every pair row of that hour counted), or the last one's; sum what they hold up to
// it; read how many rows there were.
func boundOf(rows pgx.Rows, want float64, cut pageCut) (bound time.Time, sum float64, read int, err error) {
	defer rows.Close()
	for rows.Next() {
		var t time.Time
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return bound, sum, read, fmt.Errorf("scan: %w", err)
		}
		read++
		if sum < want || t.Equal(bound) {
			bound = t
			sum += cut.weight(t, n)
		}
	}
	return bound, sum, read, rows.Err()
}

// entityPairNewestPage reads a first page (no offset: a first page or a keyset page turn) of group
// g's transfers matching f, sorted by time, from only the pair rows that can hold it, by the bounds
// on their transfers' times (entity_pair_rows.t_first, t_last; the hour's when unknown). Newest
// first, each pair row's key is the latest its transfers in the window can be (least of t_last and
// timeLte), and:
//
//   - the pair rows of the newest hours holding Limit rows are read (rows of older hours have keys
//     below those hours), and the cut is the Limit-th highest time among them at or after which a
//     pair row surely holds a transfer of the window (below), though not below those hours;
//   - every pair row with a key at or above the cut is read for its transfers at or after the cut.
//     Any other transfer is older than the cut: in another pair row every transfer is at or before
//     its key, which is below the cut.
//   - when fewer than Limit of the pair rows read have such a time (an entity's first hours, fewer
//     pair rows than a page, or unknown times), there is no cut: all their transfers are read. They
//     are the newest hours' pair rows; every other transfer is of an older hour.
//
// So when at least Limit transfers are read, the newest Limit of them are the page (oldest first
// mirrors it with t_first and timeGte). A pair row of one transfer whose uid it keeps (migration
// 22, nearly all of them) is read by the natural key, whose index entries for the page's span lie
// on a few leaf pages; the others through their sender's index, a leaf page each. A keyset turn of
// an exchange read about 250 pair rows' transfers for a page of 50, hour by hour; this reads about
// 50. ok is false when fewer are read (filters, bounds a reorg left loose or unknown bounds, or
// fewer transfers than a page): the caller then reads the page hour by hour.
func (s *Reader) entityPairNewestPage(ctx context.Context, f TransferFilter, g string, p Page) (list []TransferRow, ok bool, err error) {
	if p.Limit < 1 {
		return nil, false, nil
	}
	asc := p.SortDir == "asc"
	b := s.newb(sqlb{rows: true})
	conds := strings.Join(b.entityPairConds(f, g), " AND ")
	k := newNewestKeys(b, f, asc)
	query := s.pageQuery(ctx, f)
	rows, err := query(fmt.Sprintf(`WITH pr AS MATERIALIZED (
  SELECT e.from_addr, e.to_addr, e.chain, e.token, e.bucket, e.uid, e.t_first, %[1]s AS k, %[7]s AS g FROM transfers.entity_pair_rows e
  WHERE %[2]s AND e.bucket %[3]s coalesce((SELECT e.bucket FROM transfers.entity_pair_rows e WHERE %[2]s
                                         ORDER BY e.bucket %[4]s OFFSET %[5]d LIMIT 1), %[6]s)
), cut AS (SELECT (SELECT g FROM pr ORDER BY g %[4]s NULLS LAST OFFSET %[5]d LIMIT 1) AS k)
SELECT pr.from_addr, pr.to_addr, pr.chain, pr.token, pr.bucket, pr.uid, pr.t_first, cut.k FROM pr, cut
WHERE cut.k IS NULL OR pr.k %[3]s cut.k`,
		k.key, conds+k.in, k.cmp, k.dir, p.Limit-1, k.open, k.sure), b.args)
	if err != nil {
		return nil, false, fmt.Errorf("pair rows of %s: %w", g, err)
	}
	pr, err := scanPagePairRows(rows, s.opt.PairUIDs)
	if err != nil {
		return nil, false, fmt.Errorf("pair rows of %s: %w", g, err)
	}
	if len(pr.allAddrs) == 0 {
		return nil, false, nil // fewer pair rows than a page
	}
	// The page's transfers are among these pair rows': their senders and recipients.
	p.beside.start(ctx, s, pr.allChains, pr.allAddrs)
	// When the hours lie in one month (nearly every page) the read names that month's
	// partition: its generic plan is one table's, where the partitioned table's plans every
	// partition (paid by each connection on its first turn, and growing with the months kept). A
	// partition that is not there (dropped) falls back to the partitioned table.
	part := monthPartition("transfers", pr.lo, pr.hi.Add(time.Hour-time.Microsecond))
	if part != "" && !s.attached(ctx, part) {
		part = ""
	}
	read := func(table string) ([]TransferRow, error) {
		return s.pagePairRowsTransfers(query, f, p, pr, k.cmp, table)
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

// newestKeys are the SQL of entityPairNewestPage's keys for a pair row e: key, the latest (oldest
// first: earliest) its transfers in the window can be; sure, a time it surely has a transfer of
// the window at or beyond (NULL: none known); in, the condition leaving out pair rows wholly
// outside the window; dir, cmp and open the order, its comparison and its open end.
type newestKeys struct {
	key, sure, in, dir, cmp, open string
}

// newNewestKeys renders f's newestKeys (its window's bound becomes an argument of b).
//
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
func newNewestKeys(b *sqlb, f TransferFilter, asc bool) newestKeys {
	first, last := "coalesce(e.t_first, e.bucket)", "coalesce(e.t_last, e.bucket + interval '1 hour' - interval '1 microsecond')"
	hourEnd := "e.bucket + interval '1 hour' - interval '1 microsecond'"
	k := newestKeys{key: last, sure: "coalesce(e.t_last, e.bucket)", dir: "DESC", cmp: ">=", open: "'-infinity'"}
	if asc {
		k = newestKeys{key: first, sure: "coalesce(e.t_first, " + hourEnd + ")", dir: "ASC", cmp: "<=", open: "'infinity'"}
	}
	if t := f.TimeFrom; asc && !t.IsZero() {
		a := b.arg(t)
		k.key, k.in = "greatest("+k.key+", "+a+"::timestamptz)", " AND "+last+" >= "+a+"::timestamptz"
		k.sure = "CASE WHEN e.t_first IS NULL THEN CASE WHEN e.bucket >= " + a + "::timestamptz THEN " + hourEnd + " END WHEN e.t_first >= " +
			a + "::timestamptz THEN e.t_first ELSE e.t_last END"
	} else if t := f.TimeTo; !asc && !t.IsZero() {
		a := b.arg(t)
		k.key, k.in = "least("+k.key+", "+a+"::timestamptz)", " AND "+first+" <= "+a+"::timestamptz"
		k.sure = "CASE WHEN e.t_last IS NULL THEN CASE WHEN " + hourEnd + " <= " + a + "::timestamptz THEN e.bucket END WHEN e.t_last <= " +
			a + "::timestamptz THEN e.t_last ELSE e.t_first END"
	}
	return k
}

// pageQuery is how entityPairNewestPage runs its two reads. A page of the group's transfers by
// chain, token and time alone has one best plan whatever the values (the group's pair rows by hour;
// each pair row's transfers by its sender's index): its reads keep their generic plans. Ranges and
// side conditions stay planned with their values (a USD bound may be best read through
// entity_pair_rows_usd, a set hashed).
func (s *Reader) pageQuery(ctx context.Context, f TransferFilter) func(sql string, args []any) (pgx.Rows, error) {
	if !f.From.Active() && !f.To.Active() && !f.HasCP && !f.ranged() {
		return func(sql string, args []any) (pgx.Rows, error) { return s.db.QueryGeneric(ctx, sql, args...) }
	}
	return func(sql string, args []any) (pgx.Rows, error) { return s.db.Query(ctx, sql, db.Exec(args)...) }
}

// pagePairRows are the pair rows that can hold a first page (entityPairNewestPage). Pair rows of one
// known transfer (uid, migration 22) are read by the natural key (uids at uidTimes), the others
// through their sender's index (from, to, chain, token, buckets); the attributions of every
// pair row's addresses (allChains, allAddrs) are read beside the transfers (Page.Attributions).
type pagePairRows struct {
	from, to, chain, token []string
	buckets, uidTimes      []time.Time
	uids                   []pgtype.UUID
	allChains, allAddrs    []string
	lo, hi                 time.Time  // the first and last hour
	cut                    *time.Time // none: fewer than Limit pair rows with a sure time
}

// scanPagePairRows reads entityPairNewestPage's pair rows; pairUIDs is Options.PairUIDs.
func scanPagePairRows(rows pgx.Rows, pairUIDs bool) (pagePairRows, error) {
	defer rows.Close()
	var pr pagePairRows
	for rows.Next() {
		var fa, ta, c, tk string
		var bk time.Time
		var uid pgtype.UUID
		var tf *time.Time
		if err := rows.Scan(&fa, &ta, &c, &tk, &bk, &uid, &tf, &pr.cut); err != nil {
			return pr, fmt.Errorf("scan: %w", err)
		}
		pr.allChains, pr.allAddrs = append(pr.allChains, c, c), append(pr.allAddrs, fa, ta)
		if uid.Valid && tf != nil && pairUIDs {
			pr.uids, pr.uidTimes = append(pr.uids, uid), append(pr.uidTimes, *tf)
		} else {
			pr.from, pr.to, pr.chain, pr.token, pr.buckets = append(pr.from, fa), append(pr.to, ta), append(pr.chain, c), append(pr.token, tk), append(pr.buckets, bk)
		}
		if pr.lo.IsZero() || bk.Before(pr.lo) {
			pr.lo = bk
		}
		if bk.After(pr.hi) {
			pr.hi = bk
		}
	}
	return pr, rows.Err()
}

// pagePairRowsTransfers reads the page's transfers of pr from table (transfers.transfers or
// one of its partitions), at or beyond the cut (cmp), sorted and limited. The pair rows are a
// relation (their text in the transfers columns' collation, so each probe uses the index), and
// their hours' span parameters, by which the executor prunes the partitions.
func (s *Reader) pagePairRowsTransfers(query func(string, []any) (pgx.Rows, error), f TransferFilter, p Page, pr pagePairRows, cmp, table string) ([]TransferRow, error) {
	b := s.newb(sqlb{rows: true})
	e := `(SELECT u.f COLLATE "C" AS from_addr, u.t COLLATE "C" AS to_addr, u.c COLLATE "C" AS chain, u.k COLLATE "C" AS token, u.b AS bucket
  FROM unnest(` + b.arg(pr.from) + `::text[], ` + b.arg(pr.to) + `::text[], ` + b.arg(pr.chain) + `::text[], ` + b.arg(pr.token) + `::text[], ` +
		b.arg(pr.buckets) + `::timestamptz[]) u(f, t, c, k, b)) e`
	var atCut []string
	if pr.cut != nil {
		atCut = append(atCut, "t.block_time "+cmp+" "+b.arg(*pr.cut)+"::timestamptz")
	}
	probe := b.entityPairProbe(f, transferSelect, pr.lo, pr.hi, table, atCut...)
	k := `unnest(` + b.arg(pr.uids) + `::uuid[], ` + b.arg(pr.uidTimes) + `::timestamptz[]) k(uid, bt)`
	byKey := b.entityPairKeyProbe(f, transferSelect, pr.lo, pr.hi, table, atCut...)
	out, err := query(`SELECT `+transferSelectOuter+` FROM (SELECT t.* FROM `+k+` CROSS JOIN LATERAL `+byKey+` t
  UNION ALL SELECT t.* FROM `+e+` CROSS JOIN LATERAL `+probe+` t) u ORDER BY `+
		orderBy("time", p.SortDir)+fmt.Sprintf(" LIMIT %d", p.Limit), b.args)
	if err != nil {
		return nil, err
	}
	return scanTransfers(out) // an error of the statement may come with its rows
}

// entityPairCountsExact reports whether the pair rows of f's read count its transfers exactly, hour
// by hour: no value or USD range (a pair row's sums cannot decide one per transfer) and a window
// of whole hours (a cut hour's pair rows hold transfers outside it).
func entityPairCountsExact(f TransferFilter) bool {
	if f.ranged() {
		return false
	}
	whole := func(t time.Time) bool { return t.IsZero() || t.Equal(t.Truncate(time.Hour)) }
	return whole(f.TimeFrom) && (f.TimeTo.IsZero() || whole(f.TimeTo.Add(time.Microsecond)))
}

// entityPairPageSkipping reads a page at an offset without reading the transfers before it: the
// group's hours (newest or oldest first) with their transfer counts from the pair rows are read
// until they reach offset+limit; the hours wholly before the page are skipped by count, and
// only the transfers of the hours the page spans are fetched (through the sender's index),
// sorted and sliced. A page turn costs about one page, not offset+limit rows. Only for reads
// whose pair rows count transfers exactly (entityPairCountsExact).
func (s *Reader) entityPairPageSkipping(ctx context.Context, f TransferFilter, g string, p Page) ([]TransferRow, error) {
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
		rows, err := s.db.Query(ctx, `SELECT e.bucket, sum(e.n)::bigint FROM transfers.entity_pair_rows e WHERE `+strings.Join(b.entityPairConds(f, g), " AND ")+
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
	from := b.entityPairRows(f, g, transferSelect, lo, hi)
	out, err := s.db.Query(ctx, `SELECT `+transferSelectOuter+` FROM (SELECT t.* FROM `+from+`) u ORDER BY `+orderBy("time", p.SortDir)+
		fmt.Sprintf(" LIMIT %d OFFSET %d", p.Limit, int64(p.Offset)-skipped), db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("list transfers of %s: %w", g, err)
	}
	return scanTransfers(out)
}
