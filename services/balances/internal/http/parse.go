package http

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// Limits on user input.
const (
	MaxPathValue      = 256                // bytes of an address, entity id or pricing id
	MaxPathList       = 100                // addresses or entities in one subaccounts path
	MaxHoldersLimit   = 100                // holders per page
	MaxHoldersWindow  = store.HoldersDepth // offset + limit: as deep as top_holders keeps
	DefaultSubLimit   = 1000               // subaccounts per answer
	MaxSubLimit       = 10000
	MaxInternalRefs   = 10000 // addresses in one internal totals call
	MaxInternalEntity = 1000  // entities in one internal totals call
)

// pathValue checks a path parameter.
func pathValue(name, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", params.Errorf(name, "must not be empty")
	case len(v) > MaxPathValue:
		return "", params.Errorf(name, "longer than %d bytes", MaxPathValue)
	}
	return v, nil
}

// pathList splits a comma-separated path parameter.
func pathList(name, v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" || seen[x] {
			continue
		}
		if len(x) > MaxPathValue {
			return nil, params.Errorf(name, "an item is longer than %d bytes", MaxPathValue)
		}
		if len(out) == MaxPathList {
			return nil, params.Errorf(name, "more than %d items", MaxPathList)
		}
		seen[x] = true
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, params.Errorf(name, "must name at least one item")
	}
	return out, nil
}

// ChainsQuery is ?chains.
type ChainsQuery struct{ Chains []string }

// ParseChains reads ?chains.
func ParseChains(q url.Values) (ChainsQuery, error) {
	cs, err := params.List(q, "chains")
	return ChainsQuery{Chains: cs}, err
}

// EntityBalancesQuery is ?chains&cheap.
type EntityBalancesQuery struct {
	Chains []string
	Cheap  bool
}

// ParseEntityBalances reads ?chains&cheap.
func ParseEntityBalances(q url.Values) (EntityBalancesQuery, error) {
	cs, err := params.List(q, "chains")
	if err != nil {
		return EntityBalancesQuery{}, err
	}
	cheap, err := params.Bool(q, "cheap", false)
	return EntityBalancesQuery{Chains: cs, Cheap: cheap}, err
}

// PortfolioQuery is ?time&chains.
type PortfolioQuery struct {
	Chains []string
	Time   time.Time
}

// ParsePortfolio reads ?time (Unix ms or RFC 3339; now when absent) and ?chains.
func ParsePortfolio(q url.Values, now time.Time) (PortfolioQuery, error) {
	cs, err := params.List(q, "chains")
	if err != nil {
		return PortfolioQuery{}, err
	}
	s, err := params.One(q, "time")
	if err != nil {
		return PortfolioQuery{}, err
	}
	if s == "" {
		return PortfolioQuery{Chains: cs, Time: now}, nil
	}
	t, err := params.Time(s)
	if err != nil {
		return PortfolioQuery{}, params.Errorf("time", "%v", err)
	}
	return PortfolioQuery{Chains: cs, Time: t}, nil
}

// TimeSeriesQuery is ?pricingId&chains.
type TimeSeriesQuery struct {
	Chains    []string
	PricingID string
}

// ParseTimeSeries reads ?pricingId (required) and ?chains.
func ParseTimeSeries(q url.Values) (TimeSeriesQuery, error) {
	cs, err := params.List(q, "chains")
	if err != nil {
		return TimeSeriesQuery{}, err
	}
	id, err := params.One(q, "pricingId")
	if err != nil {
		return TimeSeriesQuery{}, err
	}
	if id == "" {
		return TimeSeriesQuery{}, params.Errorf("pricingId", "required")
	}
	if len(id) > MaxPathValue {
		return TimeSeriesQuery{}, params.Errorf("pricingId", "longer than %d bytes", MaxPathValue)
	}
	return TimeSeriesQuery{Chains: cs, PricingID: id}, nil
}

