package app

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
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
	if err := s.requireKnown(ctx, q.TokenIDs); err != nil {
		return TopResult{}, err
	}
	v, err := s.topView(ctx, q.Timeframe, n, q.Chains, q.TokenIDs)
	if err != nil {
		return TopResult{}, err
	}
	return v.page(q), nil
}

// requireKnown is a not-found error naming the first of tokenIds the registry does not hold (a
// known token without a price or flows is simply not ranked).
func (s *Service) requireKnown(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	known, err := s.KnownIDs(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return fmt.Errorf("tokenIds: unknown token %q (%w)", id, ErrNotFound)
		}
	}
	return nil
}

// topView returns the tokens' figures for a timeframe, reference periods and chains, ranked on
// demand: from the snapshot RefreshTop keeps when it is of the current hour and at most two
// refresh intervals old (its view of the requested chains, kept with its rankings), else from
// the store (a view of the requested tokens only, used once).
func (s *Service) topView(ctx context.Context, tf time.Duration, n int, chains, ids []string) (*topView, error) {
	curTo := s.o.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	key := topKey{int64(tf), int64(n), curTo}
	if s.o.TopRefresh > 0 {
		s.topMu.RLock()
		snap, ok := s.top[key]
		s.topMu.RUnlock()
		if ok && s.o.Now().Sub(snap.at) <= 2*s.o.TopRefresh {
			return snap.view(chains), nil
		}
	}
	curFrom := curTo.Add(-tf)
	refFrom := curFrom.Add(-time.Duration(n) * tf)
	if s.o.TopRefresh <= 0 || len(chains) > 0 || len(ids) > 0 {
		// A narrowed request reads only its tokens' rollups; it does not fill the snapshot.
		rows, err := s.st.TopWindows(ctx, s.chainsOr(chains), ids, refFrom, curFrom, curTo)
		if err != nil {
			return nil, err
		}
		return newTopView(rows, n), nil
	}
	snap, err := s.snapshot(ctx, n, refFrom, curFrom, curTo)
	if err != nil {
		return nil, err
	}
	if len(snap.parts) > 0 { // as in RefreshTop: no snapshot of an empty registry
		s.topMu.Lock()
		s.top[key] = snap
		s.topMu.Unlock()
	}
	return snap.all, nil
}

type topKey struct {
	tf, n int64
	to    time.Time
}

// topSnapshot is every token's figures for one timeframe, number of reference periods and hour:
// all sums each token over all its chains; views narrowed to other sets of chains are made on
// first use from parts (each token's figures per chain) and kept, at most maxTopViews of them.
type topSnapshot struct {
	at    time.Time
	n     int
	parts []TokenParts
	all   *topView

	mu    sync.Mutex
	views map[string]*topView
}

// maxTopViews bounds the chain sets a snapshot keeps views of; a request for another set ranks
// its own view. Requests name configured chains, so the sets asked for in practice are few.
const maxTopViews = 8

func (s *Service) snapshot(ctx context.Context, n int, refFrom, curFrom, curTo time.Time) (*topSnapshot, error) {
	ps, err := s.st.TopParts(ctx, s.o.Chains, refFrom, curFrom, curTo)
	if err != nil {
		return nil, err
	}
	rows := make([]TokenWindows, len(ps))
	for i, p := range ps {
		rows[i] = p.TokenWindows
	}
	return &topSnapshot{at: s.o.Now(), n: n, parts: ps, all: newTopView(rows, n), views: map[string]*topView{}}, nil
}

// view is the snapshot's view of chains (all when empty).
func (p *topSnapshot) view(chains []string) *topView {
	if len(chains) == 0 {
		return p.all
	}
	key := strings.Join(slices.Sorted(slices.Values(chains)), ",")
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.views[key]; ok {
		return v
	}
	v := newTopView(p.narrow(chains), p.n)
	if len(p.views) < maxTopViews {
		p.views[key] = v
	}
	return v
}

// narrow is the snapshot's tokens each summed over its parts on chains; a token without a
// deployment on chains is left out, as the store's TopWindows leaves it out.
func (p *topSnapshot) narrow(chains []string) []TokenWindows {
	rows := make([]TokenWindows, 0, len(p.parts))
	for i := range p.parts {
		t := &p.parts[i]
		w, found := t.TokenWindows, false
		w.Current, w.Previous = HourFlows{}, HourFlows{}
		for _, c := range t.Parts {
			if slices.Contains(chains, c.Chain) {
				w.Current, w.Previous, found = w.Current.Add(c.Current), w.Previous.Add(c.Previous), true
			}
		}
		if found {
			rows = append(rows, w)
		}
	}
	return rows
}

