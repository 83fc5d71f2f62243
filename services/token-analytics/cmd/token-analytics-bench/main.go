// Command token-analytics-bench prints token-analytics' figures (make bench, section
// token-analytics): the flow rollup's throughput against a raw COPY of the same rows, and
// p50/p99 of /token/top over BENCH_TA_TOKENS tokens with a month of hourly rollups, and of
// /token/top_flow and /token/volume, through the real router on a fresh database
// (BENCH_TA_ROLLUP_ONLY=1: the rollup figures only), then p50/p99 of /token/trending over
// BENCH_TA_HISTORY_TOKENS tokens with years of daily and a month of hourly history, reading the
// kept extremes and, side by side, the history-wide statement they replace
// (BENCH_TA_TRENDING_ONLY=1: the trending figures only).
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	svchttp "github.com/chainintel/chainintel/services/token-analytics/internal/http"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "token-analytics-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	tokens := envInt("BENCH_TA_TOKENS", 5000)
	transfers := envInt("BENCH_TA_TRANSFERS", 200000)
	queries := envInt("BENCH_TA_QUERIES", 300)
	url, drop, err := pgtest.CreateDatabase(ctx, "tabench")
	if err != nil {
		return err
	}
	if os.Getenv("BENCH_TA_KEEP_DB") != "" {
		// kept for EXPLAIN of the routes' statements on the bench's world; dropped by hand
		fmt.Println("keeping the database:", url)
	} else {
		defer drop()
	}
	pool, err := pgstore.Connect(ctx, url, pgstore.Options{MaxConns: 8, AppName: "token-analytics-bench"})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		return err
	}
	st := store.New(pool)
	now := time.Now().UTC()
	if os.Getenv("BENCH_TA_TRENDING_ONLY") != "" {
		fmt.Printf("token-analytics: %d tokens, %d queries per route\n", tokens, queries)
		if err := seedRegistry(ctx, st, tokens, now); err != nil {
			return err
		}
		return trending(ctx, pool, st, min(tokens, envInt("BENCH_TA_HISTORY_TOKENS", 200)), queries, now)
	}
	fmt.Printf("token-analytics: %d tokens, %d transfers in block order (%d a block of 12 s, Zipf token mix), a month of hourly rollups, %d queries per route\n",
		tokens, transfers, transfersPerBlock, queries)
	if err := seedRegistry(ctx, st, tokens, now); err != nil {
		return err
	}
	if err := rollupThroughput(ctx, pool, st, tokens, transfers, now); err != nil {
		return err
	}
	if os.Getenv("BENCH_TA_ROLLUP_ONLY") != "" {
		return nil
	}
	if err := seedHours(ctx, pool, now); err != nil {
		return err
	}
	if err := latencies(ctx, st, tokens, queries, now); err != nil {
		return err
	}
	return trending(ctx, pool, st, min(tokens, envInt("BENCH_TA_HISTORY_TOKENS", 200)), queries, now)
}

func tokenAddr(i int) string { return fmt.Sprintf("0x%040x", 0xa000000+i) }
func holder(i int) string    { return fmt.Sprintf("0x%040x", 0xb000000+i) }

func seedRegistry(ctx context.Context, st *store.Store, n int, now time.Time) error {
	us := make([]app.TokenUpdate, n)
	for i := range us {
		mc := float64(n-i) * 1e6
		us[i] = app.TokenUpdate{PricingID: fmt.Sprintf("token-%05d", i), Symbol: fmt.Sprintf("T%d", i), MarketCap: &mc,
			Deployments: []app.Deployment{{Chain: "ethereum", Address: tokenAddr(i), Decimals: 18}}}
	}
	if err := st.UpsertTokens(ctx, us); err != nil {
		return err
	}
	var ps []app.PricePoint
	for i := range n {
		id := fmt.Sprintf("token-%05d", i)
		ps = append(ps, app.PricePoint{PricingID: id, Granularity: app.Tick, Time: now, Price: 1 + float64(i%100)})
		for h := 0; h < 24*8; h++ {
			ps = append(ps, app.PricePoint{PricingID: id, Granularity: app.Hourly, Time: now.Truncate(time.Hour).Add(-time.Duration(h) * time.Hour), Price: 1 + float64((i+h)%100)})
		}
	}
	_, err := st.AddPrices(ctx, ps)
	return err
}

