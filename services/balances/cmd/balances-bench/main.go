// Command balances-bench builds a world of addresses with balances in a scratch database through
// the service's write path and prints the balance-update throughput (against a raw COPY of the
// same rows, as a ratio) and latency percentiles of the queries issue 25 names, served by the
// real router.
//
//	go run ./cmd/balances-bench     (make bench, section "balances")
//
// Settings (env): BENCH_BAL_ADDRESSES (1,000,000 addresses, each with a native and a token
// balance: the token has that many holders), BENCH_BAL_ENTITY (10,000 addresses of the measured
// entity, each with three earlier days of history over the last 365), BENCH_BATCH (5,000
// observations per write, as the consumer's batch), BENCH_QUERIES (300 runs per query),
// BENCH_DATABASE_URL (server for the scratch database; default the test server),
// BENCH_BAL_CPUPROFILE (a file: CPU profile of the query phase), BENCH_APPLY_BATCH (20,000
// appended observations per applier transaction). The scratch database is dropped
// at the end.
package main

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	svchttp "github.com/chainintel/chainintel/services/balances/internal/http"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "balances-bench:", err)
		os.Exit(1)
	}
}

const benchToken = "0x00000000000000000000000000000000000be7c4"

func addr(i int) string { return fmt.Sprintf("0x%040x", 0x1000000+i) }

// config is the bench's settings (see the package comment).
type config struct {
	n, entN, batch, queries, applyBatch int
}

func loadConfig() config {
	c := config{n: env("BENCH_BAL_ADDRESSES", 1_000_000), entN: env("BENCH_BAL_ENTITY", 10_000), batch: env("BENCH_BATCH", 5000),
		queries: env("BENCH_QUERIES", 300), applyBatch: env("BENCH_APPLY_BATCH", 20000)}
	c.entN = min(c.entN, c.n)
	return c
}

func run() error {
	ctx := context.Background()
	cfg := loadConfig()
	if u := os.Getenv("BENCH_DATABASE_URL"); u != "" {
		os.Setenv("CHAININTEL_TEST_DATABASE_URL", u)
	}
	url, drop, err := pgtest.CreateDatabase(ctx, "balancesbench")
	if err != nil {
		return err
	}
	defer drop()
	pool, err := pgstore.Connect(ctx, url, pgstore.Options{MaxConns: 4, AppName: "balances-bench"})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		return err
	}
	st := store.New(pool)
	first := store.Day(time.Now()).AddDate(0, 0, -364)
	if err := seed(ctx, st, cfg.n, cfg.entN, cfg.batch, first); err != nil {
		return err
	}
	if err := throughput(ctx, st, pool, cfg, first); err != nil {
		return err
	}
	if err := checkEntity(ctx, st); err != nil {
		return err
	}
	if path := os.Getenv("BENCH_BAL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return report(st, cfg.entN, cfg.n, first, cfg.queries)
}

// history is the measured entity's year: each of its addresses changes on three earlier days.
func history(entN int, first time.Time) []store.Observation {
	var hist []store.Observation
	for d := 0; d < 364; d++ {
		for i := d % 121; i < entN; i += 121 {
			hist = append(hist, obs(i, "", first.AddDate(0, 0, d), int64(d)*1_000_000+int64(i), int64(d+i%7+1)))
			hist = append(hist, obs(i, benchToken, first.AddDate(0, 0, d), int64(d)*1_000_000+int64(i), int64(d*3+i%5+1)))
		}
	}
	return hist
}

// readings is a reading on day of addresses from to to (a native and a token balance each: the
// token's holders), at blocks base+i.
func readings(from, to int, day time.Time, base int64) []store.Observation {
	bulk := make([]store.Observation, 0, 2*(to-from))
	for i := from; i < to; i++ {
		bulk = append(bulk, obs(i, "", day, base+int64(i), int64(i%1000+1)), obs(i, benchToken, day, base+int64(i), int64(i%997+2)))
	}
	return bulk
}

