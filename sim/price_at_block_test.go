package sim

import (
	"math"
	"math/big"
	"sort"
	"testing"

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
