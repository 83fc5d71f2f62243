// Command transfers-bench loads simulated transfers into a scratch database through the
// service's write path and prints the ingest rate (against a raw COPY of the same rows) and
// latency percentiles of representative queries served by the real router.
//
//	BENCH_ROWS=10000000 go run ./cmd/transfers-bench     (make bench)
//
// Settings (env): BENCH_ROWS (10,000,000), BENCH_YEAR_ROWS (rows per simulated year, default
// BENCH_ROWS: a smaller BENCH_ROWS at the density of a larger run), BENCH_BATCH (5,000 rows per write), BENCH_RAW_ROWS
// (rows of the raw COPY comparison, default min(BENCH_ROWS, 1,000,000)), BENCH_QUERIES (1,000 runs
// per query), BENCH_DATABASE_URL (server to create the scratch databases on; default
// CHAININTEL_TEST_DATABASE_URL or the local server, without TLS). Scratch databases are dropped at the end
// unless BENCH_KEEP is set. BENCH_WRITERS (2: two replicas of the consumer) concurrent writers load the rows; BENCH_QUERY_DB
// runs the queries only, on a database a BENCH_KEEP run left; BENCH_ONLY runs only the queries
// whose name contains it; BENCH_PATHS adds requests of its own; BENCH_CPUPROFILE and
// BENCH_MEMPROFILE write CPU and allocation profiles of the queries. The first rows are written
// with the rollups queued and then applied (both rates, and the two one after the other); the
// rest by writers and rollup workers at once. BENCH_INLINE also loads the first rows with the
// rollups applied in each write, into a database of their own. BENCH_NO_QUERIES stops after the
// write path's figures.
//
//	transfers-bench compare <baseline output> <current output>
//
// prints two runs' figures side by side with their ratios (scripts/bench-transfers-baseline.sh).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/transfers"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/chainintel/chainintel/sim"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric/noop"
)

// defaultWriters is how many writers load the rows unless BENCH_WRITERS says: two, as two
// replicas of the consumer write (the chart scales it up to the topic's partitions), on this
// machine's two cores. The raw COPY runs as many, so the ratio compares like with like.
const defaultWriters = 2