// throughput writes the entity's history and yesterday's reading of every address as the
// service takes them (appended by COPY in the consumer's batches, folded into the read models by
// the applier): half appended with no applier running and then applied alone, so each side's
// rate shows, and half appended while an applier runs, so the rate from received to readable
// shows. Every one of these is the first reading of its key. Then today's readings of half the
// addresses, with an applier running: each updates a current row and closes yesterday's
// snapshot. It raw-COPYs yesterday's rows and prints the rates side by side.
func throughput(ctx context.Context, st *store.Store, pool *pgxpool.Pool, cfg config, first time.Time) error {
	hist := history(cfg.entN, first)
	t0 := time.Now()
	if err := write(ctx, st, hist, cfg.batch); err != nil {
		return err
	}
	histDur := time.Since(t0)
	bulk := readings(0, cfg.n, first.AddDate(0, 0, 363), 364_000_000)
	half := len(bulk) / 2
	t0 = time.Now()
	if err := appendAll(ctx, st, bulk[:half], cfg.batch); err != nil {
		return err
	}
	appendDur := time.Since(t0)
	t0 = time.Now()
	if err := drain(ctx, st, cfg.applyBatch); err != nil {
		return err
	}
	applyDur := time.Since(t0)
	bothAppendDur, bothDur, backlog, err := appendAndApply(ctx, st, bulk[half:], cfg.batch, cfg.applyBatch)
	if err != nil {
		return err
	}
	// Today's readings of the second half's addresses (no entity holds them): each replaces a
	// current row of yesterday and closes yesterday's snapshot (an address_daily row).
	next := readings(cfg.n/2, cfg.n, first.AddDate(0, 0, 364), 366_000_000)
	_, nextDur, _, err := appendAndApply(ctx, st, next, cfg.batch, cfg.applyBatch)
	if err != nil {
		return err
	}
	rawDur, err := rawCopy(ctx, pool, bulk, cfg.batch)
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	fmt.Printf("world: %d addresses with balances (%d observations yesterday, %d today), entity of %d addresses with %d history observations over 365 days\n",
		cfg.n, len(bulk), len(next), cfg.entN, len(hist))
	rr := float64(len(bulk)) / rawDur.Seconds()
	second := len(bulk) - half
	line := func(what string, rows int, d time.Duration, note string) {
		r := float64(rows) / d.Seconds()
		fmt.Printf("%-70s %10.0f %12.0f %8.2f%s\n", what, r, rr, r/rr, note)
	}
	fmt.Printf("%-70s %10s %12s %8s\n", "throughput (batches of "+strconv.Itoa(cfg.batch)+", applier rounds of "+strconv.Itoa(cfg.applyBatch)+")",
		"obs/s", "raw COPY/s", "ratio")
	line("consumer alone: COPY into observations", half, appendDur, "")
	line("applier alone: observations past its mark into current and snapshots", half, applyDur,
		fmt.Sprintf("   (a backlog of %d)", half))
	line("both at once: received -> readable (first append to drained)", second, bothDur,
		fmt.Sprintf("   (target >= 50,000 obs/s and >= 0.75; appends %.0f obs/s, backlog at their end %d)",
			float64(second)/bothAppendDur.Seconds(), backlog))
	line("both at once, next day: existing keys, closing yesterday's snapshot", len(next), nextDur, "")
	fmt.Printf("%-70s %10.0f\n", "history observations (entity, 365 days, appended and applied per batch)", float64(len(hist))/histDur.Seconds())
	return nil
}

// checkEntity fails the bench unless the measured entity's maintained totals (what
// /balances/entity serves) equal the sum of its addresses' current balances, and prints what
// summing costs.
func checkEntity(ctx context.Context, st *store.Store) error {
	chs := []string{"ethereum"}
	kept, err := st.EntityBalances(ctx, "bench-exchange", chs)
	if err != nil {
		return err
	}
	var sumDur []time.Duration
	var summed []store.Holding
	for i := 0; i < 20; i++ {
		t0 := time.Now()
		if summed, err = st.SummedEntityBalances(ctx, "bench-exchange", chs); err != nil {
			return err
		}
		sumDur = append(sumDur, time.Since(t0))
	}
	slices.Sort(sumDur)
	if fmt.Sprint(holdingsText(kept)) != fmt.Sprint(holdingsText(summed)) {
		return fmt.Errorf("entity totals %v differ from the sum of its addresses %v", holdingsText(kept), holdingsText(summed))
	}
	fmt.Printf("entity totals equal the sum of the entity's addresses' current balances (summing them in SQL: p50 %s)\n", pct(sumDur, 50))
	return nil
}

