package read

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
)

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
// (descending), from the pair rollup for the whole hours of the window and from the rows for the
// hours it cuts. Addresses of the set itself are not counterparties.
func (s *Reader) Counterparties(ctx context.Context, f CounterpartyFilter) ([]Counterparty, error) {
	if f.Addrs.Empty() {
		return nil, nil
	}
	grp, err := s.liveGroup(ctx, f.Addrs)
	if err != nil {
		return nil, err
	}
	set := f.Addrs
	allTime := f.TimeFrom.IsZero() && f.TimeTo.IsZero() && len(f.TokenAddrs)+len(f.TokenIDs) == 0
	if grp != "" {
		// A live group: the listed addresses outside the group are added to it, and are not
		// counterparties.
		outside, err := s.outsideGroup(ctx, f.Addrs.Addrs, grp)
		if err != nil {
			return nil, err
		}
		set = Addrs(outside)
		if allTime && set.Empty() {
			return s.groupCounterparties(ctx, f, grp)
		}
	}
	b := s.newb(sqlb{})
	// The whole hours of the window from the rollups, the hours it cuts from the rows.
	c := cutWindow(f.TimeFrom, f.TimeTo, time.Hour)
	var arms []string
	if c.hasWhole {
		arms = b.rollupCounterpartyArms(f, c, grp, set, allTime)
	}
	cut, err := s.cutRows(ctx, b, f, c)
	if err != nil {
		return nil, err
	}
	arms = append(arms, cut...)
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

// rollupCounterpartyArms are the union arms (chain, cp, in_n, out_n, n, usd, value) of the
// counterparties of f.Addrs in the whole hours of c: live group grp's (groupCounterpartyArms) and
// those of the listed addresses set (outside the group; setCounterpartyArms).
func (b *sqlb) rollupCounterpartyArms(f CounterpartyFilter, c cut, grp string, set AddrSet, allTime bool) []string {
	tf := TransferFilter{Chains: f.Chains, TokenAddrs: f.TokenAddrs, TokenIDs: f.TokenIDs, TimeFrom: c.wFrom, TimeTo: c.wTo}
	and := ""
	if common := b.rollupConds(tf, true); len(common) > 0 {
		and = " AND " + strings.Join(common, " AND ")
	}
	var arms []string
	if grp != "" {
		arms = b.groupCounterpartyArms(f, grp, set, and, allTime)
	}
	if !set.Empty() {
		arms = append(arms, b.setCounterpartyArms(f, set, grp, and)...)
	}
	return arms
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

// cutRows are the union arms (chain, cp, in_n, out_n, n, usd, value) of the counterparties of
// f.Addrs in the parts of the hours window c cuts, from the rows: its transfers with flow in
// (the sender is the counterparty) and out (the recipient), as /transfers reads them.
func (s *Reader) cutRows(ctx context.Context, b *sqlb, f CounterpartyFilter, c cut) ([]string, error) {
	parts := c.parts
	if !c.hasWhole {
		parts = [][2]time.Time{{f.TimeFrom, f.TimeTo}} // at most two cut hours, read as one
	}
	var arms []string
	for _, p := range parts {
		for _, d := range []struct{ flow, sel string }{{"in", "chain, from_addr, 1, 0, 1, usd, value"}, {"out", "chain, to_addr, 0, 1, 1, usd, value"}} {
			if f.Flow != "either" && f.Flow != d.flow {
				continue
			}
			tf := TransferFilter{Base: f.Addrs, HasBase: true, Flow: d.flow, Chains: f.Chains, TokenAddrs: f.TokenAddrs, TokenIDs: f.TokenIDs,
				TimeFrom: p[0], TimeTo: p[1]}
			q, err := s.windowRows(ctx, b, tf)
			if err != nil {
				return nil, err
			}
			if q != "" {
				arms = append(arms, "SELECT "+d.sel+" FROM ("+q+") r")
			}
		}
	}
	return arms, nil
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
