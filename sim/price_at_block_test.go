package sim

import (
	"math"
	"math/big"
	"sort"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// TestTransfersPricedAtBlockTime checks every transfer's historicalUSD against the published
// ticks, as ingest prices it: amount times the newest tick of its pricing id at or before the
// block's time. Bitcoin's ten-minute and Ethereum's twelve-second blocks stay open across
// minute ticks, so pricing at the price current when the transfer is made fails this.
func TestTransfersPricedAtBlockTime(t *testing.T) {
	w := world(t, Config{Seed: 5, Chains: []string{"ethereum", "bitcoin"}})
	ticks := map[string][]*eventsv1.Price{}
	addTicks := func(b *Batch) {
		for _, p := range b.Prices {
			if p.Granularity == eventsv1.PriceGranularity_PRICE_GRANULARITY_TICK {
				ticks[p.PricingId] = append(ticks[p.PricingId], p)
			}
		}
	}
	addTicks(w.Bootstrap())
	checked := 0
	for range 6 {
		b := w.Next(2000)
		addTicks(b)
		for _, tr := range b.Transfers {
			ts := ticks[tr.TokenId]
			i := sort.Search(len(ts), func(i int) bool { return ts[i].TimeMs > tr.BlockTimeMs }) - 1
			if i < 0 {
				t.Fatalf("%s: no %s tick at or before block time %d", tr.Id, tr.TokenId, tr.BlockTimeMs)
			}
			amount, _ := new(big.Float).SetString(tr.Amount)
			units, _ := new(big.Float).Quo(amount, new(big.Float).SetFloat64(math.Pow10(int(tr.TokenDecimals)))).Float64()
			want := units * ts[i].Price
			if tr.HistoricalUsd == nil {
				t.Fatalf("%s: no historicalUSD", tr.Id)
			}
			if got := *tr.HistoricalUsd; math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("%s (%s, block time %d): historicalUSD %v, want %v at the tick of %d", tr.Id, tr.TokenId, tr.BlockTimeMs,
					got, want, ts[i].TimeMs)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no transfers to check")
	}
}

// TestSwapLegsPricedAtBlockTime checks every swap's two legs against the published ticks at
// the block's time: the pool pays out what it takes in, less its 0.3% fee, at the prices of the
// block's time, the prices both legs' USD values are taken at. Sized at the price current when
// the swap is made instead, the legs disagree by however far the prices moved since the block
// opened.
func TestSwapLegsPricedAtBlockTime(t *testing.T) {
	// Five-second ticks fall inside Ethereum's twelve-second blocks (the default minute ticks
	// fall on their boundaries, so the block's price is always the current one).
	w := world(t, Config{Seed: 5, Chains: []string{"ethereum", "tron"}, PriceInterval: 5 * time.Second})
	ticks := map[string][]*eventsv1.Price{}
	addTicks := func(b *Batch) {
		for _, p := range b.Prices {
			if p.Granularity == eventsv1.PriceGranularity_PRICE_GRANULARITY_TICK {
				ticks[p.PricingId] = append(ticks[p.PricingId], p)
			}
		}
	}
	// legUSD is a leg's USD at the block's time, and the USD of one smallest unit of its token
	// (how far truncating the output to whole units can move it).
	legUSD := func(s *eventsv1.Swap, amount, id string, decimals int32) (usd, unit float64) {
		ts := ticks[id]
		i := sort.Search(len(ts), func(i int) bool { return ts[i].TimeMs > s.BlockTimeMs }) - 1
		if i < 0 {
			t.Fatalf("%s: no %s tick at or before block time %d", s.Id, id, s.BlockTimeMs)
		}
		a, _ := new(big.Float).SetString(strings.TrimPrefix(amount, "-"))
		units, _ := new(big.Float).Quo(a, new(big.Float).SetFloat64(math.Pow10(int(decimals)))).Float64()
		return units * ts[i].Price, ts[i].Price / math.Pow10(int(decimals))
	}
	addTicks(w.Bootstrap())
	checked := 0
	for range 6 {
		b := w.Next(2000)
		addTicks(b)
		for _, s := range b.Swaps {
			usd0, unit0 := legUSD(s, s.Amount0, s.Token0Id, s.Token0Decimals)
			usd1, unit1 := legUSD(s, s.Amount1, s.Token1Id, s.Token1Decimals)
			in, out, unit := usd0, usd1, unit1 // positive: the pool received
			if strings.HasPrefix(s.Amount0, "-") {
				in, out, unit = usd1, usd0, unit0
			}
			if s.HistoricalUsd == nil || math.Abs(*s.HistoricalUsd-in) > 1e-9*math.Max(1, in) {
				t.Fatalf("%s: historicalUSD %v, want the input leg's %v", s.Id, s.HistoricalUsd, in)
			}
			if want := in * 0.997; math.Abs(out-want) > unit+1e-9*want {
				t.Fatalf("%s (%s/%s, block time %d): pays out $%v for $%v in, want $%v (0.997 of it) at the block's prices",
					s.Id, s.Token0Id, s.Token1Id, s.BlockTimeMs, out, in, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no swaps to check")
	}
}
