package sim

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// MarketFeed keeps the simulated market as the runner generates it and serves it as a
// CoinGecko-compatible HTTP API (/coins/markets, /coins/{id}/market_chart/range, /ping), so
// token-analytics prices the simulated world through the same polling path as a real price
// source. Hourly history before the world's first hour is a deterministic random walk back from
// its first price (PrehistoryDays), so 90-day comparisons have data. It is safe for concurrent
// use.
type MarketFeed struct {
	mu     sync.RWMutex
	tokens map[string]*eventsv1.MarketToken
	hourly map[string][]feedPoint // oldest first
	last   map[string]feedPoint   // the newest tick
}

type feedPoint struct {
	ms        int64
	price, mc float64
}

// PrehistoryDays is how much hourly history the feed makes up before the world's first hour.
const PrehistoryDays = 100

// NewMarketFeed returns an empty feed; give it every batch with Record (RunnerConfig.OnBatch).
func NewMarketFeed() *MarketFeed {
	return &MarketFeed{tokens: map[string]*eventsv1.MarketToken{}, hourly: map[string][]feedPoint{}, last: map[string]feedPoint{}}
}

// Record adds a batch's registry entries and prices.
func (f *MarketFeed) Record(b *Batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range b.MarketTokens {
		f.tokens[m.PricingId] = m
	}
	for _, p := range b.Prices {
		pt := feedPoint{ms: p.TimeMs, price: p.Price, mc: p.GetMarketCap()}
		switch p.Granularity {
		case eventsv1.PriceGranularity_PRICE_GRANULARITY_HOURLY:
			hs := f.hourly[p.PricingId]
			if len(hs) == 0 {
				hs = prehistory(pt)
			}
			if hs[len(hs)-1].ms < pt.ms {
				hs = append(hs, pt)
			}
			f.hourly[p.PricingId] = hs
		case eventsv1.PriceGranularity_PRICE_GRANULARITY_TICK:
			if pt.ms >= f.last[p.PricingId].ms {
				f.last[p.PricingId] = pt
			}
		}
	}
}

// prehistory walks back from first, one point an hour, seeded by the price itself so assets that
// track another (wrapped coins) get the same history.
func prehistory(first feedPoint) []feedPoint {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.FormatFloat(first.price, 'g', -1, 64)))
	r := rand.New(rand.NewPCG(h.Sum64(), 7))
	stable := math.Abs(first.price-1) < 0.05
	n := PrehistoryDays * 24
	out := make([]feedPoint, n+1)
	out[n] = first
	supply := 0.0
	if first.price > 0 {
		supply = first.mc / first.price
	}
	for i := n - 1; i >= 0; i-- {
		p := out[i+1].price * math.Exp(r.NormFloat64()*0.012)
		if stable {
			p = 1 + r.NormFloat64()*0.001
		}
		out[i] = feedPoint{ms: out[i+1].ms - time.Hour.Milliseconds(), price: p, mc: p * supply}
	}
	return out
}

// Handler serves the API under its root (mount it at ".../api/v3").
func (f *MarketFeed) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"gecko_says": "(V3) To the Moon!"})
	})
	mux.HandleFunc("GET /coins/markets", f.markets)
	mux.HandleFunc("GET /coins/{id}/market_chart/range", f.chartRange)
	return mux
}

type feedMarket struct {
	ID                string   `json:"id"`
	Symbol            string   `json:"symbol"`
	Name              string   `json:"name"`
	CurrentPrice      float64  `json:"current_price"`
	MarketCap         float64  `json:"market_cap"`
	TotalVolume       float64  `json:"total_volume"`
	CirculatingSupply *float64 `json:"circulating_supply"`
	TotalSupply       *float64 `json:"total_supply"`
	ATH               float64  `json:"ath"`
	ATL               float64  `json:"atl"`
	LastUpdated       string   `json:"last_updated"`
}

func (f *MarketFeed) markets(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("vs_currency") != "usd" {
		http.Error(w, `{"error":"vs_currency must be usd"}`, http.StatusBadRequest)
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := []feedMarket{}
	ids := strings.Split(r.URL.Query().Get("ids"), ",")
	if c := r.URL.Query().Get("category"); c != "" {
		ids = categoryIDs(c)
	}
	for _, id := range ids {
		t, ok := f.tokens[id]
		last, priced := f.last[id]
		if !ok || !priced {
			continue
		}
		m := feedMarket{ID: id, Symbol: strings.ToLower(t.Symbol), Name: t.Name, CurrentPrice: last.price, MarketCap: last.mc,
			CirculatingSupply: t.CirculatingSupply, TotalSupply: t.CirculatingSupply, ATH: t.GetAllTimeHigh(), ATL: t.GetAllTimeLow(),
			LastUpdated: time.UnixMilli(last.ms).UTC().Format(time.RFC3339)}
		m.TotalVolume = f.volume24h(id, last)
		for _, p := range f.hourly[id] {
			m.ATH, m.ATL = math.Max(m.ATH, p.price), math.Min(m.ATL, p.price)
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b feedMarket) int { return -cmpFloat(a.MarketCap, b.MarketCap) })
	writeJSON(w, out)
}

// WrappedCategory is the CoinGecko category of wrapped copies of other coins; the feed puts the
// catalogue's assets that track another (WETH, WBTC, WSOL) in it.
const WrappedCategory = "wrapped-tokens"

// categoryIDs are the pricing ids of a category (none for a category the feed does not know).
func categoryIDs(category string) []string {
	var out []string
	for _, a := range assets {
		if category == WrappedCategory && a.tracks != "" {
			out = append(out, a.pricingID)
		}
	}
	return out
}

// volume24h is a made-up rolling 24 h trading volume: a few percent of the market cap.
func (f *MarketFeed) volume24h(id string, last feedPoint) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return last.mc * (0.02 + float64(h.Sum32()%100)/1000)
}

func (f *MarketFeed) chartRange(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err1 := strconv.ParseInt(q.Get("from"), 10, 64)
	to, err2 := strconv.ParseInt(q.Get("to"), 10, 64)
	if err1 != nil || err2 != nil || q.Get("vs_currency") != "usd" {
		http.Error(w, `{"error":"vs_currency=usd, from and to (Unix seconds) are required"}`, http.StatusBadRequest)
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	id := r.PathValue("id")
	if _, ok := f.tokens[id]; !ok {
		http.Error(w, `{"error":"coin not found"}`, http.StatusNotFound)
		return
	}
	hs := f.hourly[id]
	lo, _ := slices.BinarySearchFunc(hs, from*1000, func(p feedPoint, ms int64) int { return cmpInt(p.ms, ms) })
	out := struct {
		Prices       [][2]float64 `json:"prices"`
		MarketCaps   [][2]float64 `json:"market_caps"`
		TotalVolumes [][2]float64 `json:"total_volumes"`
	}{[][2]float64{}, [][2]float64{}, [][2]float64{}}
	for _, p := range hs[lo:] {
		if p.ms > to*1000 {
			break
		}
		out.Prices = append(out.Prices, [2]float64{float64(p.ms), p.price})
		out.MarketCaps = append(out.MarketCaps, [2]float64{float64(p.ms), p.mc})
		out.TotalVolumes = append(out.TotalVolumes, [2]float64{float64(p.ms), f.volume24h(id, p)})
	}
	writeJSON(w, out)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