// world makes n transfers as a chain delivers them: in block order, transferPerBlock to a
// block of 12 seconds, the last block now, so a consumer batch covers minutes of one or two
// hours. The token of each is drawn from the first tenth of the registry by a Zipf law (s 1.1:
// the most used token carries about a fifth of the transfers, as stablecoins do), its sender
// and receiver uniformly from 20,000 holders (a tenth of them exchanges or pools).
// Transaction and block hashes have a real hash's 66 characters.
func world(tokens, n int, now time.Time) []app.Flow {
	r := rand.New(rand.NewPCG(1, 1))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 3)), 1.1, 1, uint64(max(1, tokens/10)-1))
	blocks := (n + transfersPerBlock - 1) / transfersPerBlock
	fs := make([]app.Flow, n)
	for i := range fs {
		b := i / transfersPerBlock
		fs[i] = app.Flow{Chain: "ethereum", ID: fmt.Sprintf("0x%064x_%d", 0xc0ffee000000+i/3, i%3), ChainType: "evm",
			BlockHash: fmt.Sprintf("0x%064x", 0xb10c000000+b), Time: now.Add(-time.Duration(blocks-1-b) * 12 * time.Second),
			Token: tokenAddr(int(zipf.Uint64())), From: holder(r.IntN(20000)), To: holder(r.IntN(20000)),
			Value: r.Float64() * 1000, USD: r.Float64() * 5000}
	}
	return fs
}

// transfersPerBlock is about an Ethereum block's token transfers.
const transfersPerBlock = 150

func rollupThroughput(ctx context.Context, pool *pgxpool.Pool, st *store.Store, tokens, n int, now time.Time) error {
	var classes []app.ClassChange
	for i := 0; i < 20000; i += 10 {
		typ := "cex"
		if i%20 == 0 {
			typ = "dex"
		}
		classes = append(classes, app.ClassChange{ChainType: "evm", Address: holder(i), EntityType: typ, SetsEntity: true, Version: 1})
	}
	if err := st.ApplyClasses(ctx, classes); err != nil {
		return err
	}
	fs := world(tokens, n, now)
	const batch = 5000
	start := time.Now()
	for i := 0; i < len(fs); i += batch {
		if err := st.ApplyFlows(ctx, fs[i:min(i+batch, len(fs))]); err != nil {
			return err
		}
	}
	rollup := time.Since(start)
	// Closing the hours before the newest (what the service does every minute) builds their
	// per-address rollup: deferred work of the rollup, measured and charged to it per transfer
	// closed. The newest hour stays open, so top_flow below reads it from market.flows.
	start = time.Now()
	closed, err := st.CloseHours(ctx)
	if err != nil {
		return err
	}
	closing := time.Since(start)
	// The raw COPY: the same rows into a table with market.flows' columns, primary key and block
	// and hour indexes (the table the rollup's figures have always been compared with), nothing else.
	if _, err := pool.Exec(ctx, `CREATE TABLE market.bench_copy (LIKE market.flows INCLUDING DEFAULTS,
		PRIMARY KEY (chain, id, block));
		CREATE INDEX ON market.bench_copy (chain, block);
		CREATE INDEX ON market.bench_copy USING brin (hour)`); err != nil {
		return err
	}
	start = time.Now()
	for i := 0; i < len(fs); i += batch {
		part := fs[i:min(i+batch, len(fs))]
		_, err := pool.CopyFrom(ctx, pgx.Identifier{"market", "bench_copy"},
			[]string{"chain", "id", "chain_type", "block", "hour", "token", "from_addr", "to_addr", "value", "usd", "counted", "block_time"},
			pgx.CopyFromSlice(len(part), func(j int) ([]any, error) {
				f := part[j]
				return []any{f.Chain, f.ID, f.ChainType, f.BlockHash, f.Time.Truncate(time.Hour), f.Token, f.From, f.To, f.Value, f.USD, true, f.Time}, nil
			}))
		if err != nil {
			return err
		}
	}
	raw := time.Since(start)
	rate, rawRate := float64(n)/rollup.Seconds(), float64(n)/raw.Seconds()
	fmt.Printf("  rollup (store, redelivery-safe, batches of %d): %10.0f transfers/s   raw COPY of the same rows: %10.0f rows/s   ratio %.2f   (target >= 50,000/s and >= 0.75)\n",
		batch, rate, rawRate, rate/rawRate)
	if closed.Transfers > 0 {
		// The close's time per transfer closed, charged to every transfer.
		total := rollup + time.Duration(float64(closing)*float64(n)/float64(closed.Transfers))
		withClose := float64(n) / total.Seconds()
		fmt.Printf("  hour close after the batches: %d flow_address_hours rows from %d transfers in %s   rollup including it (charged per transfer closed): %10.0f transfers/s   ratio %.2f\n",
			closed.Rows, closed.Transfers, closing.Round(time.Millisecond), withClose, withClose/rawRate)
	}
	if err := rollupBeside(ctx, pool, fs, rawRate); err != nil {
		return err
	}
	// Redelivering the whole world adds nothing; it is timed as well.
	start = time.Now()
	for i := 0; i < len(fs); i += batch {
		if err := st.ApplyFlows(ctx, fs[i:min(i+batch, len(fs))]); err != nil {
			return err
		}
	}
	fmt.Printf("  redelivery of every transfer: %10.0f transfers/s (nothing added)\n", float64(n)/time.Since(start).Seconds())
	return nil
}

