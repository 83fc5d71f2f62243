package sim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/sim"
)

// TestMarketFeedServesTheWorldsPrices checks the CoinGecko-compatible API against the world's
// own hourly prices.
func TestMarketFeedServesTheWorldsPrices(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w, err := sim.New(sim.Config{Seed: 3, Chains: []string{"ethereum"}, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	feed := sim.NewMarketFeed()
	feed.Record(w.Bootstrap())
	var hourly = map[int64]float64{}
	for i := 0; i < 10; i++ {
		b := w.NextUntil(start.Add(time.Duration(i+1)*time.Hour), 5)
		for _, p := range b.Prices {
			if p.PricingId == "ethereum" && p.Granularity == 2 {
				hourly[p.TimeMs] = p.Price
			}
		}
		feed.Record(b)
	}
	if len(hourly) < 5 {
		t.Fatalf("the world made %d hourly ethereum prices", len(hourly))
	}
	srv := httptest.NewServer(feed.Handler())
	defer srv.Close()
	var chart struct{ Prices [][2]float64 }
	get(t, srv.URL+"/coins/ethereum/market_chart/range?vs_currency=usd&from="+strconv.FormatInt(start.Add(-200*time.Hour).Unix(), 10)+
		"&to="+strconv.FormatInt(start.Add(20*time.Hour).Unix(), 10), &chart)
	seen := 0
	for i, p := range chart.Prices {
		if i > 0 && int64(p[0])-int64(chart.Prices[i-1][0]) != time.Hour.Milliseconds() {
			t.Fatalf("gap or duplicate at %v", p)
		}
		if want, ok := hourly[int64(p[0])]; ok {
			seen++
			if p[1] != want {
				t.Errorf("%v: %v, want %v", p[0], p[1], want)
			}
		}
	}
	if seen != len(hourly) || len(chart.Prices) < 200 {
		t.Errorf("%d points, %d of the world's %d hourly prices", len(chart.Prices), seen, len(hourly))
	}
	var markets []struct {
		ID           string  `json:"id"`
		CurrentPrice float64 `json:"current_price"`
	}
	get(t, srv.URL+"/coins/markets?vs_currency=usd&ids=ethereum,nope", &markets)
	if p, _ := w.Price("ethereum"); len(markets) != 1 || markets[0].ID != "ethereum" || markets[0].CurrentPrice != p {
		t.Errorf("markets %+v, want ethereum at %v", markets, p)
	}
	// The wrapped-tokens category: the wrapped copies this world prices (WETH and WBTC; it has
	// no chain WSOL lives on).
	get(t, srv.URL+"/coins/markets?vs_currency=usd&category=wrapped-tokens", &markets)
	var ids []string
	for _, m := range markets {
		ids = append(ids, m.ID)
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{"weth", "wrapped-bitcoin"}) {
		t.Errorf("wrapped-tokens category: %v", ids)
	}
	get(t, srv.URL+"/coins/markets?vs_currency=usd&category=meme-token", &markets)
	if len(markets) != 0 {
		t.Errorf("a category the feed does not know: %+v", markets)
	}
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("%s: %d", url, r.StatusCode)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
