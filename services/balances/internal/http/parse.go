package http

import (
	"net/url"
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
