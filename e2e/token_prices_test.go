package e2e

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// tokenQuote is one point of /token/price/history; every field is required.
type tokenQuote struct {
	Time      *time.Time `json:"time"`
	USD       *float64   `json:"usd"`
	Volume24h *float64   `json:"volume24h"`
	MarketCap *float64   `json:"marketCap"`
}

// GET /token/market/{id}, /token/price/history/{id} and /{chain}/{address},
// /token/price_change/{id} and /token/addresses/{id} through the edge, on the simulated market
// the local stack prices through its CoinGecko-compatible feed (hourly history): the market
// data's price is the quote /token/trending shows, within its 24 h high and low; the history is
// oldest first, hourly over the last 30 days and daily at 00:00 UTC with daily=true; a contract's
// history is its pricing id's; bad input is a 400 naming the parameter, an unknown token a 404.
func TestTokenPriceRoutesThroughEdge(t *testing.T) {
	p := Get(t)
	type market struct {
		Price       float64  `json:"price"`
		Price24hAgo float64  `json:"price24hAgo"`
		MaxPrice24h float64  `json:"maxPrice24h"`
		MinPrice24h float64  `json:"minPrice24h"`
		AllTimeHigh float64  `json:"allTimeHigh"`
		AllTimeLow  float64  `json:"allTimeLow"`
		MarketCap   *float64 `json:"marketCap"`
	}
	Eventually(t, 120*time.Second, func() error {
		var m market
		r := p.Get(t, "/token/market/ethereum")
		if r.Status != http.StatusOK {
			return fmt.Errorf("/token/market/ethereum: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &m)
		var tr struct {
			Price float64 `json:"price"`
		}
		r2 := p.Get(t, "/token/trending/ethereum")
		if r2.Status != http.StatusOK {
			return fmt.Errorf("/token/trending/ethereum: %d %s", r2.Status, r2.Body)
		}
		r2.JSON(t, &tr)
		switch {
		case m.Price <= 0 || m.Price24hAgo <= 0:
			return fmt.Errorf("no price or none 24 h ago yet: %s", r.Body)
		case m.Price != tr.Price:
			return fmt.Errorf("market price %v, trending %v", m.Price, tr.Price)
		case m.MinPrice24h > m.Price || m.MaxPrice24h < m.Price || m.MinPrice24h > m.Price24hAgo || m.MaxPrice24h < m.Price24hAgo ||
			m.AllTimeHigh < m.MaxPrice24h || m.AllTimeLow > m.MinPrice24h:
			return fmt.Errorf("the 24 h and all-time extremes do not hold the prices: %s", r.Body)
		}
		return nil
	})
	history := func(path string) ([]tokenQuote, error) {
		var qs []tokenQuote
		r := p.Get(t, path)
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
		r.JSON(t, &qs)
		for i, q := range qs {
			if q.Time == nil || q.USD == nil || q.Volume24h == nil || q.MarketCap == nil {
				return nil, fmt.Errorf("%s: point %d lacks a field: %s", path, i, r.Body)
			}
			if i > 0 && !qs[i-1].Time.Before(*q.Time) {
				return nil, fmt.Errorf("%s: points not oldest first: %s", path, r.Body)
			}
		}
		return qs, nil
	}
	Eventually(t, 120*time.Second, func() error {
		hourly, err := history("/token/price/history/ethereum")
		if err != nil {
			return err
		}
		daily, err := history("/token/price/history/ethereum?daily=true")
		if err != nil {
			return err
		}
		if len(hourly) < 24 || len(hourly) > 720 || len(daily) < 2 {
			return fmt.Errorf("%d hourly points, %d daily ones", len(hourly), len(daily))
		}
		since := time.Now().Add(-30*24*time.Hour - time.Minute)
		for _, q := range hourly {
			if q.Time.Before(since) || !q.Time.Truncate(time.Hour).Equal(*q.Time) {
				return fmt.Errorf("hourly point at %s", q.Time)
			}
		}
		for _, q := range daily {
			if !q.Time.Truncate(24 * time.Hour).Equal(*q.Time) {
				return fmt.Errorf("daily point at %s", q.Time)
			}
		}
		return nil
	})
	// A contract's history is its pricing id's; its address comes from /token/addresses.
	Eventually(t, 60*time.Second, func() error {
		var addrs map[string]*string
		r := p.Get(t, "/token/addresses/tether")
		if r.Status != http.StatusOK {
			return fmt.Errorf("/token/addresses/tether: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &addrs)
		a := addrs["ethereum"]
		if a == nil || *a == "" {
			return fmt.Errorf("tether has no ethereum contract: %s", r.Body)
		}
		byID, err := history("/token/price/history/tether?daily=true")
		if err != nil {
			return err
		}
		byContract, err := history("/token/price/history/ethereum/" + *a + "?daily=true")
		if err != nil {
			return err
		}
		if len(byID) == 0 || !reflect.DeepEqual(byID, byContract) {
			return fmt.Errorf("tether: %d daily points by pricing id, %d by contract %s", len(byID), len(byContract), *a)
		}
		return nil
	})
	Eventually(t, 60*time.Second, func() error {
		var c struct {
			PricingID       string  `json:"pricingID"`
			CurrentPrice    float64 `json:"currentPrice"`
			HistoricalPrice float64 `json:"historicalPrice"`
		}
		past := strconv.FormatInt(time.Now().Add(-6*time.Hour).UnixMilli(), 10)
		r := p.Get(t, "/token/price_change/ethereum?pastTime="+past)
		if r.Status != http.StatusOK {
			return fmt.Errorf("/token/price_change/ethereum: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &c)
		if c.PricingID != "ethereum" || c.CurrentPrice <= 0 || c.HistoricalPrice <= 0 {
			return fmt.Errorf("price change: %s", r.Body)
		}
		return nil
	})
	for path, want := range map[string]string{
		"/token/price/history/nochain/0xdac17f958d2ee523a2206206994597c13d831ec7": `chain: unknown chain "nochain"`,
		"/token/price/history/ethereum?daily=maybe":                               `daily: must be true or false, got "maybe"`,
		"/token/price_change/ethereum":                                            "pastTime: is required: Unix milliseconds or RFC 3339, such as 2024-01-01T00:00:00Z",
		"/token/price_change/ethereum?pastTime=soon":                              `pastTime: time "soon" must be Unix milliseconds or RFC 3339`,
	} {
		if r := p.Get(t, path); r.Status != http.StatusBadRequest || r.Error() != want {
			t.Errorf("%s: %d %s, want 400 %q", path, r.Status, r.Body, want)
		}
	}
	for _, path := range []string{"/token/market/nosuchtoken", "/token/price/history/nosuchtoken", "/token/addresses/nosuchtoken",
		"/token/price_change/nosuchtoken?pastTime=0"} {
		if r := p.Get(t, path); r.Status != http.StatusNotFound || r.Error() != "token nosuchtoken: not found" {
			t.Errorf("%s: %d %s, want 404", path, r.Status, r.Body)
		}
	}
}
