package sim

import (
	"math"
	"slices"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// advancePrices moves every price in PriceInterval steps up to t, recording a tick per step and
// an hourly and daily point on those boundaries. A gap longer than 30 days is skipped in one jump.
func (w *World) advancePrices(t time.Time, b *Batch) {
	iv := w.cfg.PriceInterval
	if t.Sub(w.priceAt) > 30*24*time.Hour {
		w.priceAt = t.Add(-30 * 24 * time.Hour).Truncate(iv)
	}
	for !w.priceAt.Add(iv).After(t) {
		w.priceAt = w.priceAt.Add(iv)
		for _, p := range w.priceList {
			if p.track != nil {
				continue
			}
			if p.spec.stablecoin {
				p.value = 1 + (p.value-1)*0.98 + w.r.NormFloat64()*0.0004
				continue
			}
			s := p.spec.sigma * math.Sqrt(iv.Minutes())
			p.value *= math.Exp(w.r.NormFloat64()*s - s*s/2)
		}
		for _, p := range w.priceList {
			if p.track != nil {
				p.value = p.track.value
			}
		}
		w.recordPrices()
		w.emitPrices(b, w.priceAt)
	}
}

// recordPrices appends every price's value at priceAt to its history and drops the ticks no
// block time can need: those before the newest one in force priceKeep before priceAt.
func (w *World) recordPrices() {
	cut := w.priceAt.Add(-w.priceKeep)
	for _, p := range w.priceList {
		p.hist = append(p.hist, pricePoint{at: w.priceAt, value: p.value})
		drop := 0
		for drop+1 < len(p.hist) && !p.hist[drop+1].at.After(cut) {
			drop++
		}
		if drop > 0 {
			p.hist = append(p.hist[:0], p.hist[drop:]...)
		}
	}
}

func (w *World) emitPrices(b *Batch, at time.Time) {
	ms := at.UnixMilli()
	gran := []eventsv1.PriceGranularity{eventsv1.PriceGranularity_PRICE_GRANULARITY_TICK}
	if at.Truncate(time.Hour).Equal(at) {
		gran = append(gran, eventsv1.PriceGranularity_PRICE_GRANULARITY_HOURLY)
	}
	if at.Truncate(24 * time.Hour).Equal(at) {
		gran = append(gran, eventsv1.PriceGranularity_PRICE_GRANULARITY_DAILY)
	}
	for _, p := range w.priceList {
		if !w.priced(p.spec.pricingID) {
			continue
		}
		mc := p.value * p.supply()
		for _, g := range gran {
			b.Prices = append(b.Prices, &eventsv1.Price{PricingId: p.spec.pricingID, TimeMs: ms, Price: p.value, MarketCap: &mc, Granularity: g})
		}
	}
}

// priced says whether a pricing id is used by any simulated chain.
func (w *World) priced(id string) bool {
	for _, cs := range w.chains {
		if cs.token(id) != nil {
			return true
		}
	}
	return false
}

// majorSupply is the circulating supply of the coins the others' market caps are read against
// (the altcoin index ranks by market cap, /token/top shows it).
var majorSupply = map[string]float64{"bitcoin": 19.8e6, "ethereum": 120e6, "solana": 470e6, "usd-coin": 34e9, "tether": 118e9}

// supply is a made-up circulating supply so market caps look plausible: a major's own, a
// wrapped coin about a hundredth of what it wraps (WBTC and WETH are 0.7% and 2.5% of theirs,
// not the billion coins at the wrapped coin's price that put WBTC's cap at 50 times BTC's), any
// other coin a cap of 4 billion dollars at its starting price.
func (p *price) supply() float64 {
	if s, ok := majorSupply[p.spec.pricingID]; ok {
		return s
	}
	if s, ok := majorSupply[p.spec.tracks]; ok {
		return s / 100
	}
	if p.spec.price > 0 {
		return 4e9 / p.spec.price
	}
	return 1e9
}

// Price returns a pricing id's current simulated USD price.
func (w *World) Price(pricingID string) (float64, bool) {
	p, ok := w.prices[pricingID]
	if !ok || !w.priced(pricingID) {
		return 0, false
	}
	return p.value, true
}

// Bootstrap returns what a consumer needs before the first transaction: the token registry
// (market.tokens.v1), token metadata (chain.tokens.v1), the token contracts (chain.contracts.v1),
// the current prices and every address's
// starting balance (at the block of the current clock).
func (w *World) Bootstrap() *Batch {
	b := &Batch{}
	b.MarketTokens = w.MarketTokens()
	for _, cs := range w.chains {
		for _, t := range cs.tokens[1:] {
			b.Tokens = append(b.Tokens, &eventsv1.Token{Chain: cs.chain.Name, Address: t.address, Name: t.name, Symbol: t.symbol,
				Decimals: t.decimals, PricingId: t.pricingID, DiscoveredBlock: cs.timing.first})
		}
	}
	b.Contracts = w.tokenContracts()
	w.emitPrices(b, w.priceAt)
	for _, cs := range w.chains {
		// The balances before the first simulated transaction, as of the block before the
		// clock's: transactions from the clock on may land in the clock's block, whose
		// observations are taken when it ends, and one block hash carries one balance per key.
		next := cs.blockAt(w, w.now)
		n := next - 1
		bt := cs.blockTime(w, next).Add(-cs.timing.interval).UnixMilli()
		hash := blockHash(w.cfg.Seed, cs.chain.Type, cs.chain.Name, n)
		for _, a := range cs.accounts {
			for i, t := range cs.tokens {
				if a.bal[i].IsZero() {
					continue
				}
				b.Balances = append(b.Balances, &eventsv1.BalanceObservation{
					Chain: cs.chain.Name, Address: a.addr.Address, TokenAddress: t.address, TokenId: t.pricingID, TokenName: t.name,
					TokenSymbol: t.symbol, TokenDecimals: t.decimals, BlockNumber: n, BlockTimeMs: bt, Balance: a.bal[i].Dec(),
					OwnerAddress: a.addr.OwnerAddress, SubaccountKind: a.addr.Kind, BlockHash: hash,
				})
			}
		}
	}
	return b
}

// MarketTokens is the simulated token registry: every priced asset with its deployments on the
// simulated chains (native coins with an empty address).
func (w *World) MarketTokens() []*eventsv1.MarketToken {
	var out []*eventsv1.MarketToken
	for _, p := range w.priceList {
		var deps []*eventsv1.MarketToken_Deployment
		for _, cs := range w.chains {
			for _, t := range cs.tokens {
				if t.pricingID == p.spec.pricingID {
					deps = append(deps, &eventsv1.MarketToken_Deployment{Chain: cs.chain.Name, Address: t.address, Decimals: t.decimals})
				}
			}
		}
		if len(deps) == 0 {
			continue
		}
		supply := p.supply()
		mc := supply * p.value
		ath, atl := p.value*1.8, p.value*0.05
		if p.spec.stablecoin {
			ath, atl = 1.02, 0.97
		}
		out = append(out, &eventsv1.MarketToken{PricingId: p.spec.pricingID, Name: p.spec.name, Symbol: p.spec.symbol,
			Deployments: deps, Stablecoin: p.spec.stablecoin, TvTicker: p.spec.ticker, CirculatingSupply: &supply, MarketCap: &mc,
			AllTimeHigh: &ath, AllTimeLow: &atl})
	}
	slices.SortFunc(out, func(a, b *eventsv1.MarketToken) int {
		if a.PricingId < b.PricingId {
			return -1
		}
		return 1
	})
	return out
}
