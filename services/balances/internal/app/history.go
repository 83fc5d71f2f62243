package app

import (
	"context"
	"math/big"
	"sort"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// MaxHistoryDays is how many days history and time series reach back (today included).
const MaxHistoryDays = 366

// series is a (chain, token)'s end-of-day balances on the days they changed, in day order.
type series struct {
	key    [2]string
	days   []time.Time
	values []*big.Int
}

// at is the balance at the end of day d.
func (s *series) at(d time.Time) *big.Int {
	i := sort.Search(len(s.days), func(i int) bool { return s.days[i].After(d) })
	if i == 0 {
		return new(big.Int)
	}
	return s.values[i-1]
}

// buildSeries turns day-over-day changes into balances per (chain, token).
func buildSeries(cs []store.Change) []*series {
	by := map[[2]string][]store.Change{}
	for _, c := range cs {
		k := [2]string{c.Chain, c.Token}
		by[k] = append(by[k], c)
	}
	out := make([]*series, 0, len(by))
	for k, l := range by {
		sort.Slice(l, func(i, j int) bool { return l[i].Day.Before(l[j].Day) })
		s := &series{key: k}
		sum := new(big.Int)
		for _, c := range l {
			sum = new(big.Int).Add(sum, c.Delta)
			s.days, s.values = append(s.days, c.Day), append(s.values, sum)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].key[0] != out[j].key[0] {
			return out[i].key[0] < out[j].key[0]
		}
		return out[i].key[1] < out[j].key[1]
	})
	return out
}

// closes is a pricing id's daily closes, for the price in force at the end of a day.
type closes []store.DayPrice

func (c closes) at(d time.Time) float64 {
	i := sort.Search(len(c), func(i int) bool { return c[i].Day.After(d) })
	if i == 0 {
		return 0
	}
	return c[i-1].Price
}

// window loads the subject's series, their tokens and their closes from the first day with data
// (at most MaxHistoryDays back) to today; keep filters tokens. An operator entity without the
// caller's additions reads all three in one round trip.
func (a *App) window(ctx context.Context, s Subject, keep func(token) bool) (ss []*series, ts map[[2]string]token, px map[string]closes, from, to time.Time, err error) {
	to = store.Day(a.now())
	earliest := to.AddDate(0, 0, -(MaxHistoryDays - 1))
	var cs []store.Change
	var pd map[string][]store.DayPrice
	if s.Entity != "" && len(s.Refs) == 0 {
		var w store.EntityWindow
		if w, err = a.st.EntityWindow(ctx, s.Entity, s.Chains, nativeIDs(s.Chains), earliest, to); err != nil {
			return
		}
		cs, pd = w.Changes, w.Closes
		ts = map[[2]string]token{}
		for k, m := range w.Metas {
			ts[k] = resolveToken(k, m)
		}
	} else if cs, err = a.changes(ctx, s); err != nil {
		return
	}
	all := buildSeries(cs)
	if ts == nil {
		keys := make([][2]string, 0, len(all))
		for _, x := range all {
			keys = append(keys, x.key)
		}
		if ts, err = a.tokens(ctx, keys); err != nil {
			return
		}
	}
	for _, x := range all {
		if keep != nil && !keep(ts[x.key]) {
			continue
		}
		ss = append(ss, x)
		if len(x.days) > 0 && (from.IsZero() || x.days[0].Before(from)) {
			from = x.days[0]
		}
	}
	if from.Before(earliest) {
		from = earliest
	}
	px = map[string]closes{}
	if len(ss) == 0 {
		return
	}
	if pd == nil {
		if pd, err = a.st.PriceDays(ctx, pricingIDs(ts), from, to); err != nil {
			return
		}
	}
	for id, l := range pd {
		px[id] = l
	}
	return
}

// nativeIDs maps each chain to its native coin's pricing id in the chain catalogue.
func nativeIDs(names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		if c, ok := chains.Lookup(n); ok && c.NativePricingID != "" {
			out[n] = c.NativePricingID
		}
	}
	return out
}

// HistoryPoint is a day's USD value.
type HistoryPoint struct {
	Time string  `json:"time"`
	USD  float64 `json:"usd"`
}

// History answers /history/*: each chain's USD value at the end of every UTC day, from the
// first day with a balance to today.
func (a *App) History(ctx context.Context, s Subject) (map[string][]HistoryPoint, error) {
	ss, ts, px, from, to, err := a.window(ctx, s, nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]HistoryPoint{}
	byChain := map[string][]*series{}
	for _, x := range ss {
		byChain[x.key[0]] = append(byChain[x.key[0]], x)
	}
	for chain, l := range byChain {
		first := to
		for _, x := range l {
			if x.days[0].Before(first) {
				first = x.days[0]
			}
		}
		if first.Before(from) {
			first = from
		}
		var pts []HistoryPoint
		for d := first; !d.After(to); d = d.AddDate(0, 0, 1) {
			usd := 0.0
			for _, x := range l {
				t := ts[x.key]
				usd += units(x.at(d), t.Decimals) * px[t.PricingID].at(d)
			}
			pts = append(pts, HistoryPoint{Time: render.Timestamp(d), USD: usd})
		}
		out[chain] = pts
	}
	return out, nil
}

