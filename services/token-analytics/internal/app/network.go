package app

import (
	"context"
	"math"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
)

// BlockStat is what chain.transactions.v1 told of one block: its transaction count (the
// highest transaction index seen plus one) and the lowest effective gas price (wei) of its
// transactions, nil when none carried one.
type BlockStat struct {
	Chain        string
	Hash         string
	Number       uint64
	Time         time.Time
	Transactions int
	MinGasPrice  *float64
}

// NetworkFigures are the stored figures behind one chain's status (see
// internal/store/sql/network_status.sql).
type NetworkFigures struct {
	Chain          string
	Tip            uint64
	TipTime        time.Time
	WindowTxs      int64     // transactions of the blocks in the hour up to the tip
	Oldest         time.Time // time of the oldest block of that hour
	OldestTxs      int64     // its transactions
	GasPrice       *float64  // mean of the hour's blocks' lowest gas prices, wei
	GasTime        *time.Time
	Transfers      int64 // transfers of the 24 hours up to the tip
	TransfersHour  *time.Time
	Price          *float64
	PriceTime      *time.Time
	MarketCap      *float64
	Volume24h      *float64
	Price24hBefore *float64
}

// NetworkStatus is one chain of GET /networks/status.
type NetworkStatus struct {
	Chain                 string            `json:"chain"`
	Active                bool              `json:"active"`
	Price                 float64           `json:"price"`
	PriceChange24h        float64           `json:"priceChange24h"`
	PriceChange24hPercent float64           `json:"priceChange24hPercent"`
	Volume                float64           `json:"volume"`
	MarketCap             float64           `json:"marketCap"`
	Tip                   uint64            `json:"tip"`
	TPS                   float64           `json:"tps"`
	Transfers             int64             `json:"transfers"`
	GasFee                *float64          `json:"gasFee"`
	SatFee                *int64            `json:"satFee"` // null: no event carries a transaction's vsize, so no sat/vB
	AsOf                  NetworkStatusAsOf `json:"asOf"`
}

// NetworkStatusAsOf says how fresh each part of a NetworkStatus is: the tip block's time, the
// newest hour of transfers counted, the native quote's time and the newest block a gas price
// came from (null when none; price is null when the coin has no quote yet).
type NetworkStatusAsOf struct {
	Fee       *time.Time `json:"fee"`
	Price     *time.Time `json:"price"`
	Tip       time.Time  `json:"tip"`
	Transfers time.Time  `json:"transfers"`
}

// NetworkActiveWindow is how recent a chain's tip must be for the chain to count as active.
const NetworkActiveWindow = time.Hour

// NetworkStatus is the status of every chain of cs that has a block: its tip, transactions per
// second over the hour up to the tip, transfers over the 24 hours up to it, gas price (gwei) and
// the native coin's quote, keyed by chain name.
func (s *Service) NetworkStatus(ctx context.Context, cs []chains.Chain) (map[string]NetworkStatus, error) {
	names, ids := make([]string, len(cs)), make([]string, len(cs))
	for i, c := range cs {
		names[i], ids[i] = c.Name, c.NativePricingID
	}
	fs, err := s.st.NetworkFigures(ctx, names, ids)
	if err != nil {
		return nil, err
	}
	now := s.o.Now()
	out := make(map[string]NetworkStatus, len(fs))
	for _, f := range fs {
		out[f.Chain] = networkStatus(f, now)
	}
	return out, nil
}

func networkStatus(f NetworkFigures, now time.Time) NetworkStatus {
	st := NetworkStatus{Chain: f.Chain, Tip: f.Tip, Transfers: f.Transfers,
		Active:    now.Sub(f.TipTime) <= NetworkActiveWindow,
		Price:     deref(f.Price),
		Volume:    deref(f.Volume24h),
		MarketCap: deref(f.MarketCap),
		AsOf:      NetworkStatusAsOf{Tip: f.TipTime.UTC(), Transfers: f.TipTime.UTC(), Fee: utc(f.GasTime), Price: utc(f.PriceTime)}}
	if f.TransfersHour != nil {
		st.AsOf.Transfers = f.TransfersHour.UTC()
	}
	// A rate needs two points: the transactions after the oldest block of the hour, over the
	// time since it.
	if span := f.TipTime.Sub(f.Oldest).Seconds(); span > 0 {
		st.TPS = round(float64(f.WindowTxs-f.OldestTxs)/span, 4)
	}
	if f.GasPrice != nil {
		g := round(*f.GasPrice/1e9, 4)
		st.GasFee = &g
	}
	if f.Price != nil && f.Price24hBefore != nil {
		st.PriceChange24h = *f.Price - *f.Price24hBefore
		if *f.Price24hBefore != 0 {
			st.PriceChange24hPercent = round(st.PriceChange24h / *f.Price24hBefore * 100, 4)
		}
	}
	return st
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func round(v float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(v*p) / p
}