// ParseHolders reads ?groupByEntity&limit(1..100, 100)&offset(0..) with offset+limit ≤ 1000.
func ParseHolders(q url.Values) (app.HoldersQuery, error) {
	g, err := params.Bool(q, "groupByEntity", false)
	if err != nil {
		return app.HoldersQuery{}, err
	}
	limit, err := params.Int(q, "limit", MaxHoldersLimit, 1, MaxHoldersLimit)
	if err != nil {
		return app.HoldersQuery{}, err
	}
	offset, err := params.Int(q, "offset", 0, 0, MaxHoldersWindow)
	if err != nil {
		return app.HoldersQuery{}, err
	}
	if offset+limit > MaxHoldersWindow {
		return app.HoldersQuery{}, params.Errorf("offset", "offset+limit must be at most %d, got %d", MaxHoldersWindow, offset+limit)
	}
	return app.HoldersQuery{GroupByEntity: g, Limit: limit, Offset: offset}, nil
}

// TokenBalanceQuery is ?entityID|address.
type TokenBalanceQuery struct{ EntityID, Address string }

// ParseTokenBalance reads exactly one of ?entityID and ?address.
func ParseTokenBalance(q url.Values) (TokenBalanceQuery, error) {
	e, err := params.One(q, "entityID")
	if err != nil {
		return TokenBalanceQuery{}, err
	}
	a, err := params.One(q, "address")
	if err != nil {
		return TokenBalanceQuery{}, err
	}
	switch {
	case e == "" && a == "":
		return TokenBalanceQuery{}, params.Errorf("entityID", "give entityID or address")
	case e != "" && a != "":
		return TokenBalanceQuery{}, params.Errorf("entityID", "give entityID or address, not both")
	case len(e) > MaxPathValue:
		return TokenBalanceQuery{}, params.Errorf("entityID", "longer than %d bytes", MaxPathValue)
	case len(a) > MaxPathValue:
		return TokenBalanceQuery{}, params.Errorf("address", "longer than %d bytes", MaxPathValue)
	}
	return TokenBalanceQuery{EntityID: e, Address: a}, nil
}

// SubaccountsQuery is a subaccounts route's path list, ?pricingID and ?limit.
type SubaccountsQuery struct {
	Items     []string
	PricingID string
	Limit     int
}

// ParseSubaccounts reads the path list (param names it), ?pricingID (required) and
// ?limit(1..10000, 1000).
func ParseSubaccounts(param, path string, q url.Values) (SubaccountsQuery, error) {
	items, err := pathList(param, path)
	if err != nil {
		return SubaccountsQuery{}, err
	}
	id, err := params.One(q, "pricingID")
	if err != nil {
		return SubaccountsQuery{}, err
	}
	if id == "" {
		return SubaccountsQuery{}, params.Errorf("pricingID", "required")
	}
	if len(id) > MaxPathValue {
		return SubaccountsQuery{}, params.Errorf("pricingID", "longer than %d bytes", MaxPathValue)
	}
	limit, err := params.Int(q, "limit", DefaultSubLimit, 1, MaxSubLimit)
	if err != nil {
		return SubaccountsQuery{}, err
	}
	return SubaccountsQuery{Items: items, PricingID: id, Limit: limit}, nil
}

// Limits of the entity balance ranking.
const (
	MaxRankingLimit  = 100
	MaxRankingOffset = 10000
)

// rankingOrders are orderBy's values; rankingIntervals interval's, in days.
var (
	rankingOrders = []string{app.OrderBalanceUSD, app.OrderBalanceUSDChange, app.OrderBalanceUSDPctChange, app.OrderBalanceUnit,
		app.OrderBalanceUnitChange, app.OrderBalanceUnitPctChange}
	rankingIntervals = map[string]int{"7d": 7, "14d": 14, "30d": 30}
)