// envInt is the positive integer the environment variable name holds, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// envCount is envInt where 0 is a setting too (no warm-up, no prewarm, seed 0).
func envCount(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "compare" {
		// transfers-bench compare <baseline output> <current output>
		if err := compare(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// poolOptions are the bench's pools': with BENCH_TIMELINE, a tracer records each request's
// statements and connection waits (timeline.go).
func poolOptions() pgstore.Options {
	o := pgstore.Options{MaxConns: 8, AppName: "transfers-bench"}
	if os.Getenv("BENCH_TIMELINE") != "" {
		o.Tracer = tracer{}
	}
	return o
}

func scratch(ctx context.Context, name string) (*pgxpool.Pool, func(), error) {
	if u := os.Getenv("BENCH_DATABASE_URL"); u != "" {
		os.Setenv("CHAININTEL_TEST_DATABASE_URL", u)
	} else if os.Getenv("CHAININTEL_TEST_DATABASE_URL") == "" {
		// The local server without TLS, as the chart's in-cluster default connects: TLS on a
		// loopback connection is no part of the service's cost.
		os.Setenv("CHAININTEL_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	}
	url, drop, err := pgtest.CreateDatabase(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgstore.Connect(ctx, url, poolOptions())
	if err != nil {
		drop()
		return nil, nil, err
	}
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		pool.Close()
		drop()
		return nil, nil, err
	}
	if os.Getenv("BENCH_KEEP") != "" {
		fmt.Println("keeping scratch database", url)
		return pool, pool.Close, nil
	}
	return pool, func() { pool.Close(); drop() }, nil
}

// bench is one run's settings and simulated world.
type bench struct {
	w                    *world
	n, batch, rawN, runs int
	writers              int
	first, rest          []store.TransferRow // the first rawN rows, and those the simulator made beyond them
}

// replay makes the world serve the first rows again, then the rest.
func (b *bench) replay() { b.w.buf = append(slices.Clone(b.first), b.rest...) }

func run(ctx context.Context) error {
	n := envInt("BENCH_ROWS", 10_000_000)
	b := &bench{n: n, batch: envInt("BENCH_BATCH", 5000), rawN: envInt("BENCH_RAW_ROWS", min(n, 1_000_000)),
		runs: envInt("BENCH_QUERIES", 1000), writers: max(envInt("BENCH_WRITERS", defaultWriters), 1)}
	w, err := newWorld(n, envInt("BENCH_YEAR_ROWS", n))
	if err != nil {
		return err
	}
	b.w = w
	if u := os.Getenv("BENCH_QUERY_DB"); u != "" {
		return queryKept(ctx, u, w, b.runs)
	}
	fmt.Printf("simulated world (services/ingest/sim): %d exchanges, %d ethereum customers, %d addresses, chains %v; %d transfers over %s to %s, batches of %d\n",
		len(w.exchanges), len(w.customers), len(w.w.Addresses()), w.w.Chains(), n, w.cfg.Start.Format("2006-01-02"), w.end.Format("2006-01-02"), b.batch)
	pool, st, drop, err := b.loadAll(ctx)
	if err != nil {
		return err
	}
	defer drop()
	if os.Getenv("BENCH_NO_QUERIES") != "" {
		return nil // the write path's figures only (scripts/bench.sh's baseline comparison)
	}
	// Settled as a server in use is: vacuumed, analysed, and the load's dirty pages written
	// (else the checkpoint after the load writes them during the queries).
	if err := settle(ctx, pool); err != nil {
		return err
	}
	if err := prewarm(ctx, pool); err != nil {
		return err
	}
	return queries(ctx, pool, st, w, b.runs)
}

// queryKept runs the queries only, against the database at url that a BENCH_KEEP run left.
func queryKept(ctx context.Context, url string, w *world, runs int) error {
	pool, err := pgstore.Connect(ctx, url, poolOptions())
	if err != nil {
		return err
	}
	defer pool.Close()
	// Bring it to the current schema first (a kept database may predate a migration).
	t0 := time.Now()
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		return err
	}
	if d := time.Since(t0); d > time.Second {
		fmt.Printf("migrated the kept database in %s\n", d.Round(time.Millisecond))
	}
	if err := prewarm(ctx, pool); err != nil {
		return err
	}
	return queries(ctx, pool, store.New(pool, store.DefaultOptions()), w, runs)
}

// loadAll loads the world's rows and prints the write path's figures: a raw COPY of the first
// rawN rows into an empty schema, then the real write path over the same rows into another
// empty schema, then the raw COPY again (the ratio compares like with like, against the faster
// raw COPY: two raw COPYs of the same rows differ by more than the write path's overhead, so a
// single one says little), then the rest of the rows as the service runs. The first rows are
// simulated once and replayed to each. It returns the loaded database's pool and store, and
// what drops it.
func (b *bench) loadAll(ctx context.Context) (*pgxpool.Pool, *store.Store, func(), error) {
	if err := b.w.rewind(); err != nil {
		return nil, nil, nil, err
	}
	b.first, b.rest = b.w.take(b.rawN)
	rawBefore, err := b.rawCopy(ctx, true)
	if err != nil {
		return nil, nil, nil, err
	}
	if os.Getenv("BENCH_INLINE") != "" {
		if err := b.loadInline(ctx, rawBefore); err != nil {
			return nil, nil, nil, err
		}
	}
	pool, drop, err := scratch(ctx, "bench")
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := b.loadFirst(ctx, pool, rawBefore)
	if err == nil && b.n > b.rawN {
		st, err = b.loadRest(ctx, pool)
	}
	if err != nil {
		drop()
		return nil, nil, nil, err
	}
	return pool, st, drop, nil
}

// rawCopy COPYs the first rows into a scratch database of its own, with no deduplication and no
// rollups, and returns its rate; settings prints the server's settings first.
func (b *bench) rawCopy(ctx context.Context, settings bool) (float64, error) {
	rawPool, dropRaw, err := scratch(ctx, "bench_raw")
	if err != nil {
		return 0, err
	}
	defer dropRaw()
	if settings {
		if err := printSettings(ctx, rawPool); err != nil {
			return 0, err
		}
	}
	if err := settle(ctx, rawPool); err != nil {
		return 0, err
	}
	b.replay()
	rate, err := load(ctx, store.New(rawPool, store.DefaultOptions()), b.w, b.rawN, b.batch, true)
	if err != nil {
		return 0, fmt.Errorf("raw copy: %w", err)
	}
	return rate, nil
}

// loadInline loads the first rows with the rollups applied inside each write
// (TRANSFERS_ROLLUPS=inline), into a scratch database of its own, and prints its rate.
func (b *bench) loadInline(ctx context.Context, rawBefore float64) error {
	ipool, idrop, err := scratch(ctx, "bench_inline")
	if err != nil {
		return err
	}
	defer idrop()
	io := store.DefaultOptions()
	io.InlineRollups = true
	ist := store.New(ipool, io)
	if err := b.w.attributions(ctx, ist); err != nil {
		return err
	}
	b.replay()
	inlineRate, err := load(ctx, ist, b.w, b.rawN, b.batch, false)
	if err != nil {
		return err
	}
	fmt.Printf("ingest, first %d rows, rollups inline: %.0f rows/s, ratio %.2f (to the first raw COPY)\n", b.rawN, inlineRate, inlineRate/rawBefore)
	return nil
}

// loadFirst loads the first rows into pool as a burst (the writes with the rollups queued and no
// lag bound, no worker), then applies the rollups with as many workers as writers, then runs the
// raw COPY again, and prints the three rates.
func (b *bench) loadFirst(ctx context.Context, pool *pgxpool.Pool, rawBefore float64) (*store.Store, error) {
	burst := store.DefaultOptions()
	burst.RollupLagMax = 0
	st := store.New(pool, burst)
	if err := b.w.attributions(ctx, st); err != nil {
		return nil, err
	}
	if err := settle(ctx, pool); err != nil {
		return nil, err
	}
	b.replay()
	firstRate, err := load(ctx, st, b.w, b.rawN, b.batch, false)
	if err != nil {
		return nil, err
	}
	applyRate, err := drain(ctx, st, b.writers)
	if err != nil {
		return nil, err
	}
	rawAfter, err := b.rawCopy(ctx, false)
	if err != nil {
		return nil, err
	}
	b.w.buf, b.first = b.rest, nil // the load goes on after the first rows
	rawRate := max(rawBefore, rawAfter)
	both := 1 / (1/firstRate + 1/applyRate)
	fmt.Printf("ingest, first %d rows: raw COPY %.0f rows/s (before the write path %.0f, after it %.0f); write path (COPY, dedupe, rollups queued) %.0f rows/s, ratio %.2f;\n"+
		"  rollups applied %.0f rows/s; writes and rollups one after the other %.0f rows/s, ratio %.2f\n",
		b.rawN, rawRate, rawBefore, rawAfter, firstRate, firstRate/rawRate, applyRate, both, both/rawRate)
	return st, nil
}

// loadRest loads the rows after the first as the service runs: writers and one rollup worker
// per writer at once, the writers held to the service's lag bound, timed until the rollups have
// caught up. It prints both rates.
func (b *bench) loadRest(ctx context.Context, pool *pgxpool.Pool) (*store.Store, error) {
	st := store.New(pool, store.DefaultOptions())
	wctx, stop := context.WithCancel(ctx)
	workers := make(chan error, b.writers)
	for range b.writers {
		go func() {
			workers <- st.RunRollups(wctx, 100*time.Millisecond, slog.New(slog.DiscardHandler), noop.Meter{})
		}()
	}
	t0 := time.Now()
	writeRate, err := load(ctx, st, b.w, b.n-b.rawN, b.batch, false)
	if err == nil {
		_, err = drain(ctx, st, b.writers)
	}
	stop()
	for range b.writers {
		<-workers
	}
	if err != nil {
		return nil, err
	}
	rate := float64(b.n-b.rawN) / time.Since(t0).Seconds()
	fmt.Printf("ingest, the other %d rows, writers and rollup workers together: writes %.0f rows/s, until the rollups caught up %.0f rows/s\n",
		b.n-b.rawN, writeRate, rate)
	return st, nil
}

// settle readies a scratch database for a timed load: the attributions just loaded vacuumed
// and analysed (else autovacuum did it on the two cores the first timed writes ran on, and only
// the write path's database has them), and a checkpoint taken (the dirty pages of what came
// before written now, not during the load), so the raw COPY and the write path start alike.
// CHECKPOINT needs a superuser or pg_checkpoint; without either it is skipped.
func settle(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		fmt.Printf("no checkpoint: %v\n", err)
	}
	return nil
}

// prewarm reads the relations the queries read into memory (pg_prewarm, into the operating
// system's cache), most read first, up to BENCH_PREWARM_MB (default 60% of the machine's memory;
// 0 skips it): the pair rows and their indexes, the transfers with their address and natural-key
// indexes, the attributions, the group rollups, then the rest but the blocks and the rollup queue. Right
// after a load the cache holds what the load wrote last, and a large load's database can be
// larger than the machine's memory, so the first queries at random times of the year would read
// their pages from disk (a keyset turn reads the pages its 50 rows lie on). A server in use has
// its working set cached; this reads it as one would have.
// Without the extension (or the right to create it) nothing is read and it says so.
func prewarm(ctx context.Context, pool *pgxpool.Pool) error {
	budget := int64(envCount("BENCH_PREWARM_MB", int(memoryMB()*6/10))) << 20
	if budget <= 0 {
		fmt.Println("no prewarm (BENCH_PREWARM_MB=0): the first queries read from disk what the load left out of the cache")
		return nil
	}
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm"); err != nil {
		fmt.Printf("no prewarm (%v): the first queries read from disk what the load left out of the cache\n", err)
		return nil
	}
	rows, err := pool.Query(ctx, `SELECT c.oid::regclass::text, pg_relation_size(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
		WHERE n.nspname = 'transfers' AND c.relkind IN ('r', 'i') AND pg_relation_size(c.oid) > 0
		  AND coalesce(t.relname, c.relname) NOT LIKE 'blocks%' AND coalesce(t.relname, c.relname) <> 'rollup_keys'
		ORDER BY CASE
		  WHEN coalesce(t.relname, c.relname) = 'entity_pair_rows' THEN 0
		  WHEN coalesce(t.relname, c.relname) ~ '^transfers_[0-9]' AND (i.indexrelid IS NULL
		    OR pg_get_indexdef(c.oid) ~ '\((from|to)_addr, block_time\)|\(block_time, uid\)') THEN 1
		  WHEN coalesce(t.relname, c.relname) LIKE 'attributions%' THEN 2
		  WHEN coalesce(t.relname, c.relname) LIKE 'grp\_%' THEN 3
		  ELSE 4 END, pg_relation_size(c.oid) DESC`)
	if err != nil {
		return err
	}
	type rel struct {
		name string
		size int64
	}
	var rels []rel
	for rows.Next() {
		var r rel
		if err := rows.Scan(&r.name, &r.size); err != nil {
			rows.Close()
			return err
		}
		rels = append(rels, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t0 := time.Now()
	var read int64
	n := 0
	for _, r := range rels {
		if read+r.size > budget {
			continue
		}
		if _, err := pool.Exec(ctx, "SELECT pg_prewarm($1::regclass, 'read')", r.name); err != nil {
			return fmt.Errorf("prewarm %s: %w", r.name, err)
		}
		read += r.size
		n++
	}
	fmt.Printf("prewarmed %d of %d relations, %d MB, in %s (pg_prewarm; BENCH_PREWARM_MB=%d)\n", n, len(rels), read>>20,
		time.Since(t0).Round(time.Second), budget>>20)
	return nil
}

// memoryMB is the machine's memory in MB (/proc/meminfo), or 4096 when unknown.
func memoryMB() int64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 4096
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb >> 10
			}
		}
	}
	return 4096
}

