package read

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/shopspring/decimal"
)

// A set's in, out and self sums from the address and group rollups: a base's histogram, Flow
// and Activity read them.

//go:embed sql/first_transfer.sql
var firstTransferSQL string

//go:embed sql/last_transfer.sql
var lastTransferSQL string

// flowSums are one bucket's (or one chain-day's) address rollup sums for a set of addresses,
// with the part that stayed inside the set.
type flowSums struct {
	inN, outN, selfN       int64
	inUSD, outUSD, selfUSD decimal.Decimal
}

// pick applies a flow: in and out leave out transfers inside the set.
func (s flowSums) pick(flow string) (int64, decimal.Decimal) {
	switch flow {
	case "in":
		return s.inN - s.selfN, s.inUSD.Sub(s.selfUSD)
	case "out":
		return s.outN - s.selfN, s.outUSD.Sub(s.selfUSD)
	case "self":
		return s.selfN, s.selfUSD
	case flowFrom:
		return s.outN, s.outUSD
	case flowTo:
		return s.inN, s.inUSD
	}
	return s.inN + s.outN - s.selfN, s.inUSD.Add(s.outUSD).Sub(s.selfUSD)
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
	q := `SELECT c, b, sum(i)::bigint, coalesce(sum(iu), 0)::numeric, sum(o)::bigint, coalesce(sum(ou), 0)::numeric, sum(x)::bigint, coalesce(sum(xu), 0)::numeric
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
		if err := rows.Scan(&c, &t, &fs.inN, num(&fs.inUSD), &fs.outN, num(&fs.outUSD), &fs.selfN, num(&fs.selfUSD)); err != nil {
			return nil, fmt.Errorf("scan address rollups: %w", err)
		}
		out[[2]string{c, t.UTC().Format(time.RFC3339)}] = fs
	}
	return out, rows.Err()
}

// FlowPoint is one chain-day of USD flow of a set of addresses, exact sums (converted
// once, where they are answered).
type FlowPoint struct {
	Chain   string
	Day     time.Time
	Inflow  decimal.Decimal
	Outflow decimal.Decimal
}

// Flow returns the daily USD inflow and outflow of addrs per chain, leaving out transfers
// between two of addrs, ordered by chain and day; a day the window cuts holds only the transfers
// inside the window (flowSums).
func (s *Reader) Flow(ctx context.Context, addrs AddrSet, chains []string, from, to time.Time) ([]FlowPoint, error) {
	if addrs.Empty() {
		return nil, nil
	}
	f := TransferFilter{Base: addrs, HasBase: true, Chains: chains, TimeFrom: from, TimeTo: to}
	days := map[[2]string]*flowDay{}
	if err := s.flowSums(ctx, f, Day, days); err != nil {
		return nil, err
	}
	var out []FlowPoint
	for k, d := range days {
		if d.inN == 0 && d.outN == 0 {
			continue
		}
		t, _ := time.Parse(time.RFC3339, k[1])
		out = append(out, FlowPoint{Chain: k[0], Day: t.UTC(), Inflow: d.in, Outflow: d.out})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Chain < out[j-1].Chain || out[j].Chain == out[j-1].Chain && out[j].Day.Before(out[j-1].Day)); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// flowDay is one chain-day's inflow and outflow of a set: counts and USD.
type flowDay struct {
	inN, outN int64
	in, out   decimal.Decimal
}

// addFlow adds an inflow and outflow to days under chain and the day of t.
func addFlow(days map[[2]string]*flowDay, chain string, t time.Time, inN, outN int64, in, out decimal.Decimal) {
	k := [2]string{chain, t.UTC().Truncate(24 * time.Hour).Format(time.RFC3339)}
	d := days[k]
	if d == nil {
		d = &flowDay{}
		days[k] = d
	}
	d.inN, d.outN, d.in, d.out = d.inN+inN, d.outN+outN, d.in.Add(in), d.out.Add(out)
}

// flowSums adds the in and out flow of f's base per chain and day over f's exact window to days:
// the whole buckets of g inside it from the rollups (setSums), each bucket it cuts from its whole
// hours (a day's) and the rows of the hours it cuts (rowsFlow).
func (s *Reader) flowSums(ctx context.Context, f TransferFilter, g string, days map[[2]string]*flowDay) error {
	c := cutWindow(f.TimeFrom, f.TimeTo, gran(g))
	if c.hasWhole {
		fw := f
		fw.TimeFrom, fw.TimeTo = c.wFrom, c.wTo
		sums, err := s.setSums(ctx, fw, g, true)
		if err != nil {
			return err
		}
		for k, fs := range sums {
			inN, in := fs.pick("in")
			outN, out := fs.pick("out")
			t, _ := time.Parse(time.RFC3339, k[1])
			addFlow(days, k[0], t, inN, outN, in, out)
		}
	}
	parts := c.parts
	if !c.hasWhole {
		parts = [][2]time.Time{{f.TimeFrom, f.TimeTo}} // at most two cut buckets, read as one
	}
	for _, p := range parts {
		fp := f
		fp.TimeFrom, fp.TimeTo = p[0], p[1]
		var err error
		if g == Day {
			err = s.flowSums(ctx, fp, Hour, days)
		} else {
			err = s.rowsFlow(ctx, fp, days)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rowsFlow adds the in and out flow of f's base per chain and day (f's window a part of an hour)
// from the rows, as /transfers reads flow=in and flow=out, to days.
func (s *Reader) rowsFlow(ctx context.Context, f TransferFilter, days map[[2]string]*flowDay) error {
	b := s.newb(sqlb{})
	var arms []string
	for _, d := range []struct{ flow, cols string }{{"in", "1, usd, 0, 0"}, {"out", "0, 0, 1, usd"}} {
		fd := f
		fd.Flow = d.flow
		q, err := s.windowRows(ctx, b, fd)
		if err != nil {
			return err
		}
		if q != "" {
			arms = append(arms, "SELECT chain, block_time, "+d.cols+" FROM ("+q+") r")
		}
	}
	if len(arms) == 0 {
		return nil
	}
	rows, err := s.db.Query(ctx, `SELECT chain, date_trunc('day', block_time, 'UTC'), sum(i)::bigint, sum(iu)::numeric, sum(o)::bigint, sum(ou)::numeric
FROM (`+strings.Join(arms, " UNION ALL ")+`) u(chain, block_time, i, iu, o, ou) GROUP BY 1, 2`, db.Exec(b.args)...)
	if err != nil {
		return fmt.Errorf("flow rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var chain string
		var t time.Time
		var d flowDay
		if err := rows.Scan(&chain, &t, &d.inN, num(&d.in), &d.outN, num(&d.out)); err != nil {
			return fmt.Errorf("scan flow rows: %w", err)
		}
		addFlow(days, chain, t, d.inN, d.outN, d.in, d.out)
	}
	return rows.Err()
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
	var volume decimal.Decimal
	for k, fs := range sums {
		n, usd := fs.pick("all")
		if n <= 0 {
			continue
		}
		a.TransferCount += n
		volume = volume.Add(usd)
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
	a.VolumeUSD = volume.InexactFloat64()
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
