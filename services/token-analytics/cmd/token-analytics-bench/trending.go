package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	svchttp "github.com/chainintel/chainintel/services/token-analytics/internal/http"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Trending's history: every benched token gets historyYears of daily points and historyHours
// of hourly ones, as an install with years of daily CSV history and a month of polled hours.
const (
	historyYears = 3
	historyHours = 30 * 24
)

// historyExtremesSQL is the statement trending read the all-time high and low with before
// market.price_extremes: every stored point of each token. Kept here for the comparison only.
const historyExtremesSQL = `SELECT pricing_id, max(price), min(price) FROM market.prices
WHERE pricing_id = ANY($1)
GROUP BY pricing_id`

// historyStore is the store with trending's extremes read from the whole history.
type historyStore struct {
	*store.Store
	pool *pgxpool.Pool
}

func (h historyStore) PriceExtremes(ctx context.Context, ids []string) (map[string]app.Extremes, error) {
	out := map[string]app.Extremes{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := h.pool.Query(ctx, historyExtremesSQL, ids)
	if err != nil {
		return nil, err
	}
	var id string
	var e app.Extremes
	_, err = pgx.ForEachRow(rows, []any{&id, &e.High, &e.Low}, func() error {
		out[id] = e
		return nil
	})
	return out, err
}

// trending gives the registry's first n tokens (the 100 trending ones among them: the bench's
// quotes have no volume, so trending ranks by market cap) their history through the write path,
// then prints p50/p99 of /token/trending and /token/trending/{id} answered from the kept
// extremes and from the whole history, the requests of both interleaved.
func trending(ctx context.Context, pool *pgxpool.Pool, st *store.Store, n, queries int, now time.Time) error {
	day := now.Truncate(24 * time.Hour)
	hour := now.Truncate(time.Hour)
	days := historyYears * 365
	r := rand.New(rand.NewPCG(4, 4))
	start := time.Now()
	points := 0
	for i := range n {
		id := fmt.Sprintf("token-%05d", i)
		ps := make([]app.PricePoint, 0, days+historyHours)
		for d := days; d >= 1; d-- {
			ps = append(ps, app.PricePoint{PricingID: id, Granularity: app.Daily, Time: day.AddDate(0, 0, -d), Price: 1 + r.Float64()*100})
		}
		for h := historyHours; h >= 1; h-- {
			ps = append(ps, app.PricePoint{PricingID: id, Granularity: app.Hourly, Time: hour.Add(-time.Duration(h) * time.Hour), Price: 1 + r.Float64()*100})
		}
		if _, err := st.AddPrices(ctx, ps); err != nil {
			return err
		}
		points += len(ps)
	}
	took := time.Since(start)
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE market.prices, market.price_extremes`); err != nil {
		return err
	}
	fmt.Printf("  trending: %d tokens with %d years of daily and %d days of hourly history (%d points) stored through the write path in %s (%.0f points/s, one batch a token)\n",
		n, historyYears, historyHours/24, points, took.Round(time.Millisecond), float64(points)/took.Seconds())

	set, _ := chains.NewSet(nil)
	clock := app.Options{Now: func() time.Time { return now }}
	kept := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svchttp.Register(kept, app.New(st, clock), set)
	scan := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svchttp.Register(scan, app.New(historyStore{st, pool}, clock), set)
	routes := []struct {
		name string
		path func() string
	}{
		{"/token/trending (100 tokens)", func() string { return "/token/trending" }},
		{"/token/trending/{id}", func() string { return fmt.Sprintf("/token/trending/token-%05d", r.IntN(n)) }},
	}
	for _, rt := range routes {
		for range 10 { // warm the connections and plans
			serve(kept, rt.path())
			serve(scan, rt.path())
		}
		dk, ds := make([]time.Duration, queries), make([]time.Duration, queries)
		for j := range queries {
			p := rt.path()
			both := []struct {
				h  http.Handler
				ds []time.Duration
			}{{kept, dk}, {scan, ds}}
			if j%2 == 1 {
				both[0], both[1] = both[1], both[0]
			}
			for _, m := range both {
				t0 := time.Now()
				if code := serve(m.h, p); code != 200 {
					return fmt.Errorf("%s: %d", p, code)
				}
				m.ds[j] = time.Since(t0)
			}
		}
		slices.Sort(dk)
		slices.Sort(ds)
		fmt.Printf("  %-62s p50 %7.2f ms   p99 %7.2f ms   (max/min over the history: p50 %7.2f ms   p99 %7.2f ms)\n",
			rt.name+", kept extremes", ms(dk[len(dk)/2]), ms(dk[len(dk)*99/100]), ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]))
	}
	return nil
}