// printSettings prints the PostgreSQL settings the figures depend on most: its cache and how
// often it checkpoints (every page an index insertion first dirties after a checkpoint is written
// whole to the WAL) and whether it compresses those pages.
func printSettings(ctx context.Context, pool *pgxpool.Pool) error {
	var out []string
	for _, name := range []string{"shared_buffers", "max_wal_size", "checkpoint_timeout", "wal_compression"} {
		var v string
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return err
		}
		out = append(out, name+"="+v)
	}
	fmt.Printf("PostgreSQL: %s\n", strings.Join(out, " "))
	return nil
}

// drain applies the rollup queue with k workers at once and returns the rows applied per second.
func drain(ctx context.Context, st *store.Store, k int) (float64, error) {
	t0 := time.Now()
	type res struct {
		n   int
		err error
	}
	out := make(chan res, k)
	for range k {
		go func() {
			n, err := st.DrainRollups(ctx)
			out <- res{n, err}
		}()
	}
	total := 0
	var first error
	for range k {
		r := <-out
		total += r.n
		if r.err != nil && first == nil {
			first = r.err
		}
	}
	if first != nil {
		return 0, first
	}
	return float64(total) / time.Since(t0).Seconds(), nil
}

// load writes n rows from the world and returns rows/s of write time (the simulator's own
// time is not counted: in production it is another process). With BENCH_WRITERS > 1, that many
// writers (as replicas of the consumer would) write batches concurrently and the rate is rows
// over the wall time of the writes, the simulator having simulated them beforehand (at most 2M
// rows) or running ahead of them.
func load(ctx context.Context, st *store.Store, w *world, n, batch int, raw bool) (float64, error) {
	write := func(rows []store.TransferRow) error {
		if raw {
			return st.CopyTransfersRaw(ctx, rows)
		}
		_, err := st.WriteTransfers(ctx, rows)
		return err
	}
	next := func(done int) []store.TransferRow {
		rows := make([]store.TransferRow, 0, batch)
		for len(rows) < batch && done+len(rows) < n {
			rows = append(rows, w.next())
		}
		return rows
	}
	if k := envInt("BENCH_WRITERS", defaultWriters); k > 1 {
		// Up to pregenerate rows (the first rows' burst) are all simulated before the clock
		// starts: simulating them as they are written would take a share of the cores the writers
		// and PostgreSQL share here, which in production belongs to other machines. Larger loads
		// stream, the simulator running ahead of the writers.
		const pregenerate = 2_000_000
		depth := 4 * k
		if n <= pregenerate {
			depth = (n + batch - 1) / batch
		}
		batches := make(chan []store.TransferRow, depth)
		go func() {
			defer close(batches)
			for done := 0; done < n; {
				rows := next(done)
				done += len(rows)
				batches <- rows
			}
		}()
		// Let the simulator fill the queue before the clock starts.
		for len(batches) < cap(batches) && len(batches) < n/batch {
			time.Sleep(10 * time.Millisecond)
		}
		t0 := time.Now()
		errs := make(chan error, k)
		for range k {
			go func() {
				var err error
				for rows := range batches {
					if err == nil {
						err = write(rows)
					}
				}
				errs <- err
			}()
		}
		for range k {
			if err := <-errs; err != nil {
				return 0, err
			}
		}
		return float64(n) / time.Since(t0).Seconds(), nil
	}
	var spent time.Duration
	report := time.Now()
	for done := 0; done < n; {
		rows := next(done)
		t0 := time.Now()
		if err := write(rows); err != nil {
			return 0, err
		}
		spent += time.Since(t0)
		done += len(rows)
		if time.Since(report) > 30*time.Second {
			fmt.Printf("  ... %d rows, %.0f rows/s\n", done, float64(done)/spent.Seconds())
			report = time.Now()
		}
	}
	return float64(n) / spent.Seconds(), nil
}

