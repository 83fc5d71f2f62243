package source

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

func TestTokenListOnRealFile(t *testing.T) {
	f, err := os.Open(sharedtest.Path(t, "data/tokens/brave-coingecko.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	us, err := ParseTokenList(f, nil, []string{"usd-coin", "tether", "dai"})
	if err != nil {
		t.Fatal(err)
	}
	wk, err := ParseTokenList(bytes.NewReader(WellKnown), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := store.New(pgtest.Pool(t))
	if err := st.UpsertTokens(ctx, append(us, wk...)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr, id string
		decimals int32
		stable   bool
	}{
		{"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "usd-coin", 6, true},
		{"0xdac17f958d2ee523a2206206994597c13d831ec7", "tether", 6, true},
		{"0x6b175474e89094c44da98b954eedeac495271d0f", "dai", 18, true},
		{"0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "weth", 18, false},
		{"0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", "wrapped-bitcoin", 8, false},
	} {
		id, err := st.PricingIDOf(ctx, "ethereum", c.addr)
		if err != nil || id != c.id {
			t.Errorf("%s: %q, %v; want %s", c.addr, id, err, c.id)
			continue
		}
		ts, err := st.Tokens(ctx, []string{id}, []string{"ethereum"})
		if err != nil || len(ts) != 1 {
			t.Fatal(ts, err)
		}
		if ts[0].Stablecoin != c.stable {
			t.Errorf("%s stablecoin %v", id, ts[0].Stablecoin)
		}
		found := false
		for _, d := range ts[0].Deployments {
			if d.Address == c.addr {
				found = d.Decimals == c.decimals
			}
		}
		if !found {
			t.Errorf("%s: deployments %+v, want %s with %d decimals", id, ts[0].Deployments, c.addr, c.decimals)
		}
	}
	// A chain set narrows the deployments.
	set, _ := chains.NewSet([]string{"base"})
	f2, _ := os.Open(sharedtest.Path(t, "data/tokens/brave-coingecko.json"))
	defer f2.Close()
	onBase, err := ParseTokenList(f2, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range onBase {
		for _, d := range u.Deployments {
			if d.Chain != "base" {
				t.Fatalf("%s deployed on %s with chains=base", u.PricingID, d.Chain)
			}
		}
	}
}

func TestPriceCSVOnRealFile(t *testing.T) {
	path := sharedtest.Path(t, "data/prices/Smialku__eth-usd-max.csv")
	entries, err := PriceCSVsIn(strings.TrimSuffix(path, "/Smialku__eth-usd-max.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(entries, ","), "ethereum="+path) {
		t.Fatalf("directory listing %v lacks ethereum=%s", entries, path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := ParsePriceCSV(f, "ethereum")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := store.New(pgtest.Pool(t))
	if _, err := st.AddPrices(ctx, ps); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2023, 8, 26, 0, 0, 0, 0, time.UTC)
	got, ok, err := st.PriceAt(ctx, "ethereum", app.Daily, day)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// The CSV's row: 2023-08-26 00:00:00 UTC,1653.4293196573105,...
	if got != 1653.4293196573105 {
		t.Errorf("ETH on 2023-08-26: %v, want 1653.4293196573105", got)
	}
	// Importing again writes nothing new.
	if n, err := st.AddPrices(ctx, ps); err != nil || n != 0 {
		t.Errorf("second import: %d new, %v", n, err)
	}
}

func TestPriceCSVRejects(t *testing.T) {
	for in, want := range map[string]string{
		"date,price\n": "header",
		"snapped_at,price,market_cap,total_volume\nx,1,2,3\n":                        `line 2: snapped_at "x" is not a time`,
		"snapped_at,price,market_cap,total_volume\n2023-01-01 00:00:00 UTC,-1,0,0\n": `line 2: price "-1" is not a positive number`,
		// A NaN price would be the largest in the history's max() and its all-time high.
		"snapped_at,price,market_cap,total_volume\n2023-01-01 00:00:00 UTC,NaN,0,0\n": `line 2: price "NaN" is not a positive number`,
	} {
		if _, err := ParsePriceCSV(strings.NewReader(in), "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// fakeAPI is a CoinGecko-compatible API with one point an hour for each coin, answering 429
// (with Retry-After: 0) or 500 to a share of the requests.
type fakeAPI struct {
	mu       sync.Mutex
	r        *rand.Rand
	failRate float64
	price    func(id string, ms int64) float64
	// categories are the ids /coins/markets?category= answers, by category.
	categories map[string][]string
	// categoryDown answers every category request with a 500.
	categoryDown bool
	requests     int
	failures     int
	// throttled counts the 429 answers.
	throttled int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	fail := f.r.Float64() < f.failRate
	kind := f.r.IntN(2)
	if fail {
		f.failures++
	}
	f.mu.Unlock()
	if fail {
		if kind == 0 {
			f.mu.Lock()
			f.throttled++
			f.mu.Unlock()
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/api/v3/coins/markets":
		out := []map[string]any{}
		ids := strings.Split(q.Get("ids"), ",")
		if c := q.Get("category"); c != "" {
			if f.categoryDown {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			ids = f.categories[c]
		}
		for _, id := range ids {
			out = append(out, map[string]any{"id": id, "symbol": id[:3], "name": strings.ToUpper(id), "current_price": 2.5,
				"market_cap": 1e9, "total_volume": 1e7, "ath": 9, "atl": 0.1, "last_updated": "2030-01-01T00:00:00Z"})
		}
		_ = json.NewEncoder(w).Encode(out)
	case strings.HasSuffix(r.URL.Path, "/market_chart/range"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v3/coins/"), "/market_chart/range")
		from, _ := strconv.ParseInt(q.Get("from"), 10, 64)
		to, _ := strconv.ParseInt(q.Get("to"), 10, 64)
		var prices, caps [][2]float64
		// Points a few minutes past each hour, as the real API gives them.
		for h := from - from%3600; h <= to; h += 3600 {
			ms := (h + 240) * 1000
			if ms < from*1000 || ms > to*1000 {
				continue
			}
			prices = append(prices, [2]float64{float64(ms), f.price(id, ms)})
			caps = append(caps, [2]float64{float64(ms), 1e9})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"prices": prices, "market_caps": caps, "total_volumes": [][2]float64{}})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestPollerAgainstFlakyAPI(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{
		{PricingID: "coin-a", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0a", Decimals: 18}}},
		{PricingID: "coin-b", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0b", Decimals: 6}}},
	}); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{r: rand.New(rand.NewPCG(1, 2)), failRate: 0.35,
		price:      func(id string, ms int64) float64 { return float64(len(id)) + float64(ms%1e7)/1e7 },
		categories: map[string][]string{"wrapped-tokens": {"coin-b", "not-polled"}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	clock := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	start := clock.Truncate(time.Hour).Add(-200 * 24 * time.Hour)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var throttled int
	var newestQuote time.Time
	client := NewClient(ClientOptions{BaseURL: srv.URL + "/api/v3", RequestsPerMinute: 1e6, MaxAttempts: 3,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Logger: quiet, Throttled: func(context.Context) { throttled++ }})
	p := NewPoller(client, st, PollerOptions{History: 200 * 24 * time.Hour, Now: func() time.Time { return clock }, Logger: quiet,
		Quoted: func(t time.Time) { newestQuote = t }, WrappedCategories: []string{"wrapped-tokens"}})
	// Cycles fail part-way (three failures in a row end one); each resumes where the stored
	// history ends. The clock moves on between cycles, so later cycles ask for new hours too.
	for i := 0; i < 60; i++ {
		_ = p.Cycle(ctx)
		if i%10 == 9 {
			clock = clock.Add(5 * time.Hour)
		}
	}
	if err := p.Cycle(ctx); err != nil {
		api.failRate = 0
		if err := p.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if api.failures == 0 {
		t.Fatal("the fake API never failed")
	}
	// Every 429 was reported (the metric), and the quotes' time (the fake's last_updated).
	if throttled == 0 || throttled != api.throttled {
		t.Errorf("reported %d 429s, the API answered %d", throttled, api.throttled)
	}
	if want := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC); !newestQuote.Equal(want) {
		t.Errorf("newest quote reported %s, want %s", newestQuote, want)
	}
	end := clock.Truncate(time.Hour)
	wantDays := 0
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		if h.Hour() == 0 {
			wantDays++
		}
	}
	for _, id := range []string{"coin-a", "coin-b"} {
		var n, distinct int
		var first, last time.Time
		if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT time), min(time), max(time) FROM market.prices
			WHERE pricing_id = $1 AND granularity = 2`, id).Scan(&n, &distinct, &first, &last); err != nil {
			t.Fatal(err)
		}
		want := int(end.Sub(start) / time.Hour)
		if n != want || distinct != n || !first.Equal(start) || !last.Equal(end.Add(-time.Hour)) {
			t.Errorf("%s: %d hourly points (%d distinct) from %s to %s; want %d from %s to %s, no gap, no duplicate",
				id, n, distinct, first, last, want, start, end.Add(-time.Hour))
		}
		var days int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.prices WHERE pricing_id = $1 AND granularity = 1`, id).Scan(&days); err != nil {
			t.Fatal(err)
		}
		if days != wantDays {
			t.Errorf("%s: %d daily points, want %d", id, days, wantDays)
		}
		// Each stored hour holds the API's point of that hour.
		got, ok, err := st.PriceAt(ctx, id, app.Hourly, start.Add(37*time.Hour))
		if wantP := api.price(id, start.Add(37*time.Hour+4*time.Minute).UnixMilli()); err != nil || !ok || got != wantP {
			t.Errorf("%s: price %v (%v, %v), want %v", id, got, ok, err, wantP)
		}
	}
	ts, err := st.Tokens(ctx, []string{"coin-a"}, nil)
	if err != nil || len(ts) != 1 || ts[0].Price == nil || *ts[0].Price != 2.5 || *ts[0].MarketCap != 1e9 || *ts[0].AllTimeHigh != 9 {
		t.Errorf("quote: %+v %v", ts, err)
	}
	// The API's wrapped-tokens category flags coin-b alone; a category id not polled adds nothing.
	var wrapped []string
	rows, err := pool.Query(ctx, `SELECT pricing_id FROM market.tokens WHERE wrapped ORDER BY pricing_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		wrapped = append(wrapped, id)
	}
	if rows.Err() != nil || strings.Join(wrapped, ",") != "coin-b" {
		t.Errorf("wrapped tokens %v (%v), want coin-b", wrapped, rows.Err())
	}
}

// TestPollerPricesWhileCategoryFails: a wrapped-token category the API keeps failing leaves the
// flags as stored and does not hold up the quotes.
func TestPollerPricesWhileCategoryFails(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{
		{PricingID: "coin-a", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0a", Decimals: 18}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE market.tokens SET wrapped = true WHERE pricing_id = 'coin-a'`); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{r: rand.New(rand.NewPCG(1, 2)), price: func(string, int64) float64 { return 3 }, categoryDown: true}
	srv := httptest.NewServer(api)
	defer srv.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := NewClient(ClientOptions{BaseURL: srv.URL + "/api/v3", RequestsPerMinute: 1e6, MaxAttempts: 2,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Logger: quiet})
	clock := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	p := NewPoller(client, st, PollerOptions{History: 48 * time.Hour, Now: func() time.Time { return clock }, Logger: quiet,
		WrappedCategories: []string{"wrapped-tokens"}})
	if err := p.Cycle(ctx); err != nil {
		t.Fatalf("a cycle with the category failing: %v", err)
	}
	var price *float64
	var wrapped bool
	if err := pool.QueryRow(ctx, `SELECT price, wrapped FROM market.tokens WHERE pricing_id = 'coin-a'`).Scan(&price, &wrapped); err != nil {
		t.Fatal(err)
	}
	if price == nil || *price != 2.5 || !wrapped {
		t.Errorf("coin-a price %v wrapped %v, want 2.5 (quoted) and the stored flag", price, wrapped)
	}
}

// Run reports how each cycle ended: a failed one, then one that polled every id.
func TestPollerRunReportsCycles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{
		{PricingID: "coin-a", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x0a", Decimals: 18}}},
	}); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{r: rand.New(rand.NewPCG(1, 2)), failRate: 1, price: func(string, int64) float64 { return 1 }}
	srv := httptest.NewServer(api)
	defer srv.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := NewClient(ClientOptions{BaseURL: srv.URL + "/api/v3", RequestsPerMinute: 1e6, MaxAttempts: 1, Logger: quiet})
	var results []string
	p := NewPoller(client, st, PollerOptions{Interval: time.Millisecond, History: 48 * time.Hour, Logger: quiet,
		Polled: func(_ context.Context, err error) {
			results = append(results, fmt.Sprint(err == nil))
			api.mu.Lock()
			api.failRate = 0
			api.mu.Unlock()
			if len(results) == 2 {
				cancel()
			}
		}})
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(results, ","); got != "false,true" {
		t.Errorf("cycles reported %s, want false,true", got)
	}
}
