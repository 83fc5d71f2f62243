package read

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/first_transfer.sql
var firstTransferSQL string

//go:embed sql/last_transfer.sql
var lastTransferSQL string

// Bucket is one histogram bucket.
type Bucket struct {
	Time  time.Time
	Count int64
	USD   float64
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

// aggArm renders "SELECT sel FROM table WHERE ..." for one arm (no order, no limit).
func (b *sqlb) aggArm(table, sel string, br branch, common []string) string {
	conds := append(append([]string(nil), common...), br.conds...)
	if br.drive != nil {
		conds = append([]string{b.member(br.driverCol, *br.drive)}, conds...)
	}
	w := ""
	if len(conds) > 0 {
		w = " WHERE " + strings.Join(conds, " AND ")
	}
	return "SELECT " + sel + " FROM " + table + w
}

// rollupConds are the chain, token and bucket-window conditions on a rollup table.
func (b *sqlb) rollupConds(f TransferFilter, tokenCols bool) []string {
	var c []string
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("chain", f.Chains))
	}
	if tokenCols {
		if tc := b.tokenCond([][2]string{{"token", "token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
			c = append(c, tc)
		}
	}
	if !f.TimeFrom.IsZero() {
		c = append(c, "bucket >= "+b.arg(f.TimeFrom))
	}
	if !f.TimeTo.IsZero() {
		c = append(c, "bucket <= "+b.arg(f.TimeTo))
	}
	return c
}

// Histogram buckets the transfers matching f by hour or day. The time window is widened to whole
// buckets. It reads rollups: per address (base, flow, chains, tokens), per sender and recipient
// pair (from, to, counterparties), per chain (no address filter). Value and USD ranges, which no
// rollup can answer, go through a live entity's pair rows (entityPairRangeHistogramSQL) or
// aggregate the matching rows themselves.
func (s *Reader) Histogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	f = sideAsBase(f)
	step := gran(g)
	if !f.TimeFrom.IsZero() {
		f.TimeFrom = f.TimeFrom.UTC().Truncate(step)
	}
	if !f.TimeTo.IsZero() {
		f.TimeTo = f.TimeTo.UTC().Truncate(step).Add(step - time.Microsecond)
	}
	switch {
	case f.ranged():
		return s.rangeHistogram(ctx, f, g)
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
	q := "SELECT b, sum(n), sum(usd)::float8 FROM (" + strings.Join(parts, " UNION ALL ") + ") u GROUP BY b HAVING sum(n) > 0 ORDER BY b"
	return s.buckets(ctx, q, b.args)
}

// chainHistogram is the histogram of a filter with no address set, from the per-chain rollup.
func (s *Reader) chainHistogram(ctx context.Context, f TransferFilter, g string) ([]Bucket, error) {
	b := s.newb(sqlb{})
	table := "chain_hourly"
	if g == Day {
		table = "chain_daily"
	}
	q := "SELECT date_trunc('" + g + "', bucket, 'UTC') AS b, sum(n), sum(usd)::float8 FROM transfers." + table + whereOf(b.rollupConds(f, true)) +
		" GROUP BY 1 HAVING sum(n) > 0 ORDER BY 1"
	return s.buckets(ctx, q, b.args)
}

// buckets runs a histogram query yielding (bucket, count, usd).
func (s *Reader) buckets(ctx context.Context, q string, args []any) ([]Bucket, error) {
	rows, err := s.db.Query(ctx, q, db.Exec(args)...)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	defer rows.Close()
	var out []Bucket
	for rows.Next() {
		var bk Bucket
		if err := rows.Scan(&bk.Time, &bk.Count, &bk.USD); err != nil {
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
	return "SELECT b, sum(n), sum(usd)::float8 FROM (" + strings.Join(parts, " UNION ALL ") + ") u GROUP BY b ORDER BY b"
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
			t.USD += float64(p.sign) * bk.USD
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

// flowSums are one bucket's (or one chain-day's) address rollup sums for a set of addresses,
// with the part that stayed inside the set.
type flowSums struct {
	inN, outN, selfN       int64
	inUSD, outUSD, selfUSD float64
}

// pick applies a flow: in and out leave out transfers inside the set.
func (s flowSums) pick(flow string) (int64, float64) {
	switch flow {
	case "in":
		return s.inN - s.selfN, s.inUSD - s.selfUSD
	case "out":
		return s.outN - s.selfN, s.outUSD - s.selfUSD
	case "self":
		return s.selfN, s.selfUSD
	case flowFrom:
		return s.outN, s.outUSD
	case flowTo:
		return s.inN, s.inUSD
	}
	return s.inN + s.outN - s.selfN, s.inUSD + s.outUSD - s.selfUSD
}

// setSums reads the in/out sums of the set f.Base, and the part that stayed inside it
// (transfers from one of its addresses to another), grouped by bucket (and chain when byChain).
// A set that is one live group (plus listed addresses) reads the group's rollups, plus the
// listed addresses outside it and the transfers between them and the group; any other set
// sums its addresses' rollups: daily from addr_daily, hourly from pair_hourly.
func (s *Reader) setSums(ctx context.Context, f TransferFilter, g string, byChain bool) (map[[2]string]flowSums, error) {
	grp, err := s.liveGroup(ctx, f.Base)
	if err != nil {
		return nil, err
	}
	set := f.Base
	if grp != "" {
		outside, err := s.outsideGroup(ctx, f.Base.Addrs, grp)
		if err != nil {
			return nil, err
		}
		set = Addrs(outside)
	}
	b := s.newb(sqlb{})
	key := "date_trunc('" + g + "', bucket, 'UTC')"
	chainKey := "''"
	if byChain {
		chainKey = "chain"
	}
	common := b.rollupConds(f, true)
	where := func(c ...string) string { return strings.Join(append(c, common...), " AND ") }
	sel := func(vals string) string { return "SELECT " + chainKey + " AS c, " + key + " AS b, " + vals }
	var arms []string
	if grp != "" {
		table := "grp_daily"
		if g == Hour {
			table = "grp_hourly"
		}
		arms = append(arms, sel("in_n, in_usd, out_n, out_usd, self_n, self_usd")+" FROM transfers."+table+" WHERE "+where("grp = "+b.arg(grp)))
	}
	if !set.Empty() {
		if g == Day {
			arms = append(arms, sel("in_n, in_usd, out_n, out_usd, 0, 0")+" FROM transfers.addr_daily WHERE "+where(b.member("address", set)))
		} else {
			arms = append(arms,
				sel("n, usd, 0, 0, 0, 0")+" FROM transfers.pair_hourly WHERE "+where(b.member("to_addr", set)),
				sel("0, 0, n, usd, 0, 0")+" FROM transfers.pair_hourly WHERE "+where(b.member("from_addr", set)))
		}
		arms = append(arms, sel("0, 0, 0, 0, n, usd")+" FROM transfers.pair_hourly WHERE "+where(b.member("from_addr", set), b.member("to_addr", set)))
		if grp != "" {
			// Transfers between the listed addresses and the group stay inside the set.
			arms = append(arms,
				sel("0, 0, 0, 0, n, usd")+" FROM transfers.pair_hourly WHERE "+where(b.member("from_addr", set), b.inGroup("to_addr", grp)),
				sel("0, 0, 0, 0, n, usd")+" FROM transfers.pair_hourly WHERE "+where(b.member("to_addr", set), b.inGroup("from_addr", grp)))
		}
	}
	if len(arms) == 0 {
		return map[[2]string]flowSums{}, nil
	}
	q := `SELECT c, b, sum(i)::bigint, coalesce(sum(iu), 0)::float8, sum(o)::bigint, coalesce(sum(ou), 0)::float8, sum(x)::bigint, coalesce(sum(xu), 0)::float8
FROM (` + strings.Join(arms, "\n  UNION ALL ") + `) u(c, b, i, iu, o, ou, x, xu) GROUP BY 1, 2`
	rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("address rollups: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]flowSums{}
	for rows.Next() {
		var c string
		var t time.Time
		var fs flowSums
		if err := rows.Scan(&c, &t, &fs.inN, &fs.inUSD, &fs.outN, &fs.outUSD, &fs.selfN, &fs.selfUSD); err != nil {
			return nil, fmt.Errorf("scan address rollups: %w", err)
		}
		out[[2]string{c, t.UTC().Format(time.RFC3339)}] = fs
	}
	return out, rows.Err()
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
		arms[i] = fmt.Sprintf("SELECT bucket, %d, %s, %s FROM %s", i, fs.n, fs.usd, fs.from)
	}
	rows, err := s.db.Query(ctx, "SELECT date_trunc('"+g+"', bucket, 'UTC'), i, sum(n)::bigint, coalesce(sum(usd), 0)::float8 FROM ("+
		strings.Join(arms, " UNION ALL ")+") u(bucket, i, n, usd) GROUP BY 1, 2", db.Exec(b.args)...)
	if err != nil {
		return nil, false, fmt.Errorf("group histogram: %w", err)
	}
	byTime, err := scanTermBuckets(rows, len(terms))
	if err != nil {
		return nil, false, err
	}
	var out []Bucket
	for t, v := range byTime {
		n, usd := sumTerms(terms, v.n, v.usd)
		if n > 0 {
			out = append(out, Bucket{Time: t.UTC(), Count: n, USD: usd})
		}
	}
	sortBuckets(out)
	return out, true, nil
}

// termValues are one bucket's figures, one per term.
type termValues struct {
	n   []int64
	usd []float64
}

// scanTermBuckets reads rows of (bucket, term index, count, usd) into each bucket's figures.
func scanTermBuckets(rows pgx.Rows, terms int) (map[time.Time]*termValues, error) {
	defer rows.Close()
	byTime := map[time.Time]*termValues{}
	for rows.Next() {
		var t time.Time
		var i int
		var n int64
		var usd float64
		if err := rows.Scan(&t, &i, &n, &usd); err != nil {
			return nil, fmt.Errorf("scan group histogram: %w", err)
		}
		v := byTime[t]
		if v == nil {
			v = &termValues{make([]int64, terms), make([]float64, terms)}
			byTime[t] = v
		}
		v.n[i], v.usd[i] = n, usd
	}
	return byTime, rows.Err()
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

// FlowPoint is one chain-day of USD flow of a set of addresses.
type FlowPoint struct {
	Chain   string
	Day     time.Time
	Inflow  float64
	Outflow float64
}

// Flow returns the daily USD inflow and outflow of addrs per chain, leaving out transfers
// between two of addrs, ordered by chain and day.
func (s *Reader) Flow(ctx context.Context, addrs AddrSet, chains []string, from, to time.Time) ([]FlowPoint, error) {
	if addrs.Empty() {
		return nil, nil
	}
	f := TransferFilter{Base: addrs, HasBase: true, Chains: chains}
	if !from.IsZero() {
		f.TimeFrom = from.UTC().Truncate(24 * time.Hour)
	}
	if !to.IsZero() {
		f.TimeTo = to.UTC()
	}
	sums, err := s.setSums(ctx, f, Day, true)
	if err != nil {
		return nil, err
	}
	var out []FlowPoint
	for k, fs := range sums {
		_, in := fs.pick("in")
		_, outUSD := fs.pick("out")
		inN, _ := fs.pick("in")
		outN, _ := fs.pick("out")
		if inN == 0 && outN == 0 {
			continue
		}
		t, _ := time.Parse(time.RFC3339, k[1])
		out = append(out, FlowPoint{Chain: k[0], Day: t.UTC(), Inflow: in, Outflow: outUSD})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Chain < out[j-1].Chain || out[j].Chain == out[j-1].Chain && out[j].Day.Before(out[j-1].Day)); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// CounterpartyFilter selects the counterparties of a set of addresses.
type CounterpartyFilter struct {
	Addrs      AddrSet
	Flow       string // in, out, either
	Chains     []string
	TokenAddrs []string
	TokenIDs   []string
	TimeFrom   time.Time
	TimeTo     time.Time
	ValueGte   *float64
	ValueLte   *float64
	USDGte     *float64
	USDLte     *float64
	Limit      int // per chain
}

// Counterparty is one counterparty's aggregates on one chain.
type Counterparty struct {
	Chain   string
	Address string
	In, Out bool // whether value came from it / went to it
	Count   int64
	USD     float64
}

// Counterparties returns, per chain, the top counterparties of f.Addrs by aggregated USD
// (descending), from the pair rollup. Addresses of the set itself are not counterparties.
func (s *Reader) Counterparties(ctx context.Context, f CounterpartyFilter) ([]Counterparty, error) {
	if f.Addrs.Empty() {
		return nil, nil
	}
	b := s.newb(sqlb{})

	tf := TransferFilter{Chains: f.Chains, TokenAddrs: f.TokenAddrs, TokenIDs: f.TokenIDs}
	if !f.TimeFrom.IsZero() {
		tf.TimeFrom = f.TimeFrom.UTC().Truncate(time.Hour)
	}
	tf.TimeTo = f.TimeTo
	common := b.rollupConds(tf, true)
	and := ""
	if len(common) > 0 {
		and = " AND " + strings.Join(common, " AND ")
	}
	grp, err := s.liveGroup(ctx, f.Addrs)
	if err != nil {
		return nil, err
	}
	set := f.Addrs
	var arms []string
	if grp != "" {
		// A live group: the listed addresses outside the group are added below, and are not
		// counterparties.
		outside, err := s.outsideGroup(ctx, f.Addrs.Addrs, grp)
		if err != nil {
			return nil, err
		}
		set = Addrs(outside)
		allTime := f.TimeFrom.IsZero() && f.TimeTo.IsZero() && len(f.TokenAddrs)+len(f.TokenIDs) == 0
		if allTime && set.Empty() {
			return s.groupCounterparties(ctx, f, grp)
		}
		arms = b.groupCounterpartyArms(f, grp, set, and, allTime)
	}
	if !set.Empty() {
		arms = append(arms, b.setCounterpartyArms(f, set, grp, and)...)
	}
	if len(arms) == 0 {
		return nil, nil
	}
	ranges := TransferFilter{USDGte: f.USDGte, USDLte: f.USDLte, ValueGte: f.ValueGte, ValueLte: f.ValueLte}
	having := append(b.rangeConds(ranges, "sum(usd)", "sum(value)"), "sum(n) > 0")
	q := `WITH g AS (
  SELECT chain, cp, sum(in_n) > 0 AS has_in, sum(out_n) > 0 AS has_out, sum(n) AS n, sum(usd) AS usd
  FROM (` + strings.Join(arms, " UNION ALL ") + `) p(chain, cp, in_n, out_n, n, usd, value) GROUP BY cp, chain HAVING ` + strings.Join(having, " AND ") + `
), r AS (SELECT *, row_number() OVER (PARTITION BY chain ORDER BY usd DESC, cp) AS rn FROM g)
SELECT chain, cp, has_in, has_out, n, usd::float8 FROM r WHERE rn <= ` + b.arg(f.Limit) + ` ORDER BY chain, usd DESC, cp`
	rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("counterparties: %w", err)
	}
	defer rows.Close()
	var out []Counterparty
	for rows.Next() {
		var c Counterparty
		if err := rows.Scan(&c.Chain, &c.Address, &c.In, &c.Out, &c.Count, &c.USD); err != nil {
			return nil, fmt.Errorf("scan counterparty: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// groupCounterpartyArms are the union arms (chain, cp, in_n, out_n, n, usd, value) of live
// group grp's counterparties: its all-time counterparty rollup (allTime: no window, no token
// filter; and then holds only the chain condition), or its pair rows. The addresses of set
// (listed beside the group) are not counterparties.
func (b *sqlb) groupCounterpartyArms(f CounterpartyFilter, grp string, set AddrSet, and string, allTime bool) []string {
	ga := b.arg(grp)
	notListed := func(col string) string {
		if set.Empty() {
			return ""
		}
		return " AND " + b.notMember(col, set)
	}
	if allTime {
		return []string{`SELECT chain, cp, ` + cpColumns[f.Flow] + ` FROM transfers.grp_cp WHERE grp = ` + ga + and + notListed("cp")}
	}
	var arms []string
	if f.Flow != "in" {
		arms = append(arms, `SELECT e.chain, e.to_addr AS cp, 0, e.n, e.n, e.usd, e.value FROM transfers.entity_pair_rows e
				  WHERE e.grp = `+ga+` AND e.side = 1`+and+notListed("e.to_addr"))
	}
	if f.Flow != "out" {
		arms = append(arms, `SELECT e.chain, e.from_addr AS cp, e.n, 0, e.n, e.usd, e.value FROM transfers.entity_pair_rows e
				  WHERE e.grp = `+ga+` AND e.side = 2`+and+notListed("e.from_addr"))
	}
	return arms
}

// setCounterpartyArms are the union arms of the counterparties of listed addresses set, from
// the pair rollup: the set's own addresses, and those of live group grp (when set is listed
// beside it), are not counterparties.
func (b *sqlb) setCounterpartyArms(f CounterpartyFilter, set AddrSet, grp, and string) []string {
	excl := func(col string) string {
		if grp == "" {
			return ""
		}
		return " AND NOT " + b.inGroup(col, grp)
	}
	var arms []string
	if f.Flow != "in" {
		arms = append(arms, `SELECT chain, to_addr AS cp, 0, n, n, usd, value FROM transfers.pair_hourly
			  WHERE `+b.member("from_addr", set)+` AND `+b.notMember("to_addr", set)+and+excl("to_addr"))
	}
	if f.Flow != "out" {
		arms = append(arms, `SELECT chain, from_addr AS cp, n, 0, n, usd, value FROM transfers.pair_hourly
			  WHERE `+b.member("to_addr", set)+` AND `+b.notMember("from_addr", set)+and+excl("from_addr"))
	}
	return arms
}

// cpColumns are grp_cp's in_n, out_n, n, usd and value for a counterparty flow.
var cpColumns = map[string]string{
	"in":     "in_n, 0, in_n, in_usd, in_value",
	"out":    "0, out_n, out_n, out_usd, out_value",
	"either": "in_n, out_n, in_n + out_n, in_usd + out_usd, in_value + out_value",
}

// groupCounterparties reads the all-time counterparties of live group g from grp_cp: one row per
// chain and counterparty, so the top ones per chain need no aggregation. Each chain's rows are
// read on their own (the chains by a skip scan of the key, or the ones asked for) and only its
// top ones kept, rather than the group's rows read once into a CTE that each chain then scans
// whole.
func (s *Reader) groupCounterparties(ctx context.Context, f CounterpartyFilter, g string) ([]Counterparty, error) {
	b := s.newb(sqlb{})
	ga := b.arg(g)
	chains := `WITH RECURSIVE ch AS (
  (SELECT chain FROM transfers.grp_cp WHERE grp = ` + ga + ` ORDER BY chain LIMIT 1)
  UNION ALL
  SELECT (SELECT c.chain FROM transfers.grp_cp c WHERE c.grp = ` + ga + ` AND c.chain > ch.chain ORDER BY c.chain LIMIT 1)
  FROM ch WHERE ch.chain IS NOT NULL
)`
	if len(f.Chains) > 0 {
		// DISTINCT: the parser drops a chain named twice; a store caller might not.
		chains = `WITH ch AS (SELECT DISTINCT c COLLATE "C" AS chain FROM unnest(` + b.arg(f.Chains) + `::text[]) c)`
	}
	conds := []string{"n > 0"}
	for _, r := range []struct {
		cond string
		v    *float64
	}{{"usd >=", f.USDGte}, {"usd <=", f.USDLte}, {"value >=", f.ValueGte}, {"value <=", f.ValueLte}} {
		if r.v != nil {
			conds = append(conds, r.cond+" "+b.arg(*r.v))
		}
	}
	q := chains + `
SELECT x.chain, x.cp, x.has_in, x.has_out, x.n, x.usd::float8 FROM ch CROSS JOIN LATERAL (
  SELECT chain, cp, in_n > 0 AS has_in, out_n > 0 AS has_out, n, usd FROM (
    SELECT chain, cp, ` + cpColumns[f.Flow] + ` FROM transfers.grp_cp WHERE grp = ` + ga + ` AND chain = ch.chain
  ) c(chain, cp, in_n, out_n, n, usd, value)
  WHERE ` + strings.Join(conds, " AND ") + ` ORDER BY usd DESC, cp LIMIT ` + b.arg(f.Limit) + `) x
ORDER BY x.chain, x.usd DESC, x.cp` // the skip scan's last row (no chain) matches no row
	rows, err := s.db.Query(ctx, q, db.Exec(b.args)...)
	if err != nil {
		return nil, fmt.Errorf("counterparties of %s: %w", g, err)
	}
	defer rows.Close()
	var out []Counterparty
	for rows.Next() {
		var c Counterparty
		if err := rows.Scan(&c.Chain, &c.Address, &c.In, &c.Out, &c.Count, &c.USD); err != nil {
			return nil, fmt.Errorf("scan counterparty: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Activity sums a set of addresses' transfers: USD volume and count (each transfer once, even
// between two of them) and the times of the first and last.
type Activity struct {
	VolumeUSD     float64
	TransferCount int64
	First, Last   *time.Time
}

// Activity reads the activity of addrs from the daily rollups; the first and last transfer
// times are then read from the rows of the first and last active day only.
func (s *Reader) Activity(ctx context.Context, addrs []string) (Activity, error) {
	var a Activity
	if len(addrs) == 0 {
		return a, nil
	}
	sums, err := s.setSums(ctx, TransferFilter{Base: Addrs(addrs), HasBase: true}, Day, false)
	if err != nil {
		return a, err
	}
	var first, last time.Time
	for k, fs := range sums {
		n, usd := fs.pick("all")
		if n <= 0 {
			continue
		}
		a.TransferCount += n
		a.VolumeUSD += usd
		t, _ := time.Parse(time.RFC3339, k[1])
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if a.TransferCount == 0 {
		return a, nil
	}
	transferAt := func(day time.Time, sql string) (*time.Time, error) {
		var t *time.Time
		err := s.db.QueryRow(ctx, sql, addrs, day, day.Add(24*time.Hour)).Scan(&t)
		if t != nil {
			u := t.UTC()
			t = &u
		}
		return t, err
	}
	if a.First, err = transferAt(first, firstTransferSQL); err != nil {
		return a, fmt.Errorf("first transfer: %w", err)
	}
	if a.Last, err = transferAt(last, lastTransferSQL); err != nil {
		return a, fmt.Errorf("last transfer: %w", err)
	}
	return a, nil
}