// rollupBeside runs the rollup again from empty tables as the service runs it: the batches on
// one connection and the hour close polling beside them on another (the service's close loop,
// every TOKENANALYTICS_FLOW_CLOSE_INTERVAL, polls here every closePoll so the bench's
// compressed hours close as soon as they are due). The store's clock is the newest delivered
// block's time, as for a consumer keeping up with its chain: an hour is due when the next one
// begins, not (by the close's grace for idle chains) because the wall clock left it long ago.
// It prints the rate from the first transfer in to the last due hour closed.
func rollupBeside(ctx context.Context, pool *pgxpool.Pool, fs []app.Flow, rawRate float64) error {
	if _, err := pool.Exec(ctx, `TRUNCATE market.flows, market.flow_hours, market.flow_days, market.flow_address_hours, market.flow_marks`); err != nil {
		return err
	}
	var clock atomic.Int64
	clock.Store(fs[0].Time.UnixNano())
	st := store.New(pool, store.Retention(0, func() time.Time { return time.Unix(0, clock.Load()).UTC() }))
	const batch = 5000
	start := time.Now()
	stop := make(chan struct{})
	type result struct {
		closed  store.Closed
		closing time.Duration
		err     error
	}
	res := make(chan result, 1)
	go func() {
		var r result
		for last := false; !last; {
			select {
			case <-stop:
				last = true
			default:
			}
			t0 := time.Now()
			c, err := st.CloseHours(ctx)
			if err != nil {
				r.err = err
				break
			}
			if c.Chains > 0 {
				r.closing += time.Since(t0)
				r.closed = store.Closed{Rows: r.closed.Rows + c.Rows, Transfers: r.closed.Transfers + c.Transfers, Chains: r.closed.Chains + c.Chains}
			} else if !last {
				time.Sleep(closePoll)
			}
		}
		res <- r
	}()
	for i := 0; i < len(fs); i += batch {
		part := fs[i:min(i+batch, len(fs))]
		clock.Store(part[len(part)-1].Time.UnixNano())
		if err := st.ApplyFlows(ctx, part); err != nil {
			close(stop)
			<-res
			return err
		}
	}
	batches := time.Since(start)
	close(stop)
	r := <-res
	if r.err != nil {
		return r.err
	}
	total := time.Since(start)
	rate := float64(len(fs)) / total.Seconds()
	fmt.Printf("  rollup with the hour close beside the batches (first transfer in to last due hour closed): %10.0f transfers/s   ratio %.2f   (batches done after %s; closes of %d transfers into %d rows, %s of it)\n",
		rate, rate/rawRate, batches.Round(time.Millisecond), r.closed.Transfers, r.closed.Rows, r.closing.Round(time.Millisecond))
	return nil
}

// closePoll is how often the bench's close loop asks whether an hour is due.
const closePoll = 20 * time.Millisecond