// PortfolioEntry is a token's holding at the end of a day.
type PortfolioEntry struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Symbol  string  `json:"symbol"`
	Balance float64 `json:"balance"`
	Price   float64 `json:"price"`
	USD     float64 `json:"usd"`
}

func entry(t token, bal *big.Int, price float64) PortfolioEntry {
	u := units(bal, t.Decimals)
	return PortfolioEntry{ID: t.ID, Name: t.Name, Symbol: t.Symbol, Balance: u, Price: price, USD: u * price}
}

// Portfolio answers /portfolio/*: holdings at the end of the UTC day of at, per chain and
// pricing id; a day before any data is empty.
func (a *App) Portfolio(ctx context.Context, s Subject, at time.Time) (map[string]map[string]PortfolioEntry, error) {
	day := store.Day(at)
	if today := store.Day(a.now()); day.After(today) {
		day = today
	}
	hs, err := a.holdingsAt(ctx, s, day)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]PortfolioEntry{}
	var keys [][2]string
	var held []store.Holding
	for _, h := range hs {
		if h.Balance.Sign() > 0 {
			keys = append(keys, [2]string{h.Chain, h.Token})
			held = append(held, h)
		}
	}
	if len(held) == 0 {
		return out, nil
	}
	ts, err := a.tokens(ctx, keys)
	if err != nil {
		return nil, err
	}
	pd, err := a.st.PriceDays(ctx, pricingIDs(ts), day, day)
	if err != nil {
		return nil, err
	}
	for _, h := range held {
		t := ts[[2]string{h.Chain, h.Token}]
		if out[h.Chain] == nil {
			out[h.Chain] = map[string]PortfolioEntry{}
		}
		e := entry(t, h.Balance, closes(pd[t.PricingID]).at(day))
		if prev, ok := out[h.Chain][t.ID]; ok { // two contracts of one id on a chain
			e.Balance += prev.Balance
			e.USD += prev.USD
		}
		out[h.Chain][t.ID] = e
	}
	return out, nil
}

// holdingsAt returns the subject's balances at the end of day, per (chain, token): an operator
// entity's summed in SQL, the addresses' (and a caller's additions to an entity) from their
// snapshots' changes.
func (a *App) holdingsAt(ctx context.Context, s Subject, day time.Time) ([]store.Holding, error) {
	var hs []store.Holding
	refs := s
	if s.Entity != "" {
		var err error
		if hs, err = a.st.EntityBalancesAt(ctx, s.Entity, s.Chains, day); err != nil || len(s.Refs) == 0 {
			return hs, err
		}
		refs.Entity = ""
	}
	cs, err := a.changes(ctx, refs)
	if err != nil {
		return nil, err
	}
	for _, x := range buildSeries(cs) {
		hs = append(hs, store.Holding{Chain: x.key[0], Token: x.key[1], Balance: x.at(day)})
	}
	return mergeHoldings(hs), nil
}

// TimeSeries answers /portfolio/timeSeries/*: the holdings of one pricing id at the end of every
// day, per chain.
func (a *App) TimeSeries(ctx context.Context, s Subject, pricingID string) (map[string]map[string]map[string]PortfolioEntry, error) {
	// A pricing id the registry (or a served chain's native coin) does not know is a 404, as on
	// the other token routes, not an empty series.
	if _, _, err := a.deployments(ctx, TokenRef{PricingID: pricingID}); err != nil {
		return nil, err
	}
	ss, ts, px, from, to, err := a.window(ctx, s, func(t token) bool { return t.ID == pricingID })
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]map[string]PortfolioEntry{}
	if len(ss) == 0 {
		return out, nil
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		for _, x := range ss {
			bal := x.at(d)
			if bal.Sign() == 0 {
				continue
			}
			t := ts[x.key]
			day := render.Timestamp(d)
			if out[day] == nil {
				out[day] = map[string]map[string]PortfolioEntry{}
			}
			if out[day][x.key[0]] == nil {
				out[day][x.key[0]] = map[string]PortfolioEntry{}
			}
			e := entry(t, bal, px[t.PricingID].at(d))
			if prev, ok := out[day][x.key[0]][t.ID]; ok { // two contracts of one id on a chain
				e.Balance += prev.Balance
				e.USD += prev.USD
			}
			out[day][x.key[0]][t.ID] = e
		}
	}
	return out, nil
}
