// Package source reads the registry's and prices' outside sources: token lists, CSV price
// histories and a CoinGecko-compatible HTTP API (polled with backoff, within a rate limit,
// resuming each pricing id's history where the stored history ends).
package source

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// WellKnown is a token list of wrapped native coins the public lists leave out (WETH, WBTC),
// imported with any configured token list.
//
//go:embed lists/well-known.json
var WellKnown []byte

// csvSymbols maps the symbol of a CoinGecko price export's file name ("eth-usd-max.csv") to
// its pricing id, for the coins whose symbol is unambiguous.
var csvSymbols = map[string]string{"btc": "bitcoin", "eth": "ethereum", "usdc": "usd-coin", "usdt": "tether",
	"dai": "dai", "bnb": "binancecoin", "sol": "solana", "pol": "matic-network", "matic": "matic-network",
	"avax": "avalanche-2", "trx": "tron", "doge": "dogecoin", "ton": "the-open-network", "weth": "weth",
	"wbtc": "wrapped-bitcoin", "link": "chainlink", "uni": "uniswap"}

// PriceCSVsIn lists the CoinGecko price exports in dir ("[<prefix>__]<symbol>-usd-max.csv") whose
// symbol is in the well-known table, as "<pricingId>=<path>" entries.
func PriceCSVsIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if _, after, ok := strings.Cut(name, "__"); ok {
			name = after
		}
		sym, ok := strings.CutSuffix(name, "-usd-max.csv")
		if id := csvSymbols[sym]; ok && id != "" {
			out = append(out, id+"="+filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}