func holdingsText(hs []store.Holding) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Chain+"/"+h.Token+"="+h.Balance.String())
	}
	slices.Sort(out)
	return out
}

func obs(i int, token string, day time.Time, block, units int64) store.Observation {
	bal := new(big.Int).Mul(big.NewInt(units), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	return store.Observation{Chain: "ethereum", Address: addr(i), Token: token, BlockNumber: block, BlockHash: "0x" + strconv.FormatInt(block, 16),
		BlockTime: day.Add(time.Minute), Balance: bal, TokenDecimals: 18}
}

func write(ctx context.Context, st *store.Store, rows []store.Observation, batch int) error {
	for i := 0; i < len(rows); i += batch {
		if _, err := st.WriteObservations(ctx, rows[i:min(i+batch, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

func appendAll(ctx context.Context, st *store.Store, rows []store.Observation, batch int) error {
	for i := 0; i < len(rows); i += batch {
		if err := st.AppendObservations(ctx, rows[i:min(i+batch, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

// drain applies what waits past the applier's mark, round after round, until nothing does.
func drain(ctx context.Context, st *store.Store, applyBatch int) error {
	for {
		taken, _, err := st.ApplyPending(ctx, applyBatch)
		if err != nil || taken == 0 {
			return err
		}
	}
}

// appendAndApply appends rows in batches (as the consumer does) while an applier folds them into
// the read models; it returns how long the appends took, how long until nothing waited, and
// the backlog when the appends ended.
func appendAndApply(ctx context.Context, st *store.Store, rows []store.Observation, batch, applyBatch int) (appendDur, applyDur time.Duration, backlog int64, err error) {
	appended := make(chan struct{})
	applied := make(chan error, 1)
	t0 := time.Now()
	go func() {
		for {
			taken, _, err := st.ApplyPending(ctx, applyBatch)
			if err != nil {
				applied <- err
				return
			}
			select {
			case <-appended:
				if taken == 0 {
					applied <- nil
					return
				}
			default:
				if taken == 0 {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
	}()
	if err := appendAll(ctx, st, rows, batch); err != nil {
		return 0, 0, 0, err
	}
	appendDur = time.Since(t0)
	if backlog, err = st.Backlog(ctx); err != nil {
		return 0, 0, 0, err
	}
	close(appended)
	if err := <-applied; err != nil {
		return 0, 0, 0, err
	}
	return appendDur, time.Since(t0), backlog, nil
}

// rawTable is the raw COPY's table: an observation's columns with a primary key on (key, block)
// and an index on the block hash, the shape issue 25's ratio is measured against (kept as it was
// when observations had that shape, so ratios compare across builds).
const rawTable = `CREATE TABLE raw_observations (
  chain text NOT NULL, address text NOT NULL, token text NOT NULL, block_number bigint NOT NULL, block_hash text NOT NULL,
  block_time timestamptz NOT NULL, balance numeric(78,0) NOT NULL, owner text NOT NULL DEFAULT '', kind text NOT NULL DEFAULT '',
  void boolean NOT NULL DEFAULT false,
  PRIMARY KEY (chain, address, token, block_number, block_hash));
CREATE INDEX raw_observations_block ON raw_observations (chain, block_hash)`

// rawCopy copies the same rows, in the same batches, into rawTable: what storing them costs
// with nothing derived.
func rawCopy(ctx context.Context, pool *pgxpool.Pool, rows []store.Observation, batch int) (time.Duration, error) {
	if _, err := pool.Exec(ctx, rawTable); err != nil {
		return 0, err
	}
	cols := []string{"chain", "address", "token", "block_number", "block_hash", "block_time", "balance", "owner", "kind"}
	t0 := time.Now()
	for i := 0; i < len(rows); i += batch {
		part := rows[i:min(i+batch, len(rows))]
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"raw_observations"}, cols, pgx.CopyFromSlice(len(part), func(j int) ([]any, error) {
			o := part[j]
			return []any{o.Chain, o.Address, o.Token, o.BlockNumber, o.BlockHash, o.BlockTime, pgtype.Numeric{Int: o.Balance, Valid: true}, o.Owner, o.Kind}, nil
		})); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// measure runs path q times through the router (after a warm-up) and returns sorted durations.
func measure(h http.Handler, path string, q int) ([]time.Duration, error) {
	var out []time.Duration
	for i := -10; i < q; i++ {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		d := time.Since(t0)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
		if i >= 0 {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

func pct(s []time.Duration, p int) time.Duration {
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[min(i, len(s)-1)].Round(10 * time.Microsecond)
}

// seed writes the registry, a year of daily prices, and the attributions: the measured entity's
// addresses plus 100 smaller entities of 100 addresses each.
func seed(ctx context.Context, st *store.Store, n, entN, batch int, first time.Time) error {
	if err := st.ApplyTokens(ctx, []store.MarketToken{
		{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH", Deployments: []store.Deployment{{Chain: "ethereum", Decimals: 18}}},
		{PricingID: "bench-token", Name: "Bench", Symbol: "BEN", Deployments: []store.Deployment{{Chain: "ethereum", Token: benchToken, Decimals: 18}}},
	}, nil); err != nil {
		return err
	}
	var prices []store.PricePoint
	for d := 0; d < 365; d++ {
		t := first.AddDate(0, 0, d)
		prices = append(prices, store.PricePoint{PricingID: "ethereum", Time: t, Price: 2000 + float64(d)},
			store.PricePoint{PricingID: "bench-token", Time: t, Price: 1 + float64(d)/365})
	}
	if err := st.WritePrices(ctx, prices); err != nil {
		return err
	}
	var attrs []store.Attribution
	ex := &store.Entity{ID: "bench-exchange", Name: "Bench Exchange", Type: "cex"}
	for i := 0; i < entN; i++ {
		attrs = append(attrs, store.Attribution{ChainType: "evm", Address: addr(i), Entity: ex, Version: 1})
	}
	for e := 0; e < 100 && entN+e*100+100 <= n; e++ {
		ent := &store.Entity{ID: fmt.Sprintf("bench-fund-%d", e), Name: fmt.Sprintf("Fund %d", e), Type: "fund"}
		for j := 0; j < 100; j++ {
			attrs = append(attrs, store.Attribution{ChainType: "evm", Address: addr(entN + e*100 + j), Entity: ent, Version: 1})
		}
	}
	for i := 0; i < len(attrs); i += batch {
		if _, err := st.ApplyAttributions(ctx, attrs[i:min(i+batch, len(attrs))]); err != nil {
			return err
		}
	}

	return nil
}

// report measures the named queries through the real router.
func report(st *store.Store, entN, n int, first time.Time, queries int) error {
	cs, _ := chains.NewSet(nil)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "balances"})
	svchttp.Register(e, app.New(st, nil, cs))
	past := strconv.FormatInt(first.AddDate(0, 0, 180).UnixMilli(), 10)
	fmt.Printf("\n%-55s %10s %10s %10s  %s\n", "query (real router, in process)", "p50", "p99", "max", "target p99")
	for _, qq := range []struct{ name, path, target string }{
		{"/balances/entity (" + strconv.Itoa(entN) + " addresses)", "/balances/entity/bench-exchange", "50ms"},
		{"/balances/entity cheap=true", "/balances/entity/bench-exchange?cheap=true", "10ms"},
		{"/history/entity (365 days)", "/history/entity/bench-exchange", "20ms"},
		{"/portfolio/entity at a past day", "/portfolio/entity/bench-exchange?time=" + past, "20ms"},
		{"/token/holders (" + strconv.Itoa(n) + " holders)", "/token/holders/bench-token", "30ms"},
		{"/token/holders groupByEntity=true", "/token/holders/bench-token?groupByEntity=true", "30ms"},
	} {
		d, err := measure(e, qq.path, queries)
		if err != nil {
			return err
		}
		fmt.Printf("%-55s %10s %10s %10s  %s\n", qq.name, pct(d, 50), pct(d, 99), d[len(d)-1], qq.target)
	}
	return nil
}
