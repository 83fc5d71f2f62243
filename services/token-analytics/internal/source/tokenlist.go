// Package source reads the registry's and prices' outside sources: token lists, CSV price
// histories and a CoinGecko-compatible HTTP API (polled with backoff, within a rate limit,
// resuming each pricing id's history where the stored history ends).
package source

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// MaxTokenListBytes bounds a token list file.
const MaxTokenListBytes = 64 << 20

type listEntry struct {
	Name        string `json:"name"`
	Symbol      string `json:"symbol"`
	CoingeckoID string `json:"coingeckoId"`
	Decimals    *int32 `json:"decimals"`
}

// ParseTokenList reads a token list keyed by hex EVM chain id ("0x1") and contract address
// into registry updates, one per pricing id, keeping deployments on the chains set serves (all
// when nil). Entries without a pricing id or decimals and chains the platform does not know
// are skipped.
func ParseTokenList(r io.Reader, set *chains.Set, stablecoins []string) ([]app.TokenUpdate, error) {
	var list map[string]map[string]listEntry
	if err := json.NewDecoder(io.LimitReader(r, MaxTokenListBytes)).Decode(&list); err != nil {
		return nil, fmt.Errorf("token list: %w", err)
	}
	by := map[string]*app.TokenUpdate{}
	for key, tokens := range list {
		chain, ok := chainOfKey(key)
		if !ok || (set != nil && !set.Has(chain.Name)) {
			continue
		}
		for addr, e := range tokens {
			if e.CoingeckoID == "" || e.Decimals == nil || *e.Decimals < 0 || *e.Decimals > 77 {
				continue
			}
			u := by[e.CoingeckoID]
			if u == nil {
				u = &app.TokenUpdate{PricingID: e.CoingeckoID, Name: e.Name, Symbol: e.Symbol}
				by[e.CoingeckoID] = u
			}
			u.Deployments = append(u.Deployments, app.Deployment{Chain: chain.Name, Address: strings.ToLower(addr), Decimals: *e.Decimals})
		}
	}
	out := make([]app.TokenUpdate, 0, len(by))
	for _, u := range by {
		slices.SortFunc(u.Deployments, func(a, b app.Deployment) int {
			return strings.Compare(a.Chain+"|"+a.Address, b.Chain+"|"+b.Address)
		})
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b app.TokenUpdate) int { return strings.Compare(a.PricingID, b.PricingID) })
	return Flag(out, stablecoins), nil
}

// Flag sets the stablecoin flag of the updates whose pricing id is in stablecoins.
func Flag(us []app.TokenUpdate, stablecoins []string) []app.TokenUpdate {
	for i := range us {
		if slices.Contains(stablecoins, us[i].PricingID) {
			t := true
			us[i].Stablecoin = &t
		}
	}
	return us
}

func chainOfKey(key string) (chains.Chain, bool) {
	if !strings.HasPrefix(key, "0x") {
		return chains.Chain{}, false
	}
	id, err := strconv.ParseInt(key[2:], 16, 64)
	if err != nil {
		return chains.Chain{}, false
	}
	return chains.ByEVMChainID(id)
}

// NativeCoins are the registry entries of the native coins of the chains set serves (all when
// nil), deployed at address "".
func NativeCoins(set *chains.Set, stablecoins []string) []app.TokenUpdate {
	cs := chains.All
	if set != nil {
		cs = set.Chains()
	}
	by := map[string]*app.TokenUpdate{}
	var order []string
	for _, c := range cs {
		if c.NativePricingID == "" {
			continue
		}
		u := by[c.NativePricingID]
		if u == nil {
			u = &app.TokenUpdate{PricingID: c.NativePricingID, Name: c.NativeName, Symbol: c.NativeSymbol}
			by[c.NativePricingID] = u
			order = append(order, c.NativePricingID)
		}
		u.Deployments = append(u.Deployments, app.Deployment{Chain: c.Name, Decimals: c.NativeDecimals})
	}
	out := make([]app.TokenUpdate, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	return Flag(out, stablecoins)
}