// required is err, or when the parameter name's reading v has no error but is its zero value
// (the parameter absent or empty) the error naming it as required (what it takes).
func required[T comparable](v T, err error, name, what string) error {
	var zero T
	if err == nil && v == zero {
		err = params.Errorf(name, "required (%s)", what)
	}
	return err
}

// ParseEntityBalanceChanges reads /intelligence/entity_balance_changes: orderBy, orderDir,
// interval and limit (1..100) required; offset (0..10,000), the list filters (chains,
// entityTypes, entityIds, entityTags, negatedEntityTags, pricingIds) and the integer USD bounds
// balanceMin ≤ balanceMax optional. A unit order needs exactly one pricingIds value: units of
// different tokens do not add up.
func ParseEntityBalanceChanges(q url.Values) (app.RankingQuery, error) {
	var rq app.RankingQuery
	var err error
	rq.OrderBy, err = params.Enum(q, "orderBy", "", rankingOrders...)
	if err = required(rq.OrderBy, err, "orderBy", "one of "+strings.Join(rankingOrders, ", ")); err != nil {
		return rq, err
	}
	dir, err := params.Enum(q, "orderDir", "", "asc", "desc")
	if err = required(dir, err, "orderDir", "asc or desc"); err != nil {
		return rq, err
	}
	rq.Desc = dir == "desc"
	iv, err := params.One(q, "interval")
	if err = required(iv, err, "interval", "7d, 14d or 30d"); err != nil {
		return rq, err
	}
	if rq.Days = rankingIntervals[iv]; rq.Days == 0 {
		return rq, params.Errorf("interval", "must be one of 7d, 14d, 30d, got %q", params.Trunc(iv))
	}
	// Absent, limit reads as 0, which given is refused as below 1.
	rq.Limit, err = params.Int(q, "limit", 0, 1, MaxRankingLimit)
	if err = required(rq.Limit, err, "limit", fmt.Sprintf("1 to %d", MaxRankingLimit)); err != nil {
		return rq, err
	}
	if rq.Offset, err = params.Int(q, "offset", 0, 0, MaxRankingOffset); err != nil {
		return rq, err
	}
	if err = rankingFilters(q, &rq); err != nil {
		return rq, err
	}
	if strings.HasPrefix(rq.OrderBy, "balanceUnit") && len(rq.PricingIDs) != 1 {
		return rq, params.Errorf("orderBy", "%s needs exactly one pricingIds value (units of different tokens do not add up)", rq.OrderBy)
	}
	return rq, nil
}

// rankingFilters reads the ranking's list filters and USD bounds into rq.
func rankingFilters(q url.Values, rq *app.RankingQuery) error {
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"chains", &rq.Chains}, {"entityTypes", &rq.EntityTypes}, {"entityIds", &rq.EntityIDs}, {"entityTags", &rq.EntityTags},
		{"negatedEntityTags", &rq.NegatedEntityTags}, {"pricingIds", &rq.PricingIDs}} {
		v, err := params.List(q, f.name)
		if err != nil {
			return err
		}
		*f.dst = v
	}
	var err error
	if rq.BalanceMin, err = usdBound(q, "balanceMin"); err != nil {
		return err
	}
	if rq.BalanceMax, err = usdBound(q, "balanceMax"); err != nil {
		return err
	}
	if rq.BalanceMin != nil && rq.BalanceMax != nil && *rq.BalanceMin > *rq.BalanceMax {
		return params.Errorf("balanceMin", "must be at most balanceMax (%d > %d)", int64(*rq.BalanceMin), int64(*rq.BalanceMax))
	}
	return nil
}

// usdBound reads an optional integer USD bound.
func usdBound(q url.Values, name string) (*float64, error) {
	s, err := params.One(q, name)
	if err != nil || s == "" {
		return nil, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, params.Errorf(name, "must be an integer, got %q", params.Trunc(s))
	}
	f := float64(v)
	return &f, nil
}