// queries times each query case (queryCases) through the service's router over st, after
// BENCH_WARMUP untimed requests, and prints its latency percentiles.
func queries(ctx context.Context, pool *pgxpool.Pool, st *store.Store, w *world, runs int) error {
	r, err := queryRouter(ctx, st, w)
	if err != nil {
		return err
	}
	// BENCH_SEED picks other requests (another run over the same database then reads what the
	// first did not, as a cold run does).
	seed := uint64(envCount("BENCH_SEED", 7))
	cases := queryCases(r, w, rand.New(rand.NewPCG(seed, 7)))
	stop, err := startProfiles()
	if err != nil {
		return err
	}
	defer stop()
	// The first requests of each query are not timed: a process starting to serve pays for its
	// connections' generic plans (each connection plans each statement once, over every monthly
	// partition) and fills its attribution cache.
	warm := envCount("BENCH_WARMUP", 50)
	only := os.Getenv("BENCH_ONLY")
	fmt.Printf("%-45s %10s %10s %10s\n", "query", "p50", "p99", "max")
	for _, c := range cases {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		if err := timeQuery(ctx, pool, st, r, c, runs, warm); err != nil {
			return err
		}
	}
	return nil
}

// queryRouter is the service's router over st, with its runtime settings (GOGC unless the
// environment sets one) and, unless BENCH_ATTR_WARM=0, an attribution cache holding the world's.
func queryRouter(ctx context.Context, st *store.Store, w *world) (http.Handler, error) {
	service.TuneRuntime(slog.New(slog.DiscardHandler), transfers.GCPercent)
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	fmt.Printf("queries with GOGC=%d (the service's, unless GOGC is set)\n", gc)
	if envCount("BENCH_ATTR_WARM", 1) > 0 {
		if err := w.warmAttributions(ctx, st); err != nil {
			return nil, err
		}
	} else {
		fmt.Println("attribution cache cold (BENCH_ATTR_WARM=0): pages read the attributions of the addresses they meet first")
	}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers", Logger: slog.New(slog.DiscardHandler)})
	svchttp.Register(r, app.New(st, nil, cs), query.Parser{Chains: cs, Now: func() time.Time { return w.end }})
	return r, nil
}