// seedHours gives every registry token a month of hourly rollups (the tokens without
// transfers get synthetic hours), so /token/top ranks over 720 hours × every token. Rows are
// written hour by hour, as the consumers write them, so the table's layout is time-ordered.
func seedHours(ctx context.Context, pool *pgxpool.Pool, now time.Time) error {
	start := time.Now()
	tag, err := pool.Exec(ctx, `
		INSERT INTO market.flow_hours (chain, token, hour, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
		SELECT d.chain, d.address, h, 10, 1000 + (hashtext(d.address || h::text) & 1023), 500, 100, 90, 50, 40
		FROM market.deployments d
		CROSS JOIN generate_series(date_trunc('hour', $1::timestamptz) - interval '30 days', date_trunc('hour', $1::timestamptz), interval '1 hour') h
		WHERE d.address <> ''
		ORDER BY h, d.address
		ON CONFLICT DO NOTHING`, now)
	if err != nil {
		return err
	}
	// flow_days is the per-day sum of flow_hours, as the rollup statements keep it.
	if _, err := pool.Exec(ctx, `
		TRUNCATE market.flow_days;
		INSERT INTO market.flow_days (chain, token, day, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
		SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS day,
		       sum(transfers), sum(volume_usd), sum(volume_value), sum(cex_in_usd), sum(cex_out_usd), sum(dex_in_usd), sum(dex_out_usd)
		FROM market.flow_hours GROUP BY 1, 2, 3 ORDER BY 3, 1, 2`); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE market.flow_days`); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE market.flow_hours`); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE market.flow_address_hours`); err != nil {
		return err
	}
	fmt.Printf("  seeded %d token-hours in %s\n", tag.RowsAffected(), time.Since(start).Round(time.Millisecond))
	return nil
}

func latencies(ctx context.Context, st *store.Store, tokens, n int, now time.Time) error {
	set, _ := chains.NewSet(nil)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svc := app.New(st, app.Options{Now: func() time.Time { return now }, TopRefresh: 5 * time.Minute})
	t0 := time.Now()
	if err := svc.RefreshTop(ctx); err != nil {
		return err
	}
	fmt.Printf("  /token/top snapshot refresh (5 timeframes x 1 and auto reference periods, TOKENANALYTICS_TOP_REFRESH in service): %s\n", time.Since(t0).Round(time.Millisecond))
	svchttp.Register(e, svc, set)
	plain, err := topFlowKept(ctx, st, e, tokens, now)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(2, 2))
	tfs := []string{"1h", "6h", "12h", "24h", "7d"}
	routes := []struct {
		name string
		path func() string
	}{
		{"/token/top (random timeframe, orderByAgg, direction, percent)", func() string {
			return fmt.Sprintf("/token/top?timeframe=%s&orderByAgg=%s&orderByDesc=%v&orderByPercent=%v&size=50",
				tfs[r.IntN(len(tfs))], app.OrderByAggs[r.IntN(len(app.OrderByAggs))], r.IntN(2) == 0, r.IntN(4) == 0)
		}},
		{"/token/top?chains=ethereum (same, narrowed)", func() string {
			return fmt.Sprintf("/token/top?timeframe=%s&orderByAgg=%s&orderByDesc=%v&orderByPercent=%v&size=50&chains=ethereum",
				tfs[r.IntN(len(tfs))], app.OrderByAggs[r.IntN(len(app.OrderByAggs))], r.IntN(2) == 0, r.IntN(4) == 0)
		}},
		{"/token/top?tokenIds=<100 ids> (same, narrowed)", func() string {
			ids := make([]string, 100)
			for k := range ids {
				ids[k] = fmt.Sprintf("token-%05d", r.IntN(tokens))
			}
			return fmt.Sprintf("/token/top?timeframe=%s&orderByAgg=%s&orderByDesc=%v&size=50&tokenIds=%s",
				tfs[r.IntN(len(tfs))], app.OrderByAggs[r.IntN(len(app.OrderByAggs))], r.IntN(2) == 0, strings.Join(ids, ","))
		}},
		{"/token/top_flow/{id} (timeLast 24h or 7d, limit 50)", func() string {
			return fmt.Sprintf("/token/top_flow/token-%05d?timeLast=%s", r.IntN(max(1, tokens/10)), []string{"24h", "7d"}[r.IntN(2)])
		}},
		{"/token/volume/{id} (1h over 7d or 1d over 30d)", func() string {
			g := []string{"granularity=1h&timeLast=7d", "granularity=1d&timeLast=30d"}[r.IntN(2)]
			return fmt.Sprintf("/token/volume/token-%05d?%s", r.IntN(tokens), g)
		}},
	}
	targets := []string{"p99 <= 50 ms", "p99 <= 50 ms", "p99 <= 50 ms", "p99 <= 30 ms", "p99 <= 30 ms"}
	for i, rt := range routes {
		for range 10 { // warm the connections and plans
			serve(e, rt.path())
		}
		// top_flow's requests are timed side by side, interleaved: from the kept sums and with
		// top_flow.sql alone (a store keeping none).
		var side http.Handler
		if strings.HasPrefix(rt.name, "/token/top_flow") {
			side = plain
		}
		if err := timeRoute(e, side, rt.name, rt.path, n, targets[i]); err != nil {
			return err
		}
		if side != nil {
			if err := topFlowByRank(ctx, st, e, side); err != nil {
				return err
			}
		}
	}
	return nil
}

// topFlowByRank prints, for tokens by rank of use, the median of 15 requests of top_flow over
// 24h from the kept sums and with top_flow.sql alone, interleaved, with the token's closed
// flow_address_hours rows and open transfers in that window: where each path's time goes.
func topFlowByRank(ctx context.Context, st *store.Store, kept, plain http.Handler) error {
	for _, rank := range []int{0, 1, 3, 12, 45} {
		var rows, open int
		if err := st.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM market.flow_address_hours a JOIN market.flow_marks k ON k.chain = a.chain
			 WHERE a.chain = 'ethereum' AND a.token = $1 AND a.hour >= date_trunc('hour', now()) - interval '24 hours' AND a.hour < k.rolled_until),
			(SELECT count(*) FROM market.flows f JOIN market.flow_marks k ON k.chain = f.chain
			 WHERE f.chain = 'ethereum' AND f.token = $1 AND f.hour >= k.rolled_until AND f.counted)`, tokenAddr(rank)).Scan(&rows, &open); err != nil {
			return err
		}
		path := fmt.Sprintf("/token/top_flow/token-%05d?timeLast=24h", rank)
		dk, dp := make([]time.Duration, 15), make([]time.Duration, 15)
		for j := range dk {
			hs, ds := []http.Handler{kept, plain}, []*time.Duration{&dk[j], &dp[j]}
			if j%2 == 1 {
				hs[0], hs[1], ds[0], ds[1] = hs[1], hs[0], ds[1], ds[0]
			}
			for k, h := range hs {
				t0 := time.Now()
				if code := serve(h, path); code != 200 {
					return fmt.Errorf("%s: %d", path, code)
				}
				*ds[k] = time.Since(t0)
			}
		}
		slices.Sort(dk)
		slices.Sort(dp)
		fmt.Printf("    token of use rank %2d (24h: %6d closed rows, %5d open transfers)   kept sums median %7.2f ms   top_flow.sql alone median %7.2f ms\n",
			rank, rows, open, ms(dk[7]), ms(dp[7]))
	}
	return nil
}

