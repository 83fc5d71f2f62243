package app

import (
	"context"
	"math"
	"math/big"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// token is how a (chain, token) is named and priced.
type token struct {
	Chain, Address string // Address "" is the native coin
	ID             string // the pricing id, or the contract address when the registry lacks it
	PricingID      string
	Name, Symbol   string
	TVTicker       string
	Decimals       int32
}

// tokens names each (chain, token): the registry first, then what observations carried, then
// the chain catalogue for native coins.
func (a *App) tokens(ctx context.Context, keys [][2]string) (map[[2]string]token, error) {
	metas, err := a.st.TokenMetas(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[[2]string]token, len(keys))
	for _, k := range keys {
		out[k] = resolveToken(k, metas[k])
	}
	return out, nil
}

func resolveToken(k [2]string, m store.TokenMeta) token {
	t := token{Chain: k[0], Address: k[1], PricingID: m.PricingID, Name: m.Name, Symbol: m.Symbol, TVTicker: m.TVTicker, Decimals: m.Decimals}
	if t.PricingID == "" {
		t.PricingID = m.ObservedID
	}
	if t.Name == "" {
		t.Name, t.Symbol = m.ObservedName, m.ObservedSymbol
	}
	if t.Decimals < 0 && m.ObservedDecimals >= 0 && (m.ObservedID != "" || m.ObservedName != "" || k[1] != "") {
		t.Decimals = m.ObservedDecimals
	}
	if k[1] == "" {
		if c, ok := chains.Lookup(k[0]); ok {
			if t.PricingID == "" {
				t.PricingID = c.NativePricingID
			}
			if t.Name == "" {
				t.Name, t.Symbol = c.NativeName, c.NativeSymbol
			}
			if t.Decimals < 0 {
				t.Decimals = c.NativeDecimals
			}
		}
	}
	if t.Decimals < 0 {
		t.Decimals = 0
	}
	t.ID = t.PricingID
	if t.ID == "" {
		t.ID = t.Address
	}
	return t
}

// units is v / 10^decimals as the nearest float64.
func units(v *big.Int, decimals int32) float64 {
	if v == nil || v.Sign() == 0 {
		return 0
	}
	// Both operands are exact (a big.Float from an Int takes the Int's bit length) and Quo rounds
	// once to 53 bits, nearest-even: the nearest float64, as big.Rat would give, without the
	// Rat's GCD normalisation on every call.
	x := new(big.Float).SetInt(v)
	q := new(big.Float).SetPrec(53).Quo(x, pow10(decimals))
	f, _ := q.Float64()
	if math.IsInf(f, 0) {
		return math.MaxFloat64
	}
	return f
}

// pow10s holds 10^0 … 10^maxDecimals exactly.
const maxDecimals = 96

var pow10s = func() []*big.Float {
	out := make([]*big.Float, maxDecimals+1)
	p := big.NewInt(1)
	for i := range out {
		out[i] = new(big.Float).SetInt(p)
		p = new(big.Int).Mul(p, big.NewInt(10))
	}
	return out
}()

// pow10 is 10^d as an exact big.Float (read only).
func pow10(d int32) *big.Float {
	if d >= 0 && d <= maxDecimals {
		return pow10s[d]
	}
	return new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(d, 0))), nil))
}

// quote is a token's price now and 24 hours ago.
type quote struct {
	Price, Price24h float64
	Has, Has24h     bool
	Time            time.Time
}

// quotes prices the pricing ids at now and 24 h before.
func (a *App) quotes(ctx context.Context, ids []string, now time.Time) (map[string]quote, error) {
	out := map[string]quote{}
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := a.st.PricesAt(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	old, err := a.st.PricesAt(ctx, ids, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		var q quote
		if p, ok := cur[id]; ok {
			q.Price, q.Has, q.Time = p.Price, true, p.Time
		}
		if p, ok := old[id]; ok {
			q.Price24h, q.Has24h = p.Price, true
		}
		out[id] = q
	}
	return out, nil
}

// priceNow is the price in force now of pricing id id (0 without one or without a price).
func (a *App) priceNow(ctx context.Context, id string) (float64, error) {
	if id == "" {
		return 0, nil
	}
	ps, err := a.st.PricesAt(ctx, []string{id}, a.now())
	if err != nil {
		return 0, err
	}
	return ps[id].Price, nil
}

func pricingIDs(ts map[[2]string]token) []string {
	seen := map[string]bool{}
	var ids []string
	for _, t := range ts {
		if t.PricingID != "" && !seen[t.PricingID] {
			seen[t.PricingID] = true
			ids = append(ids, t.PricingID)
		}
	}
	return ids
}

func holdingKeys(hs []store.Holding) [][2]string {
	keys := make([][2]string, 0, len(hs))
	for _, h := range hs {
		keys = append(keys, [2]string{h.Chain, h.Token})
	}
	return keys
}