// queryCase is a query the bench times: the path of each request, and, for a query whose next
// request depends on the answers, what reads each answer.
type queryCase struct {
	name string
	path func() string
	seen func([]byte)
}

// queryCases are the queries the bench times, with BENCH_PATHS's own: other requests to time,
// separated by spaces, where "{exchange}", "{hot}" and "{customer}" stand for a random exchange,
// its hot wallet and a random customer.
func queryCases(r http.Handler, w *world, rng *rand.Rand) []queryCase {
	ex := func() string { return w.exchanges[rng.IntN(len(w.exchanges))] }
	other := func(a string) string {
		b := ex()
		for b == a {
			b = ex()
		}
		return b
	}
	keysetPath, keysetSeen := keysetTurns(r, w, rng, ex)
	cursorPath, cursorSeen := cursorTurns(r, w, rng, ex)
	cases := []queryCase{
		{"entity base with usdGte", func() string { return "/transfers?base=" + ex() + "&usdGte=10000" }, nil},
		{"address base sorted by usd (hot wallet)", func() string { return "/transfers?base=" + w.hot[ex()] + "&sortKey=usd" }, nil},
		{"type:cex inflow over 7 days", func() string { return "/transfers?to=type:cex&from=!type:cex&timeLast=7d" }, nil},
		{"histogram 30 days (entity, daily)", func() string { return "/transfers/histogram?base=" + ex() + "&timeLast=30d" }, nil},
		{"counterparties of an entity", func() string { return "/counterparties/entity/" + ex() }, nil},
		{"page turns (entity, 50 rows, pages 2..10)", func() string {
			return "/transfers?base=" + ex() + "&limit=50&offset=" + strconv.Itoa(50*(1+rng.IntN(9)))
		}, nil},
		{"first pages at a random time (entity, timeLte, 50 rows)", func() string {
			// A client starting to page past the offset limit somewhere in the loaded span.
			t := w.cfg.Start.Add(time.Duration(rng.Int64N(int64(w.end.Sub(w.cfg.Start)))))
			return "/transfers?base=" + ex() + "&limit=50&timeLte=" + strconv.FormatInt(t.UnixMilli(), 10)
		}, nil},
		{"keyset page turns (entity, timeLte, 50 rows)", keysetPath, keysetSeen},
		{"cursor page turns (entity, cursor, 50 rows)", cursorPath, cursorSeen},
		{"address base, customer, all flows", func() string { return "/transfers?base=" + w.customers[rng.IntN(len(w.customers))] }, nil},
		{"from an entity to a type (from=<exchange>&to=type:cex)", func() string { return "/transfers?from=" + ex() + "&to=type:cex" }, nil},
		{"from an entity to another (none in this world)", func() string {
			a := ex()
			return "/transfers?from=" + a + "&to=" + other(a)
		}, nil},
		{"from an entity with usdGte (from=<exchange>&usdGte=10000)", func() string { return "/transfers?from=" + ex() + "&usdGte=10000" }, nil},
		{"an exchange's sweeps (from=deposit:<exchange>&to=<exchange>)", func() string {
			e := ex()
			return "/transfers?from=deposit:" + e + "&to=" + e
		}, nil},
		{"base of two entities", func() string {
			a := ex()
			return "/transfers?base=" + a + "," + other(a)
		}, nil},
	}
	for _, pth := range strings.Fields(os.Getenv("BENCH_PATHS")) {
		cases = append(cases, queryCase{pth, func() string {
			e := ex()
			return strings.NewReplacer("{exchange}", e, "{hot}", w.hot[e], "{customer}", w.customers[rng.IntN(len(w.customers))]).Replace(pth)
		}, nil})
	}
	return cases
}

