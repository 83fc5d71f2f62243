package app

import (
	"cmp"
	"context"
	"iter"
	"math"
	"slices"
	"time"
)

// OrderByAggs are the /token/top orderByAgg values.
var OrderByAggs = []string{"volume", "inflow", "outflow", "volumeDex", "volumeCex", "inflowDex", "inflowCex",
	"outflowDex", "outflowCex", "netflowDex", "netflowCex", "netflow", "netflowVolumeRatio",
	"netflowVolumeRatioDex", "netflowVolumeRatioCex", "price"}

// Timeframes are the /token/top timeframe values.
var Timeframes = map[string]time.Duration{"1h": time.Hour, "6h": 6 * time.Hour, "12h": 12 * time.Hour,
	"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

// MaxReferencePeriods bounds numReferencePeriods.
const MaxReferencePeriods = 30

// AutoReferencePeriods is how many earlier windows "auto" compares against: a week of them for
// windows up to a day (a day of hours for 1h), one for 7d.
func AutoReferencePeriods(timeframe time.Duration) int {
	switch {
	case timeframe <= time.Hour:
		return 24
	case timeframe >= 7*24*time.Hour:
		return 1
	default:
		return int(7 * 24 * time.Hour / timeframe)
	}
}

// TopQuery is a checked /token/top request.
type TopQuery struct {
	Timeframe                  time.Duration
	OrderBy                    string
	Desc, Percent              bool
	From, Size                 int
	Chains, TokenIDs           []string
	MinVolume, MaxVolume       *float64
	MinMarketCap, MaxMarketCap *float64
	ReferencePeriods           int // 0: auto (AutoReferencePeriods)
}

// Top ranks tokens by q.OrderBy over the current window (or by its change against the mean of
// the reference windows before it, with q.Percent). Tokens whose ranking value is undefined (a
// change against zero) come last in either direction; ties go by pricing id.
func (s *Service) Top(ctx context.Context, q TopQuery) (TopResult, error) {
	n := q.ReferencePeriods
	if n <= 0 {
		n = AutoReferencePeriods(q.Timeframe)
	}
	ws, hint, err := s.windows(ctx, q.Timeframe, n, q.Chains, q.TokenIDs)
	if err != nil {
		return TopResult{}, err
	}
	type ranked struct {
		row TopToken
		key float64
	}
	rows := make([]ranked, 0, hint)
	for w := range ws {
		cur := interval(w.Current, deref(w.Price))
		prev := interval(scale(w.Previous, 1/float64(n)), deref(w.PrevPrice))
		if !within(cur.Volume, q.MinVolume, q.MaxVolume) || !withinPtr(w.MarketCap, q.MinMarketCap, q.MaxMarketCap) {
			continue
		}
		key := Metric(q.OrderBy, w.Current, deref(w.Price))
		if q.Percent {
			key = change(key, Metric(q.OrderBy, scale(w.Previous, 1/float64(n)), deref(w.PrevPrice)))
		}
		rows = append(rows, ranked{TopToken{Token: TopTokenRef{ID: w.PricingID, Symbol: w.Symbol, MarketCap: w.MarketCap},
			Current: cur, Previous: prev}, key})
	}
	slices.SortFunc(rows, func(a, b ranked) int {
		an, bn := math.IsNaN(a.key), math.IsNaN(b.key)
		switch {
		case an && bn:
		case an:
			return 1
		case bn:
			return -1
		default:
			c := cmp.Compare(a.key, b.key)
			if q.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.row.Token.ID, b.row.Token.ID)
	})
	res := TopResult{Tokens: []TopToken{}, Total: len(rows)}
	for i := q.From; i < len(rows) && i < q.From+q.Size; i++ {
		res.Tokens = append(res.Tokens, rows[i].row)
	}
	return res, nil
}

// windows returns every token's figures for a timeframe and reference periods: from the
// snapshot RefreshTop keeps when it is of the current hour and at most two refresh intervals old
// (narrowed to the requested chains and pricing ids by summing the per-chain parts it holds),
// else from the store.
// The second result is how many tokens ws yields at most.
func (s *Service) windows(ctx context.Context, tf time.Duration, n int, chains, ids []string) (ws iter.Seq[TokenWindows], hint int, err error) {
	curTo := s.o.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	key := topKey{int64(tf), int64(n), curTo}
	if s.o.TopRefresh > 0 {
		s.topMu.RLock()
		snap, ok := s.top[key]
		s.topMu.RUnlock()
		if ok && s.o.Now().Sub(snap.at) <= 2*s.o.TopRefresh {
			return snap.narrow(chains, ids), snap.hint(ids), nil
		}
	}
	curFrom := curTo.Add(-tf)
	refFrom := curFrom.Add(-time.Duration(n) * tf)
	if s.o.TopRefresh <= 0 || len(chains) > 0 || len(ids) > 0 {
		// A narrowed request reads only its tokens' rollups; it does not fill the snapshot.
		rows, err := s.st.TopWindows(ctx, s.chainsOr(chains), ids, refFrom, curFrom, curTo)
		return slices.Values(rows), len(rows), err
	}
	snap, err := s.snapshot(ctx, refFrom, curFrom, curTo)
	if err != nil {
		return nil, 0, err
	}
	s.topMu.Lock()
	s.top[key] = snap
	s.topMu.Unlock()
	return slices.Values(snap.rows), len(snap.rows), nil
}

type topKey struct {
	tf, n int64
	to    time.Time
}

// topSnapshot is every token's figures for one timeframe, number of reference periods and hour:
// rows[i] is parts[i]'s token summed over all its chains.
type topSnapshot struct {
	at    time.Time
	rows  []TokenWindows
	parts []TokenParts
}

func (s *Service) snapshot(ctx context.Context, refFrom, curFrom, curTo time.Time) (topSnapshot, error) {
	ps, err := s.st.TopParts(ctx, s.o.Chains, refFrom, curFrom, curTo)
	if err != nil {
		return topSnapshot{}, err
	}
	rows := make([]TokenWindows, len(ps))
	for i, p := range ps {
		rows[i] = p.TokenWindows
	}
	return topSnapshot{at: s.o.Now(), rows: rows, parts: ps}, nil
}

// hint is how many of the snapshot's tokens a request for ids (all when empty) can keep.
func (p topSnapshot) hint(ids []string) int {
	if len(ids) > 0 && len(ids) < len(p.rows) {
		return len(ids)
	}
	return len(p.rows)
}

// narrow yields the snapshot's rows of the pricing ids ids (all when empty), each summed over
// its parts on chains (all when empty); a token without a deployment on chains is left out, as
// the store's TopWindows leaves it out. It yields them without copying the snapshot.
func (p topSnapshot) narrow(chains, ids []string) iter.Seq[TokenWindows] {
	if len(chains) == 0 && len(ids) == 0 {
		return slices.Values(p.rows)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	return func(yield func(TokenWindows) bool) {
		for i := range p.parts {
			t := &p.parts[i]
			if len(ids) > 0 && !want[t.PricingID] {
				continue
			}
			if len(chains) == 0 {
				if !yield(p.rows[i]) {
					return
				}
				continue
			}
			w, found := t.TokenWindows, false
			w.Current, w.Previous = HourFlows{}, HourFlows{}
			for _, c := range t.Parts {
				if slices.Contains(chains, c.Chain) {
					w.Current, w.Previous, found = w.Current.Add(c.Current), w.Previous.Add(c.Previous), true
				}
			}
			if found && !yield(w) {
				return
			}
		}
	}
}

// RefreshTop recomputes every token's /token/top figures, per chain, for every timeframe with
// one and with the automatic number of reference periods, and drops snapshots of past hours.
// Run it every Options.TopRefresh (RefreshTopLoop).
func (s *Service) RefreshTop(ctx context.Context) error {
	curTo := s.o.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	fresh := map[topKey]topSnapshot{}
	for _, tf := range Timeframes {
		for _, n := range []int{1, AutoReferencePeriods(tf)} {
			key := topKey{int64(tf), int64(n), curTo}
			if _, done := fresh[key]; done {
				continue
			}
			curFrom := curTo.Add(-tf)
			snap, err := s.snapshot(ctx, curFrom.Add(-time.Duration(n)*tf), curFrom, curTo)
			if err != nil {
				return err
			}
			fresh[key] = snap
		}
	}
	s.topMu.Lock()
	s.top = fresh
	s.topMu.Unlock()
	return nil
}

// RefreshTopLoop runs RefreshTop every Options.TopRefresh until ctx ends; a failed refresh is
// logged and requests compute their figures from the store meanwhile.
func (s *Service) RefreshTopLoop(ctx context.Context) error {
	if s.o.TopRefresh <= 0 {
		<-ctx.Done()
		return nil
	}
	for {
		if err := s.RefreshTop(ctx); err != nil && ctx.Err() == nil {
			s.o.Logger.WarnContext(ctx, "top tokens refresh failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.o.TopRefresh):
		}
	}
}

func interval(f HourFlows, price float64) Interval {
	return Interval{Price: price, Volume: f.Volume, InflowCexVolume: f.CexIn, OutflowCexVolume: f.CexOut,
		InflowDexVolume: f.DexIn, OutflowDexVolume: f.DexOut, Netflow: f.CexIn + f.DexIn - f.CexOut - f.DexOut}
}

func scale(f HourFlows, k float64) HourFlows {
	return HourFlows{Volume: f.Volume * k, CexIn: f.CexIn * k, CexOut: f.CexOut * k, DexIn: f.DexIn * k, DexOut: f.DexOut * k}
}

// Metric is the value /token/top ranks by for an orderByAgg. Inflows are transfers into
// addresses of the class, outflows out of them; netflow is inflow minus outflow; a ratio is a
// netflow over the matching volume (0 without volume).
func Metric(agg string, f HourFlows, price float64) float64 {
	switch agg {
	case "volume":
		return f.Volume
	case "inflow":
		return f.CexIn + f.DexIn
	case "outflow":
		return f.CexOut + f.DexOut
	case "volumeDex":
		return f.DexIn + f.DexOut
	case "volumeCex":
		return f.CexIn + f.CexOut
	case "inflowDex":
		return f.DexIn
	case "inflowCex":
		return f.CexIn
	case "outflowDex":
		return f.DexOut
	case "outflowCex":
		return f.CexOut
	case "netflowDex":
		return f.DexIn - f.DexOut
	case "netflowCex":
		return f.CexIn - f.CexOut
	case "netflow":
		return f.CexIn + f.DexIn - f.CexOut - f.DexOut
	case "netflowVolumeRatio":
		return ratio(f.CexIn+f.DexIn-f.CexOut-f.DexOut, f.Volume)
	case "netflowVolumeRatioDex":
		return ratio(f.DexIn-f.DexOut, f.DexIn+f.DexOut)
	case "netflowVolumeRatioCex":
		return ratio(f.CexIn-f.CexOut, f.CexIn+f.CexOut)
	case "price":
		return price
	}
	return math.NaN()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// change is the relative change from prev to cur; NaN when prev is zero.
func change(cur, prev float64) float64 {
	if prev == 0 {
		return math.NaN()
	}
	return (cur - prev) / math.Abs(prev)
}

func within(v float64, lo, hi *float64) bool {
	return (lo == nil || v >= *lo) && (hi == nil || v <= *hi)
}

func withinPtr(v *float64, lo, hi *float64) bool {
	if v == nil {
		return lo == nil && hi == nil
	}
	return within(*v, lo, hi)
}