// timeRoute prints p50 and p99 of n requests of path to e and, when side is set, of the same
// requests to side, interleaved (each first every other time).
func timeRoute(e, side http.Handler, name string, path func() string, n int, target string) error {
	ds, dp := make([]time.Duration, n), make([]time.Duration, n)
	for j := range ds {
		p := path()
		hs, ts := []http.Handler{e, side}, []*time.Duration{&ds[j], &dp[j]}
		if j%2 == 1 {
			hs[0], hs[1], ts[0], ts[1] = hs[1], hs[0], ts[1], ts[0]
		}
		for k, h := range hs {
			if h == nil {
				continue
			}
			t0 := time.Now()
			if code := serve(h, p); code != 200 {
				return fmt.Errorf("%s: %d", p, code)
			}
			*ts[k] = time.Since(t0)
		}
	}
	slices.Sort(ds)
	fmt.Printf("  %-62s p50 %7.2f ms   p99 %7.2f ms   (target %s)", name, ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]), target)
	if side != nil {
		slices.Sort(dp)
		fmt.Printf("   (top_flow.sql alone: p50 %7.2f ms   p99 %7.2f ms)", ms(dp[len(dp)/2]), ms(dp[len(dp)*99/100]))
	}
	fmt.Println()
	return nil
}

// topFlowKept asks top_flow once for each token the bench draws and window, as a replica serving
// them over the last hour has been asked, reads the kept sums the service's loop keeps
// (store.RefreshTopFlows) and prints that read, and returns a router over a store keeping none,
// which answers every top_flow request with top_flow.sql.
func topFlowKept(ctx context.Context, st *store.Store, e http.Handler, tokens int, now time.Time) (http.Handler, error) {
	for i := range max(1, tokens/10) {
		for _, w := range []string{"24h", "7d"} {
			if code := serve(e, fmt.Sprintf("/token/top_flow/token-%05d?timeLast=%s", i, w)); code != 200 {
				return nil, fmt.Errorf("top_flow token-%05d: %d", i, code)
			}
		}
	}
	t0 := time.Now()
	kept, err := st.RefreshTopFlows(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Printf("  /token/top_flow kept sums read (%d tokens x 24h and 7d asked; sets of %d closed addresses or more kept, every TOKENANALYTICS_FLOW_CLOSE_INTERVAL in service): %d read, %d kept, %d addresses, in %s\n",
		max(1, tokens/10), store.DefaultTopFlowMinAddresses, kept.Built, kept.Kept, kept.Addresses, time.Since(t0).Round(time.Millisecond))
	set, _ := chains.NewSet(nil)
	plain := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svchttp.Register(plain, app.New(store.New(st.Pool(), store.KeepTopFlows(0, 0)), app.Options{Now: func() time.Time { return now }}), set)
	return plain, nil
}

func serve(h http.Handler, path string) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