// startProfiles starts the CPU profile BENCH_CPUPROFILE names and the allocation profile
// BENCH_MEMPROFILE names; stop ends them and writes the latter.
func startProfiles() (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	if f := os.Getenv("BENCH_CPUPROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			return nil, err
		}
		stops = append(stops, func() { out.Close() }, pprof.StopCPUProfile)
	}
	if f := os.Getenv("BENCH_MEMPROFILE"); f != "" {
		runtime.MemProfileRate = 4096
		stops = append(stops, func() {
			if out, err := os.Create(f); err == nil {
				pprof.Lookup("allocs").WriteTo(out, 0)
				out.Close()
			}
		})
	}
	return stop, nil
}

// timedRequest is one timed request of a query, for BENCH_SLOWEST.
type timedRequest struct {
	d        time.Duration
	url      string
	tl       *timeline
	conns    int64  // connections the pool opened during the request
	gcCycles uint64 // garbage collections that ended during it
}

// timeQuery serves warm untimed and runs timed requests of c and prints their latency
// percentiles, and with BENCH_SLOWEST=n the n slowest requests, to re-run by BENCH_PATHS.
func timeQuery(ctx context.Context, pool *pgxpool.Pool, st *store.Store, r http.Handler, c queryCase, runs, warm int) error {
	var lat []time.Duration
	var slow []timedRequest
	short := st.ShortFirstPages()
	for i := 0; i < runs+warm; i++ {
		tctx, tl := withTimeline(ctx)
		req := httptest.NewRequest(http.MethodGet, c.path(), nil).WithContext(tctx)
		rec := httptest.NewRecorder()
		conns0, gc0 := pool.Stat().NewConnsCount(), gcCycles()
		t0 := time.Now()
		tl.t0 = t0 // the timeline's steps count from the request's start
		r.ServeHTTP(rec, req)
		d := time.Since(t0)
		conns, gcs := pool.Stat().NewConnsCount()-conns0, gcCycles()-gc0
		if rec.Code != 200 {
			return fmt.Errorf("%s: %d %s", req.URL, rec.Code, rec.Body.String())
		}
		if c.seen != nil {
			c.seen(rec.Body.Bytes())
		}
		if i >= warm {
			lat = append(lat, d)
			slow = append(slow, timedRequest{d, req.URL.String(), tl, conns, gcs})
		}
	}
	slices.Sort(lat)
	fmt.Printf("%-45s %10s %10s %10s\n", c.name, pct(lat, 50), pct(lat, 99), lat[len(lat)-1].Round(10*time.Microsecond))
	if n := st.ShortFirstPages() - short; n > 0 {
		fmt.Printf("  %d of %d first pages read short from their pair rows, then hour by hour\n", n, runs+warm)
	}
	if n, _ := strconv.Atoi(os.Getenv("BENCH_SLOWEST")); n > 0 {
		printSlowest(slow, n)
	}
	return nil
}

