package app

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoPriceThen is a past time before the first price of a token: nothing was in force then.
var ErrNoPriceThen = errors.New("no price in force then")

// Limits of the price routes.
const (
	// RecentHistoryWindow is what GET /token/price/history answers without daily=true: the
	// finest points (hourly where the poller keeps them) of the last 30 days, at most 720.
	RecentHistoryWindow = 30 * 24 * time.Hour
	// MaxHistoryPoints bounds one price history answer (about 1 MB of JSON): daily=true answers
	// the newest this many daily points, over 27 years.
	MaxHistoryPoints = 10000
)

// marketAgo are the times before now whose prices in force GET /token/market shows.
var marketAgo = [...]time.Duration{24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour, 180 * 24 * time.Hour}

// MarketData is GET /token/market/{id}. The numbers the public shape requires are 0 when
// unknown (no 24 h volume, no price in force that long ago); the nullable ones are null.
type MarketData struct {
	Price             float64  `json:"price"`
	TotalVolume       float64  `json:"totalVolume"`
	Price24hAgo       float64  `json:"price24hAgo"`
	MaxPrice24h       float64  `json:"maxPrice24h"`
	MinPrice24h       float64  `json:"minPrice24h"`
	CirculatingSupply *float64 `json:"circulatingSupply"`
	TotalSupply       *float64 `json:"totalSupply"`
	Price7dAgo        float64  `json:"price7dAgo"`
	Price30dAgo       float64  `json:"price30dAgo"`
	Price180dAgo      float64  `json:"price180dAgo"`
	AllTimeHigh       float64  `json:"allTimeHigh"`
	AllTimeLow        float64  `json:"allTimeLow"`
	MarketCap         *float64 `json:"marketCap"`
	FullyDilutedValue *float64 `json:"fullyDilutedValue"`
}

// PriceChange is GET /token/price_change/{id}.
type PriceChange struct {
	PricingID       string  `json:"pricingID"`
	CurrentPrice    float64 `json:"currentPrice"`
	HistoricalPrice float64 `json:"historicalPrice"`
}

// pricedToken is the registry entry of id, a not-found error when the registry does not hold it
// or has no price of it (every route here shows a current price, and a $0 stand-in would be a
// wrong one).
func (s *Service) pricedToken(ctx context.Context, id string) (Token, error) {
	t, _, err := s.deployments(ctx, TokenRef{PricingID: id}, nil)
	if err != nil {
		return Token{}, err
	}
	if t.Price == nil {
		return Token{}, fmt.Errorf("token %s has no price (%w)", id, ErrNotFound)
	}
	return t, nil
}

// MarketData returns a token's current market data. The figures /token/trending shows (price,
// 24 h volume, all-time high and low, circulating and total supply) are composed as there
// (trendingOf); the prices 24 h, 7, 30 and 180 days ago (those in force then) and the 24 h
// high and low are read in one round trip (MarketPrices); the 24 h high and low are taken over
// the price in force 24 h ago, every stored point since and the current price, so they hold
// however sparse the history (daily CSV points only); the fully diluted value is price × total
// supply, null without a total supply.
func (s *Service) MarketData(ctx context.Context, id string) (MarketData, error) {
	t, err := s.pricedToken(ctx, id)
	if err != nil {
		return MarketData{}, err
	}
	var ext map[string]Extremes
	if t.AllTimeHigh == nil || t.AllTimeLow == nil {
		if ext, err = s.st.PriceExtremes(ctx, []string{id}); err != nil {
			return MarketData{}, err
		}
	}
	tt := trendingOf(t, ext)
	now := s.o.Now().UTC()
	times := make([]time.Time, len(marketAgo))
	for i, d := range marketAgo {
		times[i] = now.Add(-d)
	}
	ago, high, low, err := s.st.MarketPrices(ctx, id, times, times[0], now)
	if err != nil {
		return MarketData{}, err
	}
	if len(ago) != len(times) {
		return MarketData{}, fmt.Errorf("prices of %s in force: %d rows for %d times", id, len(ago), len(times))
	}
	p := *t.Price
	m := MarketData{Price: p, TotalVolume: deref(t.Volume24h),
		Price24hAgo: deref(ago[0]), Price7dAgo: deref(ago[1]), Price30dAgo: deref(ago[2]), Price180dAgo: deref(ago[3]),
		MaxPrice24h: p, MinPrice24h: p, AllTimeHigh: *tt.AllTimeHigh, AllTimeLow: *tt.AllTimeLow,
		CirculatingSupply: tt.CirculatingSupply, TotalSupply: t.TotalSupply, MarketCap: t.MarketCap}
	for _, x := range []*float64{ago[0], high, low} {
		if x != nil {
			m.MaxPrice24h, m.MinPrice24h = max(m.MaxPrice24h, *x), min(m.MinPrice24h, *x)
		}
	}
	if t.TotalSupply != nil {
		fdv := p * *t.TotalSupply
		m.FullyDilutedValue = &fdv
	}
	return m, nil
}