// topView is a set of tokens' figures with their rankings, each computed on first use and kept:
// a request pages a ranking, skipping the tokens its filters leave out, and allocates only its
// page.
type topView struct {
	rows []TokenWindows
	n    int

	mu     sync.Mutex
	index  map[string]int32 // pricing id -> row
	orders map[orderKey][]int32
}

type orderKey struct {
	agg           string
	percent, desc bool
}

// newTopView leaves out the tokens without a price now: a /token/top row's current price is
// required and a $0 stand-in would be a wrong figure (as /token/trending, which lists only
// priced tokens).
//
// Each token's figures are read with their residues as zero (HourFlows.settled), against its
// volume over both windows: a window where its transfers were all undone has none.
func newTopView(rows []TokenWindows, n int) *topView {
	rows = slices.DeleteFunc(rows, func(w TokenWindows) bool { return w.Price == nil })
	for i := range rows {
		w := &rows[i]
		ref := math.Abs(w.Current.Volume) + math.Abs(w.Previous.Volume)
		w.Current, w.Previous = w.Current.settled(ref), w.Previous.settled(ref)
	}
	return &topView{rows: rows, n: n, orders: map[orderKey][]int32{}}
}

// warm computes every ranking ahead of requests.
func (v *topView) warm() {
	for _, agg := range OrderByAggs {
		for _, percent := range []bool{false, true} {
			v.order(orderKey{agg, percent, true})
			v.order(orderKey{agg, percent, false})
		}
	}
}

// key is row i's ranking value for k: the metric, or its relative change against the mean of
// the reference windows (NaN when that is zero).
func (v *topView) key(i int, agg string, percent bool) float64 {
	w := &v.rows[i]
	key := Metric(agg, w.Current, deref(w.Price))
	if percent {
		key = change(key, Metric(agg, scale(w.Previous, 1/float64(v.n)), deref(w.PrevPrice)))
	}
	return key
}

// order is the rows' ranking for k: by key (descending with k.desc), undefined keys last, ties by
// pricing id.
func (v *topView) order(k orderKey) []int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if o, ok := v.orders[k]; ok {
		return o
	}
	keys := make([]float64, len(v.rows))
	for i := range v.rows {
		keys[i] = v.key(i, k.agg, k.percent)
	}
	asc, ok := v.orders[orderKey{k.agg, k.percent, false}]
	if !ok {
		asc = ascending(keys, v.rows)
		v.orders[orderKey{k.agg, k.percent, false}] = asc
	}
	if !k.desc {
		return asc
	}
	desc := descending(asc, keys)
	v.orders[k] = desc
	return desc
}

// ascending ranks rows by keys, NaN last, ties by pricing id.
func ascending(keys []float64, rows []TokenWindows) []int32 {
	o := make([]int32, len(keys))
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortFunc(o, func(a, b int32) int {
		an, bn := math.IsNaN(keys[a]), math.IsNaN(keys[b])
		switch {
		case an && bn:
		case an:
			return 1
		case bn:
			return -1
		default:
			if c := cmp.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
		}
		return cmp.Compare(rows[a].PricingID, rows[b].PricingID)
	})
	return o
}

// descending is the ascending ranking asc turned around: the defined keys reversed, each run
// of equal keys back in pricing id order, the undefined ones still last.
func descending(asc []int32, keys []float64) []int32 {
	d := slices.Clone(asc)
	m := len(d)
	for m > 0 && math.IsNaN(keys[d[m-1]]) {
		m--
	}
	slices.Reverse(d[:m])
	for i := 0; i < m; {
		j := i + 1
		for j < m && keys[d[j]] == keys[d[i]] {
			j++
		}
		slices.Reverse(d[i:j])
		i = j
	}
	return d
}

// page answers q from the view: its ranking, filtered by q's pricing ids and bounds.
func (v *topView) page(q TopQuery) TopResult {
	order := v.order(orderKey{q.OrderBy, q.Percent, q.Desc})
	keep := v.filter(q)
	res := TopResult{Tokens: make([]TopToken, 0, max(0, min(q.Size, len(order)-q.From)))}
	if keep == nil {
		for _, i := range order[min(q.From, len(order)):min(q.From+q.Size, len(order))] {
			res.Tokens = append(res.Tokens, v.token(int(i)))
		}
		res.Total = len(order)
		return res
	}
	for _, i := range order {
		if !keep(int(i)) {
			continue
		}
		if res.Total >= q.From && res.Total < q.From+q.Size {
			res.Tokens = append(res.Tokens, v.token(int(i)))
		}
		res.Total++
	}
	return res
}