// printSlowest prints the GC cycles and live heap of a query's timed requests, where their time
// went step by step (BENCH_TIMELINE), and its n slowest requests.
func printSlowest(slow []timedRequest, n int) {
	var gcs uint64
	for _, t := range slow {
		gcs += t.gcCycles
	}
	timelines := os.Getenv("BENCH_TIMELINE") != ""
	if timelines {
		by := map[string][]time.Duration{}
		for _, t := range slow {
			t.tl.kinds(t.d, by)
		}
		for _, k := range slices.Sorted(maps.Keys(by)) {
			d := by[k]
			slices.Sort(d)
			fmt.Printf("  %-62s n=%-5d p50 %8s  p99 %8s\n", k, len(d), pct(d, 50), pct(d, 99))
		}
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	fmt.Printf("  %d GC cycles during the %d timed requests; live heap %d MB\n", gcs, len(slow), live[0].Value.Uint64()>>20)
	slices.SortFunc(slow, func(a, b timedRequest) int { return cmp.Compare(b.d, a.d) })
	for _, t := range slow[:min(n, len(slow))] {
		var why string
		if t.conns > 0 {
			why += fmt.Sprintf(" [%d new connections]", t.conns)
		}
		if t.gcCycles > 0 {
			why += fmt.Sprintf(" [%d GC cycles]", t.gcCycles)
		}
		fmt.Printf("  %10s %s%s\n", t.d.Round(10*time.Microsecond), t.url, why)
		if timelines {
			fmt.Print(t.tl)
		}
	}
}

// keysetTurns returns the paths of clients paging on by time, and what reads each answer: a
// client asks for the 50 rows at or before the last row of its previous page (timeLte = that
// row's time), for turnsPerClient turns. Its first page (at a random time of the loaded span, as
// "first pages at a random time" measures) is served here, untimed: it is not a turn.
func keysetTurns(r http.Handler, w *world, rng *rand.Rand, ex func() string) (path func() string, seen func([]byte)) {
	const turnsPerClient = 10
	var base string
	var last time.Time
	left := 0
	url := func(lte time.Time) string {
		return "/transfers?base=" + base + "&limit=50&timeLte=" + strconv.FormatInt(lte.UnixMilli(), 10)
	}
	// lastRow reads a page's last time; false when it is not a full page.
	lastRow := func(body []byte) (time.Time, bool) {
		var out struct {
			Transfers []struct {
				BlockTimestamp time.Time `json:"blockTimestamp"`
			} `json:"transfers"`
		}
		if json.Unmarshal(body, &out) != nil || len(out.Transfers) < 50 {
			return time.Time{}, false
		}
		return out.Transfers[len(out.Transfers)-1].BlockTimestamp, true
	}
	path = func() string {
		for tries := 0; left == 0; tries++ {
			base = ex()
			t := w.cfg.Start.Add(time.Duration(rng.Int64N(int64(w.end.Sub(w.cfg.Start)))))
			if tries == 100 {
				return url(t) // a world too small for full pages: first pages it is
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url(t), nil))
			if lt, ok := lastRow(rec.Body.Bytes()); ok {
				last, left = lt, turnsPerClient
			}
		}
		left--
		return url(last)
	}
	seen = func(body []byte) {
		if lt, ok := lastRow(body); ok {
			last = lt
		} else {
			left = 0
		}
	}
	return path, seen
}

// gcCycles is how many garbage collections the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func pct(s []time.Duration, p int) time.Duration {
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(10 * time.Microsecond)
}