// TokenPriceHistory returns a token's price history, oldest first: with daily, its newest
// MaxHistoryPoints daily points (the whole stored history of any coin); otherwise the points of
// the last RecentHistoryWindow at the finest granularity stored at each time (hourly where the
// price API's history is kept, the daily points of a token priced by CSVs alone). A token
// without points in the window has an empty history.
func (s *Service) TokenPriceHistory(ctx context.Context, ref TokenRef, daily bool) ([]Quote, error) {
	t, _, err := s.deployments(ctx, ref, nil)
	if err != nil {
		return nil, err
	}
	var qs []Quote
	if daily {
		qs, err = s.st.NewestPriceHistory(ctx, t.PricingID, Daily, MaxHistoryPoints)
	} else {
		now := s.o.Now().UTC()
		qs, err = s.st.RecentPriceHistory(ctx, t.PricingID, now.Add(-RecentHistoryWindow), now, MaxHistoryPoints)
	}
	if qs == nil && err == nil {
		qs = []Quote{}
	}
	return qs, err
}

// PriceChange returns a token's current price (its quote) and the price in force at past: the
// newest stored point at or before it, or the quote itself when past is at or after the quote's
// time (a live quote is not stored as history). A past before the first stored price is
// ErrNoPriceThen, naming that first time.
func (s *Service) PriceChange(ctx context.Context, id string, past time.Time) (PriceChange, error) {
	t, err := s.pricedToken(ctx, id)
	if err != nil {
		return PriceChange{}, err
	}
	c := PriceChange{PricingID: id, CurrentPrice: *t.Price}
	if !t.PriceTime.IsZero() && !past.Before(t.PriceTime) {
		c.HistoricalPrice = c.CurrentPrice
		return c, nil
	}
	p, ok, err := s.st.PriceInForce(ctx, id, past)
	if err != nil {
		return PriceChange{}, err
	}
	if ok {
		c.HistoricalPrice = p
		return c, nil
	}
	first, err := s.st.FirstPriceTime(ctx, id)
	if err != nil {
		return PriceChange{}, err
	}
	at := past.UTC().Format(time.RFC3339Nano)
	if first.IsZero() {
		return PriceChange{}, fmt.Errorf("pastTime: %s is before the price of %s, quoted at %s (%w)", at, id,
			t.PriceTime.UTC().Format(time.RFC3339Nano), ErrNoPriceThen)
	}
	return PriceChange{}, fmt.Errorf("pastTime: %s is before the first stored price of %s, at %s (%w)", at, id,
		first.Format(time.RFC3339Nano), ErrNoPriceThen)
}

// Addresses returns the contract of each chain a token is deployed on (on the deployment's
// chains), null for a chain's native coin. Of several contracts of one pricing id on one chain
// (the registry keys deployments by chain and contract) the first by address is shown, the
// native coin first.
func (s *Service) Addresses(ctx context.Context, id string) (map[string]*string, error) {
	_, deps, err := s.deployments(ctx, TokenRef{PricingID: id}, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]*string{}
	for _, d := range deps {
		if _, seen := out[d.Chain]; seen {
			continue
		}
		var a *string
		if d.Address != "" {
			a = &d.Address
		}
		out[d.Chain] = a
	}
	return out, nil
}

// Now is the service's clock (what "the future" of a past time is measured against).
func (s *Service) Now() time.Time { return s.o.Now() }
