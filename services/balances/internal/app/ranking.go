package app

import (
	"context"
	"sort"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// What the entity balance ranking can be ordered by (/intelligence/entity_balance_changes).
const (
	OrderBalanceUSD           = "balanceUsd"
	OrderBalanceUSDChange     = "balanceUsdChange"
	OrderBalanceUSDPctChange  = "balanceUsdPctChange"
	OrderBalanceUnit          = "balanceUnit"
	OrderBalanceUnitChange    = "balanceUnitChange"
	OrderBalanceUnitPctChange = "balanceUnitPctChange"
)

// MaxRankingTokens is how many tokens an entity of the ranking lists at most (its largest by
// balanceUsd): an exchange holds thousands of tokens, most of them dust or spam, and a page of
// 100 entities would otherwise answer every one.
const MaxRankingTokens = 25

// RankingQuery is a request for the entity balance ranking. Nil filters are not applied.
type RankingQuery struct {
	OrderBy string
	Desc    bool
	Days    int // the interval: previous balances are those of the end of the UTC day Days days ago
	Chains  []string
	// EntityTypes, EntityIDs, EntityTags (any of), NegatedEntityTags (none of) and PricingIDs
	// select what is counted.
	EntityTypes, EntityIDs, EntityTags, NegatedEntityTags, PricingIDs []string
	// BalanceMin and BalanceMax bound balanceUsd (inclusive) when set.
	BalanceMin, BalanceMax *float64
	Limit, Offset          int
}

// EntityBalanceChange is one entity of the ranking.
type EntityBalanceChange struct {
	EntityID        string               `json:"entityId"`
	EntityName      string               `json:"entityName"`
	EntityType      string               `json:"entityType"`
	BalanceUSD      float64              `json:"balanceUsd"`
	PrevBalanceUSD  float64              `json:"prevBalanceUsd"`
	BalanceUnit     float64              `json:"balanceUnit"`
	PrevBalanceUnit float64              `json:"prevBalanceUnit"`
	TokenBalances   []TokenBalanceChange `json:"tokenBalances"`
}

// TokenBalanceChange is an entity's balance of one token (summed over chains) now and before.
type TokenBalanceChange struct {
	TokenID         string  `json:"tokenId"`
	TokenSymbol     string  `json:"tokenSymbol"`
	BalanceUSD      float64 `json:"balanceUsd"`
	PrevBalanceUSD  float64 `json:"prevBalanceUsd"`
	BalanceUnit     float64 `json:"balanceUnit"`
	PrevBalanceUnit float64 `json:"prevBalanceUnit"`
}

// EntityBalanceChanges answers /intelligence/entity_balance_changes: the operator entities
// ranked by their balances now against those of q.Days days ago. Now is valued at the prices in
// force now, the previous balances (the snapshots of the end of the UTC day D of now − q.Days ×
// 24 h) at D's closing prices, so an entity's prevBalanceUsd is /history/entity's point of D for
// the same chains and tokens. The entity's units
// are the sum of its tokens' units when q.PricingIDs names one token, else 0 (units of different
// tokens do not add up; the http layer refuses a unit order without one pricing id).
func (a *App) EntityBalanceChanges(ctx context.Context, q RankingQuery) ([]EntityBalanceChange, error) {
	names, err := a.chainNames(q.Chains)
	if err != nil {
		return nil, err
	}
	// In UTC, so the interval is q.Days × 24 h whatever the clock's zone (a local calendar's
	// days across a DST change are not).
	now := a.now().UTC()
	day := store.Day(now.AddDate(0, 0, -q.Days))
	rows, err := a.st.EntityRanking(ctx, store.RankingQuery{Chains: names, Day: day, EntityIDs: q.EntityIDs, Types: q.EntityTypes,
		Tags: q.EntityTags, NegatedTags: q.NegatedEntityTags, PricingIDs: q.PricingIDs, Natives: nativeIDs(names)})
	if err != nil {
		return nil, err
	}
	ranked, err := a.rankedEntities(ctx, rows, now, day, len(q.PricingIDs) == 1)
	if err != nil {
		return nil, err
	}
	ranked = inBounds(ranked, q.BalanceMin, q.BalanceMax)
	sortRanking(ranked, q.OrderBy, q.Desc)
	page := []EntityBalanceChange{}
	if q.Offset < len(ranked) {
		page = ranked[q.Offset:min(q.Offset+q.Limit, len(ranked))]
	}
	ids := make([]string, len(page))
	for i, e := range page {
		ids[i] = e.EntityID
	}
	ents, err := a.st.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range page {
		e := ents[page[i].EntityID]
		page[i].EntityName, page[i].EntityType = e.Name, e.Type
	}
	return page, nil
}

// rankedEntities values rows (ordered by entity) per entity and token, now at the prices in force
// now and the previous balances at day's close (as /history values day); withUnits sets the
// entities' units (one token counted).
func (a *App) rankedEntities(ctx context.Context, rows []store.EntityTokenBalance, now, day time.Time, withUnits bool) ([]EntityBalanceChange, error) {
	var keys [][2]string
	seen := map[[2]string]bool{}
	for _, r := range rows {
		if k := [2]string{r.Chain, r.Token}; !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	ts, err := a.tokens(ctx, keys)
	if err != nil {
		return nil, err
	}
	ids := pricingIDs(ts)
	cur, err := a.st.PricesAt(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	pd, err := a.st.PriceDays(ctx, ids, day, day)
	if err != nil {
		return nil, err
	}
	var out []EntityBalanceChange
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Entity == rows[i].Entity {
			j++
		}
		out = append(out, entityChange(rows[i:j], ts, cur, pd, day, withUnits))
		i = j
	}
	return out, nil
}

// entityChange sums one entity's rows per token (its id: the pricing id, else the contract)
// and the tokens into the entity's totals, then lists at most MaxRankingTokens of them, largest
// balanceUsd first (ties by id), leaving out those worth $0 now and before (unpriced tokens,
// spam among them); the totals count every token. Now is valued at cur, the previous balances
// at day's close in pd.
func entityChange(rows []store.EntityTokenBalance, ts map[[2]string]token, cur map[string]store.PricePoint,
	pd map[string][]store.DayPrice, day time.Time, withUnits bool) EntityBalanceChange {
	out := EntityBalanceChange{EntityID: rows[0].Entity, TokenBalances: []TokenBalanceChange{}}
	idx := map[string]int{}
	var pids []string // the pricing id of each of out.TokenBalances (the first row's token of its id)
	for _, r := range rows {
		t := ts[[2]string{r.Chain, r.Token}]
		i, ok := idx[t.ID]
		if !ok {
			i = len(out.TokenBalances)
			idx[t.ID] = i
			out.TokenBalances = append(out.TokenBalances, TokenBalanceChange{TokenID: t.ID, TokenSymbol: t.Symbol})
			pids = append(pids, t.PricingID)
		}
		tb := &out.TokenBalances[i]
		tb.BalanceUnit += units(r.Now, t.Decimals)
		tb.PrevBalanceUnit += units(r.Prev, t.Decimals)
	}
	for i, id := range pids {
		tb := &out.TokenBalances[i]
		tb.BalanceUSD, tb.PrevBalanceUSD = tb.BalanceUnit*cur[id].Price, tb.PrevBalanceUnit*closes(pd[id]).at(day)
	}
	l := out.TokenBalances
	sort.Slice(l, func(i, j int) bool {
		if l[i].BalanceUSD != l[j].BalanceUSD {
			return l[i].BalanceUSD > l[j].BalanceUSD
		}
		return l[i].TokenID < l[j].TokenID
	})
	for _, tb := range l {
		out.BalanceUSD += tb.BalanceUSD
		out.PrevBalanceUSD += tb.PrevBalanceUSD
		if withUnits {
			out.BalanceUnit += tb.BalanceUnit
			out.PrevBalanceUnit += tb.PrevBalanceUnit
		}
	}
	kept := l[:0]
	for _, tb := range l {
		if (tb.BalanceUSD != 0 || tb.PrevBalanceUSD != 0) && len(kept) < MaxRankingTokens {
			kept = append(kept, tb)
		}
	}
	out.TokenBalances = kept
	return out
}

// inBounds keeps the entities whose balanceUsd is within [lo, hi] (a nil bound is open).
func inBounds(es []EntityBalanceChange, lo, hi *float64) []EntityBalanceChange {
	if lo == nil && hi == nil {
		return es
	}
	out := es[:0]
	for _, e := range es {
		if (lo == nil || e.BalanceUSD >= *lo) && (hi == nil || e.BalanceUSD <= *hi) {
			out = append(out, e)
		}
	}
	return out
}

// rankValue is what orderBy orders e by; ok is false for a percentage change from 0, which has
// no value and is ordered after every entity that has one, in either direction.
func rankValue(e EntityBalanceChange, orderBy string) (v float64, ok bool) {
	pct := func(now, prev float64) (float64, bool) {
		if prev == 0 {
			return 0, false
		}
		return (now - prev) / prev * 100, true
	}
	switch orderBy {
	case OrderBalanceUSDChange:
		return e.BalanceUSD - e.PrevBalanceUSD, true
	case OrderBalanceUSDPctChange:
		return pct(e.BalanceUSD, e.PrevBalanceUSD)
	case OrderBalanceUnit:
		return e.BalanceUnit, true
	case OrderBalanceUnitChange:
		return e.BalanceUnit - e.PrevBalanceUnit, true
	case OrderBalanceUnitPctChange:
		return pct(e.BalanceUnit, e.PrevBalanceUnit)
	}
	return e.BalanceUSD, true
}

// sortRanking orders es by orderBy (descending when desc), entities without a value last, ties
// by entity id ascending, so pages of one ranking never overlap.
func sortRanking(es []EntityBalanceChange, orderBy string, desc bool) {
	sort.SliceStable(es, func(i, j int) bool {
		vi, oki := rankValue(es[i], orderBy)
		vj, okj := rankValue(es[j], orderBy)
		switch {
		case oki != okj:
			return oki
		case oki && vi != vj:
			if desc {
				return vi > vj
			}
			return vi < vj
		}
		return es[i].EntityID < es[j].EntityID
	})
}