// world streams the simulator's transfers (services/ingest/sim) as rows, through the
// consumer's own mapping, and knows the world's entities for the queries.
type world struct {
	cfg       sim.Config
	w         *sim.World
	buf       []store.TransferRow
	exchanges []string
	hot       map[string]string // exchange → an ethereum hot wallet
	customers []string
	end       time.Time
}

func newWorld(n, perYear int) (*world, error) {
	// Spread perYear transfers (about 1.2 per transaction) over a year of simulated time; n of
	// them are loaded.
	cfg := sim.Config{Seed: 11, Exchanges: 6, CustomersPerExchange: 2000, Funds: 5, Whales: 40, FailureRate: -1,
		Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), TxInterval: time.Duration(float64(365*24*time.Hour) * 1.2 / float64(perYear))}
	w := &world{cfg: cfg, hot: map[string]string{}}
	if err := w.rewind(); err != nil {
		return nil, err
	}
	for _, e := range w.w.Entities() {
		if e.Type == "cex" {
			w.exchanges = append(w.exchanges, e.ID)
			if hs := w.w.AddressesOf(e.ID, sim.RoleHotWallet, "ethereum"); len(hs) > 0 {
				w.hot[e.ID] = hs[0].Address
			}
		}
	}
	for _, a := range w.w.Addresses() {
		if a.Role == sim.RoleCustomer && a.Chain == "ethereum" {
			w.customers = append(w.customers, a.Address)
		}
	}
	w.end = cfg.Start.Add(time.Duration(float64(365*24*time.Hour) * float64(n) / float64(perYear)))
	return w, nil
}

func (w *world) rewind() error {
	sw, err := sim.New(w.cfg)
	if err != nil {
		return err
	}
	w.w, w.buf = sw, nil
	return nil
}

// take simulates the next n rows: first, and the rows the simulator made beyond them (rest),
// which next serves before simulating more.
func (w *world) take(n int) (first, rest []store.TransferRow) {
	first = make([]store.TransferRow, 0, n)
	for len(first) < n {
		first = append(first, w.next())
	}
	return first, slices.Clone(w.buf)
}

func (w *world) next() store.TransferRow {
	for len(w.buf) == 0 {
		for _, m := range w.w.Next(2000).Transfers {
			if r, err := events.TransferRow(m); err == nil {
				w.buf = append(w.buf, r)
			}
		}
	}
	r := w.buf[0]
	w.buf = w.buf[1:]
	return r
}

// warmAttributions reads the attribution of every address of the world through the store's
// cache, as a server that has served pages for a while holds them: the cache
// (store.DefaultOptions().AttributionCache, 200,000 addresses) holds all of this world's. A fresh process
// instead reads about half of a keyset turn's addresses (44 of 78) from the read model, which
// pg_prewarm and the warm-up requests leave as they are (BENCH_ATTR_WARM=0 measures that).
func (w *world) warmAttributions(ctx context.Context, st *store.Store) error {
	t0 := time.Now()
	var keys []store.AddressKey
	for _, a := range w.w.Addresses() {
		if c, ok := chains.Lookup(a.Chain); ok {
			keys = append(keys, store.AddressKey{ChainType: string(c.Type), Address: a.Address})
		}
	}
	for k := range slices.Chunk(keys, 5000) {
		if _, err := st.Attributions(ctx, k); err != nil {
			return err
		}
	}
	fmt.Printf("attribution cache warmed with the world's %d addresses in %s (BENCH_ATTR_WARM=0: cold)\n", len(keys), time.Since(t0).Round(time.Millisecond))
	return nil
}

// attributions loads what intelligence would publish once it has found everything: every
// simulated address with its entity, deposit addresses with their exchange as deposit service.
func (w *world) attributions(ctx context.Context, st *store.Store) error {
	types := map[string]*store.Entity{}
	for _, e := range w.w.Entities() {
		types[e.ID] = &store.Entity{ID: e.ID, Name: e.Name, Type: e.Type, Website: e.Website}
	}
	var as []store.Attribution
	now := time.Now()
	for _, a := range w.w.Addresses() {
		c, ok := chains.Lookup(a.Chain)
		if !ok || a.Entity == "" {
			continue
		}
		at := store.Attribution{ChainType: string(c.Type), Address: a.Address, Entity: types[a.Entity], Label: a.Label,
			IsContract: a.Contract, Version: 1, UpdatedAt: now}
		if a.Role == sim.RoleDeposit {
			at.DepositServiceID = a.Entity
		}
		as = append(as, at)
	}
	return st.ApplyAttributions(ctx, as, nil)
}
