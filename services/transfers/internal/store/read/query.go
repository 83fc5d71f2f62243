package read

import (
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/transactions_by_hash.sql
var transactionsByHashSQL string

// MaxCount caps the match count of list queries.
const MaxCount = 10000

// AddrFilter constrains one side (sender or recipient) of a row.
type AddrFilter struct {
	In    AddrSet // the side must be one of these, when Only is set
	Only  bool    // In applies (an empty In then matches nothing)
	NotIn AddrSet // the side must be none of these
}

// Active reports whether the filter constrains anything.
func (f AddrFilter) Active() bool { return f.Only || !f.NotIn.Empty() }

// TransferFilter is a resolved /transfers filter: every reference turned into an address set.
type TransferFilter struct {
	Base           AddrSet
	HasBase        bool
	Flow           string // in, out, self, all
	Counterparties AddrSet
	HasCP          bool
	From, To       AddrFilter
	TokenAddrs     []string
	TokenIDs       []string
	Chains         []string // empty: all
	TimeFrom       time.Time
	TimeTo         time.Time
	ValueGte       *float64
	ValueLte       *float64
	USDGte         *float64
	USDLte         *float64

	// sparseSides: the from/to conditions on a live entity's pair rows (entityPairSidePlan) match
	// fewer than a page's worth of transfers (counted), so a page reads every pair row anyway
	// and the sets are hashed once rather than probed per pair row (entityPairMember).
	sparseSides bool
	// typed: which of the from/to sets of a read of a live entity's pair rows (entityPairSidePlan)
	// are entity types whose groups are all live; a pair row's from_t and to_t decide them.
	typed typedSides
}

// typedSides flags the sets of a TransferFilter's From and To that are live entity types.
type typedSides struct{ fromIn, fromNot, toIn, toNot bool }

// ranged reports whether f has a value or USD range, which no rollup sums per transfer.
func (f TransferFilter) ranged() bool {
	return f.ValueGte != nil || f.ValueLte != nil || f.USDGte != nil || f.USDLte != nil
}

// Page orders and slices a list.
type Page struct {
	SortKey string // time, value, usd
	SortDir string // desc, asc
	Limit   int
	Offset  int
	// Attributions asks PageTransfers for the attributions of the addresses the page's
	// transfers are among, read beside the transfers where the plan knows those addresses
	// before it reads them (entityPairNewestPage: its pair rows' senders and recipients), so a caller
	// rendering the page need not read them after it.
	Attributions bool
	// NoCount reads the page without its count (Count 0): the caller knows it (a cursor page
	// carries it, app/cursor.go), and a count read beside the page holds the page until it ends.
	// A plan whose page needs the count first still reads it.
	NoCount bool

	beside *besideRead // the read Attributions asked for; nil: none
}

// sqlb collects positional arguments.
type sqlb struct {
	rows     bool // querying the partitioned chain tables, not rollups
	counting bool // a count over every match rather than a page
	args     []any

	lateralMax int // Options.LateralMax
	joinMax    int // Options.PairJoinMax
}

// newb is b with the store's plan thresholds.
func (s *Reader) newb(b sqlb) *sqlb {
	b.lateralMax, b.joinMax = s.opt.LateralMax, s.opt.PairJoinMax
	return &b
}

func (b *sqlb) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

// anyOf is "col is one of vals" for short lists (chains, tokens).
func (b *sqlb) anyOf(col string, vals []string) string {
	return col + " = ANY(" + b.arg(vals) + "::text[])"
}

// branch is one arm of a union: rows whose driver column is in drive, plus conditions.
type branch struct {
	driverCol string
	drive     *AddrSet // nil: no driving address set
	conds     []string
}

func (b *sqlb) side(col string, f AddrFilter) []string {
	var c []string
	if f.Only {
		c = append(c, b.member(col, f.In))
	}
	if !f.NotIn.Empty() {
		c = append(c, b.notMember(col, f.NotIn))
	}
	return c
}

// flowBranches splits base/flow/counterparties into union arms over the sender and recipient
// columns. in and out exclude transfers inside base (self).
func (b *sqlb) flowBranches(fromCol, toCol string, base AddrSet, hasBase bool, flow string, cp AddrSet, hasCP bool) []branch {
	if !hasBase {
		return []branch{{}}
	}
	cpOn := func(col string) []string {
		if !hasCP {
			return nil
		}
		return []string{b.member(col, cp)}
	}
	switch flow {
	case "out":
		return []branch{{driverCol: fromCol, drive: &base, conds: append([]string{b.notMember(toCol, base)}, cpOn(toCol)...)}}
	case "in":
		return []branch{{driverCol: toCol, drive: &base, conds: append([]string{b.notMember(fromCol, base)}, cpOn(fromCol)...)}}
	case "self":
		c := []string{b.member(toCol, base)}
		if hasCP {
			c = append(c, "("+b.member(fromCol, cp)+" OR "+b.member(toCol, cp)+")")
		}
		return []branch{{driverCol: fromCol, drive: &base, conds: c}}
	case flowFrom:
		return []branch{{driverCol: fromCol, drive: &base, conds: cpOn(toCol)}}
	case flowTo:
		return []branch{{driverCol: toCol, drive: &base, conds: cpOn(fromCol)}}
	}
	return []branch{
		{driverCol: fromCol, drive: &base, conds: cpOn(toCol)},
		{driverCol: toCol, drive: &base, conds: append([]string{b.notMember(fromCol, base)}, cpOn(fromCol)...)},
	}
}

func (b *sqlb) tokenCond(cols [][2]string, addrs, ids []string) string {
	if len(addrs) == 0 && len(ids) == 0 {
		return ""
	}
	var or []string
	for _, c := range cols {
		if len(addrs) > 0 {
			or = append(or, b.anyOf(c[0], addrs))
		}
		if len(ids) > 0 {
			or = append(or, b.anyOf(c[1], ids))
		}
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// transferConds are the conditions every arm shares.
func (b *sqlb) transferConds(f TransferFilter, timeCol string) []string {
	var c []string
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("chain", f.Chains))
	}
	if tc := b.tokenCond([][2]string{{"token", "token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
		c = append(c, tc)
	}
	if !f.TimeFrom.IsZero() {
		c = append(c, timeCol+" >= "+b.arg(f.TimeFrom))
	}
	if !f.TimeTo.IsZero() {
		c = append(c, timeCol+" <= "+b.arg(f.TimeTo))
	}
	if f.ValueGte != nil {
		c = append(c, "unit_value >= "+b.arg(*f.ValueGte))
	}
	if f.ValueLte != nil {
		c = append(c, "unit_value <= "+b.arg(*f.ValueLte))
	}
	if f.USDGte != nil {
		c = append(c, "usd >= "+b.arg(*f.USDGte))
	}
	if f.USDLte != nil {
		c = append(c, "usd <= "+b.arg(*f.USDLte))
	}
	c = append(c, b.side("from_addr", f.From)...)
	c = append(c, b.side("to_addr", f.To)...)
	return c
}

func orderBy(key, dir string) string {
	col := map[string]string{"time": "block_time", "value": "unit_value", "usd": "usd"}[key]
	if dir == "asc" {
		if key == "usd" {
			return col + " ASC NULLS FIRST, chain ASC, id ASC"
		}
		return col + " ASC, chain ASC, id ASC"
	}
	if key == "usd" {
		return col + " DESC NULLS LAST, chain DESC, id DESC"
	}
	return col + " DESC, chain DESC, id DESC"
}

// empty reports whether an arm can match nothing (a driving or required set is empty).
func (br branch) empty() bool { return br.drive != nil && br.drive.Empty() }

// armSQL renders one arm selecting cols from table, ordered and limited.
func (b *sqlb) armSQL(table, cols string, br branch, common []string, order string, limit int) string {
	conds := append(append([]string(nil), common...), br.conds...)
	where := func(extra string) string {
		all := conds
		if extra != "" {
			all = append([]string{extra}, conds...)
		}
		if len(all) == 0 {
			return ""
		}
		return " WHERE " + strings.Join(all, " AND ")
	}
	lim := ""
	if limit > 0 {
		lim = fmt.Sprintf(" LIMIT %d", limit)
	}
	if br.drive == nil {
		return "SELECT " + cols + " FROM " + table + where("") + " ORDER BY " + order + lim
	}
	// A page by USD reads its keys from index entries for the whole set at once (keyFirstSQL):
	// read address by address, each would walk or sort on its own.
	keyFirst := table == "transfers.transfers" && limit > 0 && strings.HasPrefix(order, "usd ")
	if br.drive.Size > 1 && br.drive.Size <= b.lateralMax && limit > 0 && !keyFirst {
		return "SELECT x.* FROM (SELECT DISTINCT a FROM (" + b.source(*br.drive) + ") s(a)) d(a) CROSS JOIN LATERAL (SELECT " + cols + " FROM " + table +
			where(br.driverCol+" = d.a") + " ORDER BY " + order + lim + ") x"
	}
	if keyFirst {
		return keyFirstSQL(table, cols, where(b.member(br.driverCol, *br.drive)), order, limit)
	}
	return "SELECT " + cols + " FROM " + table + where(b.member(br.driverCol, *br.drive)) + " ORDER BY " + order + lim
}

// keyFirstSQL renders an arm of addresses' transfers sorted by USD (where is its WHERE clause,
// order the full sort) in two steps: the natural keys of its first limit rows by USD alone,
// read from index entries (the addresses' (address, time) entries carry usd, block_time and
// uid: read and sorted, they answer without the heap; or the global usd index walked with
// the addresses tested), then those rows, with every row whose USD ties the last key's (the
// tie-breakers chain and id are in no index), sorted by the full order. Before, the rows were
// read from the heap for every index entry the plan passed; with no per-address usd index
// (migration 21) that was each of a busy address's transfers, or each transfer the global walk
// passed before it had a page.
func keyFirstSQL(table, cols, where, order string, limit int) string {
	lead, and := "usd DESC NULLS LAST", " AND "
	if strings.HasPrefix(order, "usd ASC") {
		lead = "usd ASC NULLS FIRST"
	}
	if where == "" {
		where, and = " WHERE ", ""
	}
	return fmt.Sprintf(`SELECT %[1]s FROM %[2]s WHERE (block_time, uid) IN (
  WITH k AS MATERIALIZED (SELECT block_time, uid, usd FROM %[2]s%[3]s ORDER BY %[4]s LIMIT %[5]d),
  last AS MATERIALIZED (SELECT usd FROM k ORDER BY %[4]s OFFSET %[6]d LIMIT 1)
  SELECT block_time, uid FROM k
  UNION SELECT block_time, uid FROM %[2]s%[3]s%[7]susd = (SELECT usd FROM last)
  UNION SELECT block_time, uid FROM %[2]s%[3]s%[7]susd IS NULL AND EXISTS (SELECT FROM last WHERE usd IS NULL))
ORDER BY %[8]s LIMIT %[5]d`, cols, table, where, lead, limit, limit-1, and, order)
}

// countSQL renders a capped count over the arms.
func (b *sqlb) countSQL(table string, arms []branch, common []string) string {
	var parts []string
	for _, br := range arms {
		if br.empty() {
			continue
		}
		conds := append(append([]string(nil), common...), br.conds...)
		if br.drive != nil {
			conds = append([]string{b.member(br.driverCol, *br.drive)}, conds...)
		}
		w := ""
		if len(conds) > 0 {
			w = " WHERE " + strings.Join(conds, " AND ")
		}
		parts = append(parts, fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM %s%s LIMIT %d) c)", table, w, MaxCount))
	}
	if len(parts) == 0 {
		return "SELECT 0"
	}
	return "SELECT least(" + strings.Join(parts, " + ") + fmt.Sprintf(", %d)", MaxCount)
}

const transferSelect = `chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr,
 token, token_id, token_name, token_symbol, token_decimals, amount::text, unit_value, usd, type, from_is_contract, to_is_contract`

func scanTransfers(rows pgx.Rows) ([]TransferRow, error) {
	defer rows.Close()
	var out []TransferRow
	for rows.Next() {
		var r TransferRow
		var amount string
		if err := rows.Scan(&r.Chain, &r.ID, &r.TxHash, &r.BlockHash, &r.BlockNumber, &r.BlockTime, &r.TxIndex, &r.LogIndex,
			&r.From, &r.To, &r.Token, &r.TokenID, &r.TokenName, &r.TokenSymbol, &r.TokenDecimals, &amount, &r.UnitValue, &r.USD,
			&r.Type, &r.FromIsContract, &r.ToIsContract); err != nil {
			return nil, fmt.Errorf("scan transfer: %w", err)
		}
		r.Amount, _ = new(big.Int).SetString(amount, 10)
		r.BlockTime = r.BlockTime.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Flows the API has no name for: every transfer from the base (out and self), or to it (in and
// self). sideAsBase gives them to from=<entity> and to=<entity>.
const (
	flowFrom = "from"
	flowTo   = "to"
)

// oneEntity reports whether a from/to filter is exactly one operator entity (with its deposit
// addresses).
func oneEntity(a AddrFilter) bool {
	return a.Only && a.NotIn.Empty() && len(a.In.Entities) == 1 && len(a.In.Addrs)+len(a.In.Types)+len(a.In.Deposits) == 0
}

// sideAsBase restates from=<one entity> (or to=<one entity>), with no base, counterparties or
// other side, as a base of that entity with flow "from" ("to"): the same transfers, which the
// entity's plans then serve (its pair rows and rollups: a count or histogram with a USD range,
// a page by time). The entity's deposit addresses are part of both (AddrSet.Entities).
func sideAsBase(f TransferFilter) TransferFilter {
	if f.HasBase || f.HasCP {
		return f
	}
	switch {
	case oneEntity(f.From) && !f.To.Active():
		f.Base, f.HasBase, f.Flow, f.From = f.From.In, true, flowFrom, AddrFilter{}
	case oneEntity(f.To) && !f.From.Active():
		f.Base, f.HasBase, f.Flow, f.To = f.To.In, true, flowTo, AddrFilter{}
	}
	return f
}

// PageTransfers returns one page of transfers matching f and the capped match count, read by
// the plan planTransfers chooses (plans.go), with, when p.Attributions asks and the plan knew
// the page's addresses before it read the transfers, the attributions of those addresses read
// beside it.
func (s *Reader) PageTransfers(ctx context.Context, f TransferFilter, p Page) (TransferPage, error) {
	p.beside = nil
	if p.Attributions {
		p.beside = &besideRead{}
	}
	rows, n, err := s.listTransfers(ctx, f, p)
	attributed := p.beside.wait()
	if err != nil {
		return TransferPage{}, err
	}
	return TransferPage{Rows: rows, Count: n, Attributed: attributed}, nil
}

// listTransfers plans the read of f's page p, then runs the plan: its count beside its page, on
// a connection of its own (the count does not depend on the page), or first where the page
// needs it (countFirst).
func (s *Reader) listTransfers(ctx context.Context, f TransferFilter, p Page) ([]TransferRow, int, error) {
	plan, err := s.planTransfers(ctx, sideAsBase(f), p.SortKey)
	if err != nil {
		return nil, 0, err
	}
	if cf, ok := plan.(countFirst); ok && cf.countFirst(p) {
		n, err := plan.count(ctx)
		if err != nil {
			return nil, 0, err
		}
		if n <= p.Offset {
			return nil, n, nil
		}
		list, err := cf.pageCounted(ctx, p, n)
		return list, n, err
	}
	if p.NoCount {
		list, err := plan.page(ctx, p)
		return list, 0, err
	}
	type counted struct {
		n   int
		err error
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan counted, 1)
	go func() {
		n, err := plan.count(cctx)
		done <- counted{n, err}
	}()
	list, err := plan.page(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	c := <-done
	return list, c.n, c.err
}

// pairCountTransfers counts (capped) the transfers of f from live group g1 to g2: from the
// rollups when they answer it, else from the rows of the pair rollup's hours.
func (s *Reader) pairCountTransfers(ctx context.Context, f TransferFilter, g1, g2 string) (int, error) {
	count, ok, err := s.rollupCount(ctx, f)
	if err != nil || ok {
		return count, err
	}
	return s.pairCount(ctx, f, g1, g2)
}

// countTransfers counts (capped) the transfers matching f: from the rollups when they answer it,
// from a live group's entity pair rows (g, reading f as fe: see entityPairSidePlan), or from the
// rows; a count known to be at the cap (capCache) is not read again.
func (s *Reader) countTransfers(ctx context.Context, f, fe TransferFilter, g string) (int, error) {
	key, capped := capKey(f)
	if capped && s.caps.reached(key, f.Base.version, f.TimeTo) {
		return MaxCount, nil
	}
	count, ok, err := s.rollupCount(ctx, f)
	if err == nil && !ok {
		if g != "" {
			count, err = s.entityPairCount(ctx, fe, g)
		} else {
			count, err = s.rowCount(ctx, f)
		}
	}
	if err == nil && capped && count >= MaxCount {
		end := f.TimeTo
		// The first count found at the cap also finds when the base's count first reached it:
		// every later window end is the cap too, and a client paging back by timeLte asks for
		// ever earlier ends, each of which the cache would otherwise miss.
		c, ok, cerr := s.capCrossing(ctx, f)
		if cerr != nil {
			return 0, cerr
		}
		if ok && (end.IsZero() || c.Before(end)) {
			end = c
		}
		s.caps.record(key, f.Base.version, end)
	}
	return count, err
}

// capCrossing returns the end of the first day by whose end the transfers of f's base reach
// MaxCount (f's flow, chains and tokens), summed from the base's daily group rollups from its
// first day; ok is false when they never do, or when the base is not one live group or f has a
// value or USD range (no daily rollup counts those). Rows applied later only add to the days,
// so the day stays at or after the true one while the base's version stands.
func (s *Reader) capCrossing(ctx context.Context, f TransferFilter) (time.Time, bool, error) {
	if f.ranged() {
		return time.Time{}, false, nil
	}
	g, err := s.pureGroup(ctx, f.Base)
	if err != nil || g == "" {
		return time.Time{}, false, err
	}
	// The group's days oldest first, a chunk at a time (each four times the last), through
	// its rollup's key (group, day): a busy entity reaches the cap within its first days, and
	// summing all of its days at once scans the whole rollup.
	var sum int64
	var after time.Time
	for lim := 32; ; lim *= 4 {
		b := s.newb(sqlb{})
		c := append([]string{"grp = " + b.arg(g)}, b.keyConds(f.Chains, f.TokenAddrs, f.TokenIDs)...)
		if !after.IsZero() {
			c = append(c, "bucket > "+b.arg(after))
		}
		rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT bucket, sum(%s)::bigint FROM transfers.grp_daily WHERE %s GROUP BY bucket ORDER BY bucket LIMIT %d`,
			flowExpr(f.Flow), strings.Join(c, " AND "), lim), db.Exec(b.args)...)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("days of %s: %w", g, err)
		}
		read := 0
		var day time.Time
		for rows.Next() {
			var n int64
			if err := rows.Scan(&after, &n); err != nil {
				rows.Close()
				return time.Time{}, false, fmt.Errorf("days of %s: %w", g, err)
			}
			read++
			if sum += n; sum >= MaxCount && day.IsZero() {
				day = after
			}
		}
		if err := rows.Err(); err != nil {
			return time.Time{}, false, fmt.Errorf("days of %s: %w", g, err)
		}
		if !day.IsZero() {
			return day.UTC().Truncate(24 * time.Hour).Add(24*time.Hour - time.Microsecond), true, nil
		}
		if read < lim {
			return time.Time{}, false, nil
		}
	}
}

// rowCount counts (capped) the transfers matching f from the rows.
func (s *Reader) rowCount(ctx context.Context, f TransferFilter) (int, error) {
	cb := s.newb(sqlb{rows: true, counting: true})
	carms := cb.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP)
	ccommon := cb.transferConds(f, "block_time")
	var count int
	if err := s.db.QueryRow(ctx, cb.countSQL("transfers.transfers", carms, ccommon), db.Exec(cb.args)...).Scan(&count); err != nil {
		return 0, fmt.Errorf("count transfers: %w", err)
	}
	return count, nil
}

// listRows reads one page through the address and sort-key indexes.
func (s *Reader) listRows(ctx context.Context, f TransferFilter, p Page) ([]TransferRow, error) {
	b := s.newb(sqlb{rows: true})
	arms := b.flowBranches("from_addr", "to_addr", f.Base, f.HasBase, f.Flow, f.Counterparties, f.HasCP)
	order := orderBy(p.SortKey, p.SortDir)
	parts := b.segmentedArms("transfers.transfers", transferSelect, f.TimeFrom, f.TimeTo, p, func(from, to time.Time) ([]branch, []string) {
		fs := f
		fs.TimeFrom, fs.TimeTo = from, to
		return arms, b.transferConds(fs, "block_time")
	})
	if len(parts) == 0 {
		return nil, nil
	}
	q := "SELECT " + transferSelectOuter + " FROM (" + strings.Join(parts, " UNION ALL ") + ") u ORDER BY " + order +
		fmt.Sprintf(" LIMIT %d OFFSET %d", p.Limit, p.Offset)
	rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("list transfers: %w", err)
	}
	return scanTransfers(rows)
}

// segmentedArms renders the arms of a page of table over the window [from, to], one set per
// segment of the window (windowSegments): build gives the arms and shared conditions of a
// segment; a sliver is read by its other conditions and sorted.
func (b *sqlb) segmentedArms(table, cols string, from, to time.Time, p Page, build func(from, to time.Time) ([]branch, []string)) []string {
	order := orderBy(p.SortKey, p.SortDir)
	var parts []string
	for _, seg := range windowSegments(TransferFilter{TimeFrom: from, TimeTo: to}, p.SortKey) {
		arms, common := build(seg.from, seg.to)
		o := order
		if seg.sliver {
			o = sortedNotWalked(order)
		}
		for _, br := range arms {
			if !br.empty() {
				parts = append(parts, "("+b.armSQL(table, cols, br, common, o, p.Offset+p.Limit)+")")
			}
		}
	}
	return parts
}

// segment is a part of a list's time window; a sliver is read by time and sorted rather than
// walked in its partition's sort-key index.
type segment struct {
	from, to time.Time
	sliver   bool
}

// sliverShare is the largest share of a month a window's end may cover and still be read as a
// sliver.
const sliverShare = 32

// windowSegments splits f's window for a page sorted by USD or value. Such a page walks each
// monthly partition's sort-key index until it has enough rows inside the window; where the
// window only grazes a partition (it ends an hour into a month, or starts an hour before one
// ends) that walk passes nearly the whole partition before giving up (a week ending at
// midnight on the 1st, say). Those ends, under 1/32 of their month, become arms of
// their own read through the time (or address and time) indexes and sorted.
func windowSegments(f TransferFilter, sortKey string) []segment {
	whole := []segment{{from: f.TimeFrom, to: f.TimeTo}}
	if sortKey != "usd" && sortKey != "value" {
		return whole
	}
	monthOf := func(t time.Time) (time.Time, time.Time) {
		t = t.UTC()
		lo := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return lo, lo.AddDate(0, 1, 0)
	}
	from, to := f.TimeFrom, f.TimeTo
	if !from.IsZero() && !to.IsZero() && to.Sub(from) < 24*time.Hour {
		return []segment{{from: from, to: to, sliver: true}} // a short window is a sliver wherever it lies
	}
	var out []segment
	if !from.IsZero() {
		lo, hi := monthOf(from)
		if from.After(lo) && hi.Sub(from) < hi.Sub(lo)/sliverShare && (to.IsZero() || !to.Before(hi)) {
			out = append(out, segment{from: from, to: hi.Add(-time.Microsecond), sliver: true})
			from = hi
		}
	}
	var tail *segment
	if !to.IsZero() {
		lo, hi := monthOf(to)
		if to.Sub(lo) < hi.Sub(lo)/sliverShare && (from.IsZero() || from.Before(lo)) {
			tail = &segment{from: lo, to: to, sliver: true}
			to = lo.Add(-time.Microsecond)
		}
	}
	if from.IsZero() || to.IsZero() || !to.Before(from) {
		out = append(out, segment{from: from, to: to})
	}
	if tail != nil {
		out = append(out, *tail)
	}
	return out
}

// sortedNotWalked rewrites an ORDER BY on usd or unit_value so the planner cannot serve it from
// that column's index (an expression the index does not hold), leaving it to read the rows by
// their other conditions and sort them; ties and direction are unchanged.
func sortedNotWalked(order string) string {
	for _, col := range []string{"usd ", "unit_value "} {
		if strings.HasPrefix(order, col) {
			return "(" + strings.TrimSpace(col) + " + 0) " + strings.TrimPrefix(order, col)
		}
	}
	return order
}

// The outer select re-reads the arm columns; amount is already text there.
const transferSelectOuter = `chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr,
 token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract`

// TransfersOfTx returns a transaction's transfers on chain, in log order; times are the block
// times of the transaction's rows on that chain (the transfers are found through them).
func (s *Reader) TransfersOfTx(ctx context.Context, chain, hash string, times []time.Time) ([]TransferRow, error) {
	rows, err := s.db.Query(ctx, `SELECT `+transferSelect+` FROM transfers.transfers
		WHERE block_time = ANY($3) AND tx_hash = $1 AND chain = $2 ORDER BY log_index, id`, hash, chain, times)
	if err != nil {
		return nil, fmt.Errorf("transfers of %s: %w", hash, err)
	}
	return scanTransfers(rows)
}

// TransactionsByHash returns the transaction with hash on every chain it is stored on.
func (s *Reader) TransactionsByHash(ctx context.Context, hash string) ([]TransactionRow, error) {
	rows, err := s.db.Query(ctx, transactionsByHashSQL, hash)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: %w", hash, err)
	}
	defer rows.Close()
	var out []TransactionRow
	for rows.Next() {
		var r TransactionRow
		var value, gp, egp, fee string
		if err := rows.Scan(&r.Chain, &r.Hash, &r.BlockHash, &r.BlockNumber, &r.BlockTime, &r.TxIndex, &r.From, &r.To,
			&r.ContractCreated, &r.Nonce, &r.Success, &value, &r.ValueUSD, &r.GasUsed, &gp, &egp, &fee, &r.FeeUSD, &r.MethodID); err != nil {
			return nil, fmt.Errorf("scan transaction: %w", err)
		}
		r.Value, _ = new(big.Int).SetString(value, 10)
		r.GasPrice, _ = new(big.Int).SetString(gp, 10)
		r.EffectiveGasPrice, _ = new(big.Int).SetString(egp, 10)
		r.Fee, _ = new(big.Int).SetString(fee, 10)
		r.BlockTime = r.BlockTime.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// SwapFilter is a resolved /swaps filter.
type SwapFilter struct {
	Base       AddrSet
	HasBase    bool
	Flow       string // in (base received token1), out (base sent token0), self, all
	From, To   AddrFilter
	TokenAddrs []string
	TokenIDs   []string
	Chains     []string
	TimeFrom   time.Time
	TimeTo     time.Time
	USDGte     *float64
	USDLte     *float64
	// The filters of swapfilters.go.
	Senders, Receivers                         AddrFilter
	Counterparties                             AddrSet
	HasCP                                      bool
	Protocols                                  []string
	Value0Gte, Value0Lte, Value1Gte, Value1Lte *float64
}

const swapSelect = `chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver,
 token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0::text AS amount0,
 token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1::text AS amount1, usd, valid, protocol`

const swapSelectOuter = `chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver,
 token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0,
 token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol`

// swapArms are the arms of a /swaps read: the base's sender and receiver indexes drive them, one
// arm per side the flow names; in and out keep the rows whose token moved the flow's way. A
// swap's amounts are the pool's (positive what it received).
func (b *sqlb) swapArms(f *SwapFilter) []branch {
	switch {
	case !f.HasBase:
		return []branch{{}}
	case f.Flow == "in":
		// Base received token1: the pool paid it out, so its stored amount1 is negative.
		return []branch{{driverCol: "receiver", drive: &f.Base, conds: []string{"amount1 < 0"}}}
	case f.Flow == "out":
		// Base sent token0: the pool received it, so its stored amount0 is positive.
		return []branch{{driverCol: "sender", drive: &f.Base, conds: []string{"amount0 > 0"}}}
	case f.Flow == "self":
		return []branch{{driverCol: "sender", drive: &f.Base, conds: []string{b.member("receiver", f.Base)}}}
	default:
		return []branch{{driverCol: "sender", drive: &f.Base}, {driverCol: "receiver", drive: &f.Base, conds: []string{b.notMember("sender", f.Base)}}}
	}
}

// ListSwaps returns one page of swaps matching f and the capped match count.
func (s *Reader) ListSwaps(ctx context.Context, f SwapFilter, p Page) ([]SwapRow, int, error) {
	build := func(b *sqlb, from, to time.Time) ([]branch, []string) {
		arms := b.swapArms(&f)
		var c []string
		if len(f.Chains) > 0 {
			c = append(c, b.anyOf("chain", f.Chains))
		}
		if tc := b.tokenCond([][2]string{{"token0", "token0_id"}, {"token1", "token1_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
			c = append(c, tc)
		}
		if !from.IsZero() {
			c = append(c, "block_time >= "+b.arg(from))
		}
		if !to.IsZero() {
			c = append(c, "block_time <= "+b.arg(to))
		}
		if f.USDGte != nil {
			c = append(c, "usd >= "+b.arg(*f.USDGte))
		}
		if f.USDLte != nil {
			c = append(c, "usd <= "+b.arg(*f.USDLte))
		}
		c = append(c, b.side("sender", f.From)...)
		c = append(c, b.side("receiver", f.To)...)
		c = append(c, b.swapExtras(f)...)
		return arms, c
	}
	b := s.newb(sqlb{rows: true})
	order := orderBy(p.SortKey, p.SortDir)
	table, cols := swapSource(p.SortKey)
	parts := b.segmentedArms(table, cols, f.TimeFrom, f.TimeTo, p, func(from, to time.Time) ([]branch, []string) {
		return build(b, from, to)
	})
	if len(parts) == 0 {
		return nil, 0, nil
	}
	q := "SELECT " + swapSelectOuter + " FROM (" + strings.Join(parts, " UNION ALL ") + ") u ORDER BY " + order +
		fmt.Sprintf(" LIMIT %d OFFSET %d", p.Limit, p.Offset)
	rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list swaps: %w", err)
	}
	defer rows.Close()
	var out []SwapRow
	for rows.Next() {
		var r SwapRow
		var a0, a1 string
		if err := rows.Scan(&r.Chain, &r.ID, &r.TxHash, &r.BlockHash, &r.BlockNumber, &r.BlockTime, &r.LogIndex, &r.Contract,
			&r.Sender, &r.Receiver, &r.Token0, &r.Token0ID, &r.Token0Name, &r.Token0Symbol, &r.Token0Decimals, &a0,
			&r.Token1, &r.Token1ID, &r.Token1Name, &r.Token1Symbol, &r.Token1Decimals, &a1, &r.USD, &r.Valid, &r.Protocol); err != nil {
			return nil, 0, fmt.Errorf("scan swap: %w", err)
		}
		r.Amount0, _ = new(big.Int).SetString(a0, 10)
		r.Amount1, _ = new(big.Int).SetString(a1, 10)
		r.BlockTime = r.BlockTime.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list swaps: %w", err)
	}
	cb := s.newb(sqlb{rows: true, counting: true})
	carms, ccommon := build(cb, f.TimeFrom, f.TimeTo)
	var count int
	if err := s.db.QueryRow(ctx, cb.countSQL("transfers.swaps", carms, ccommon), db.Exec(cb.args)...).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("count swaps: %w", err)
	}
	return out, count, nil
}