// filter is which rows q keeps (nil: every row).
func (v *topView) filter(q TopQuery) func(int) bool {
	var ids []bool
	if len(q.TokenIDs) > 0 {
		ids = make([]bool, len(v.rows))
		index := v.ids()
		for _, id := range q.TokenIDs {
			if i, ok := index[id]; ok {
				ids[i] = true
			}
		}
	}
	bounded := q.MinVolume != nil || q.MaxVolume != nil || q.MinMarketCap != nil || q.MaxMarketCap != nil
	if ids == nil && !bounded {
		return nil
	}
	return func(i int) bool {
		if ids != nil && !ids[i] {
			return false
		}
		w := &v.rows[i]
		return within(w.Current.Volume, q.MinVolume, q.MaxVolume) && withinPtr(w.MarketCap, q.MinMarketCap, q.MaxMarketCap)
	}
}

// ids is the view's row of each pricing id.
func (v *topView) ids() map[string]int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.index == nil {
		v.index = make(map[string]int32, len(v.rows))
		for i, w := range v.rows {
			v.index[w.PricingID] = int32(i)
		}
	}
	return v.index
}

func (v *topView) token(i int) TopToken {
	w := &v.rows[i]
	return TopToken{Token: TopTokenRef{ID: w.PricingID, Symbol: w.Symbol, MarketCap: w.MarketCap},
		Current: interval(w.Current, w.Price), Previous: interval(scale(w.Previous, 1/float64(v.n)), w.PrevPrice)}
}

// RefreshTop recomputes every token's /token/top figures, per chain, for every timeframe with
// one and with the automatic number of reference periods, and drops snapshots of past hours.
// Run it every Options.TopRefresh (RefreshTopLoop).
func (s *Service) RefreshTop(ctx context.Context) error {
	curTo := s.o.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	fresh := map[topKey]*topSnapshot{}
	for _, tf := range Timeframes {
		for _, n := range []int{1, AutoReferencePeriods(tf)} {
			key := topKey{int64(tf), int64(n), curTo}
			if _, done := fresh[key]; done {
				continue
			}
			curFrom := curTo.Add(-tf)
			snap, err := s.snapshot(ctx, n, curFrom.Add(-time.Duration(n)*tf), curFrom, curTo)
			if err != nil {
				return err
			}
			if len(snap.parts) == 0 {
				// An empty registry (a fresh install before the token list and the first
				// flows arrive): not kept, so requests read the store until tokens appear
				// instead of answering nothing until the next refresh.
				continue
			}
			snap.all.warm()
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

// interval is a window's row; its price is 0 when none was in force at the window's end (the
// public shape requires a number).
func interval(f HourFlows, price *float64) Interval {
	return Interval{Price: deref(price), Volume: f.Volume, InflowCexVolume: f.CexIn, OutflowCexVolume: f.CexOut,
		InflowDexVolume: f.DexIn, OutflowDexVolume: f.DexOut, Netflow: Metric("netflow", f, 0)}
}

func scale(f HourFlows, k float64) HourFlows {
	return HourFlows{Volume: f.Volume * k, CexIn: f.CexIn * k, CexOut: f.CexOut * k, DexIn: f.DexIn * k, DexOut: f.DexOut * k,
		Transfers: f.Transfers}
}

// Metric is the value /token/top ranks by for an orderByAgg. Inflows are transfers into
// addresses of the class, outflows out of them; netflow is inflow minus outflow; a ratio is a
// netflow over the matching volume (0 without volume). A sum or difference of f's figures is
// read against f's volume (Settle): one whose exact value is 0 (an inflow and an outflow of the
// same transfers) is 0, not the residue of summing them in another order.
func Metric(agg string, f HourFlows, price float64) float64 {
	switch agg {
	case "price":
		return price
	case "netflowVolumeRatio":
		return ratio(Metric("netflow", f, price), f.Volume)
	case "netflowVolumeRatioDex":
		return ratio(Metric("netflowDex", f, price), Metric("volumeDex", f, price))
	case "netflowVolumeRatioCex":
		return ratio(Metric("netflowCex", f, price), Metric("volumeCex", f, price))
	}
	return Settle(flowMetric(agg, f), f.Volume)
}

// flowMetric is Metric's sum or difference of f's figures for agg, as summed.
func flowMetric(agg string, f HourFlows) float64 {
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
	}
	return math.NaN()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// change is the relative change from prev to cur; NaN when prev is zero, 0 when the two differ
// by at most ResidueTolerance of the larger (Settle: the same sum, summed in another order).
func change(cur, prev float64) float64 {
	if prev == 0 {
		return math.NaN()
	}
	return Settle(cur-prev, math.Max(math.Abs(cur), math.Abs(prev))) / math.Abs(prev)
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
