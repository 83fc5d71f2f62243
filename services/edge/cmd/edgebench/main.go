// Command edgebench measures the edge's overhead and prints it as a table, side by side:
//
//   - GET /chains served by the edge (auth, Redis rate limiter, metering) against the same
//     handler served directly;
//   - a cheap proxied endpoint (GET /intelligence/address/{address}, 1 credit) through the full
//     edge against a bare httputil.ReverseProxy to the same backend;
//   - both at a quarter of the bare proxy's saturation throughput (open loop), with the p99 the
//     edge adds.
//
// Everything is real: PostgreSQL (a fresh database, dropped after), Redis, and a Kafka-protocol
// broker (embedded unless -kafka is given) receiving the usage events. It asserts nothing.
// With -kafka, the edge's EDGE_KAFKA_TLS* and EDGE_KAFKA_SASL_* variables say how to connect, as
// they do for the edge; the embedded broker is plaintext.
//
//	cd services/edge && go run ./cmd/edgebench [-duration 5s] [-concurrency 32]
package main

import (
	"bufio"
	"context"

	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	libconfig "github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/telemetry"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-serve-broker" {
		serveBroker()
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "edgebench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	duration, warmup time.Duration
	conc, rounds     int
	redisURL, kafka  string
	cpuProfile, only string
	sampled          bool
	quarterRate      float64
}

func parseFlags() options {
	var o options
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measuring time per scenario")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up time per scenario")
	flag.IntVar(&o.conc, "concurrency", 32, "concurrent clients in the saturation runs")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds per pair; the median round is printed")
	flag.StringVar(&o.redisURL, "redis", redistest.ServerURL(), "Redis URL")
	flag.StringVar(&o.kafka, "kafka", "", "Kafka brokers (default: an embedded broker)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run here")
	flag.BoolVar(&o.sampled, "sampled", true, "record a span per request as a default deployment does (false: spans are not sampled)")
	flag.Float64Var(&o.quarterRate, "quarter-rate", 0, "requests/s of the quarter-load runs (default: a quarter of the bare proxy's saturation)")
	flag.StringVar(&o.only, "only", "", "run one scenario: chains-direct, chains-edge, bare, edge, pair (bare and edge, -rounds times) or quarter (default: the whole table)")
	flag.Parse()
	return o
}

// bench is what the scenarios measure against; close releases it in the reverse order of setup.
type bench struct {
	o       options
	closers []func()

	dbURL   string
	pool    *pgxpool.Pool
	rdb     *redis.Client
	brokers []string
	kafka   service.Kafka // brokers, with the TLS and SASL they take
	backend string        // the cheap service endpoint every proxy forwards to

	edgeURL, key          string // the edge, and an API key of a tier that never limits
	chainsDirect, bareURL string // the baselines
	client                *http.Client
}

func (b *bench) onClose(f func()) { b.closers = append(b.closers, f) }

func (b *bench) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

func run() error {
	o := parseFlags()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &bench{o: o}
	defer b.close()
	if err := b.startDeps(ctx); err != nil {
		return err
	}
	if err := b.startEdge(ctx); err != nil {
		return err
	}
	if err := b.startBaselines(); err != nil {
		return err
	}
	b.client = &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * o.conc, MaxIdleConnsPerHost: 4 * o.conc, IdleConnTimeout: time.Minute}}
	if err := b.check(); err != nil {
		return err
	}

	fmt.Printf("edge overhead — GOMAXPROCS=%d, NumCPU=%d, %s per scenario after %s warm-up, %d concurrent clients (closed loop), median of %d interleaved rounds\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), o.duration, o.warmup, o.conc, o.rounds)
	fmt.Printf("load generator, edge, backend, Redis, PostgreSQL and broker share this machine; spans sampled: %v\n\n", o.sampled)
	fmt.Printf("%-52s %10s %9s %9s %7s\n", "scenario", "req/s", "p50", "p99", "errors")
	return b.measure()
}

// startDeps brings up PostgreSQL (a fresh migrated database), Redis, the broker and the backend.
func (b *bench) startDeps(ctx context.Context) error {
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "edgebench")
	if err != nil {
		return err
	}
	b.onClose(drop)
	b.dbURL = dbURL
	pool, err := pgstore.Connect(ctx, dbURL, pgstore.Options{MaxConns: 8, AppName: "edgebench"})
	if err != nil {
		return err
	}
	b.onClose(pool.Close)
	b.pool = pool
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		return err
	}
	rdb, err := redisx.Connect(ctx, b.o.redisURL)
	if err != nil {
		return err
	}
	b.onClose(func() { _ = rdb.Close() })
	b.rdb = rdb
	b.brokers = strings.Split(b.o.kafka, ",")
	if b.o.kafka != "" {
		if b.kafka, err = service.KafkaFromEnv(edgeEnvPrefix, b.brokers); err != nil {
			return err
		}
	} else {
		// The embedded broker runs in a child process, as a broker is another process in any
		// deployment: in this one it would keep every usage event on the measured process's
		// heap, and the growing heap would tax each later round's garbage collection.
		addrs, stop, err := childBroker()
		if err != nil {
			return err
		}
		b.onClose(stop)
		b.brokers = addrs
		b.kafka = service.Kafka{Brokers: addrs, Partitions: 4, ReplicationFactor: 1}
		if err := eventbus.EnsureTopics(ctx, b.brokers, eventbus.Security{}, 1, []eventbus.TopicSpec{{Name: eventsv1.TopicUsageCalls, Partitions: 4}}); err != nil {
			return err
		}
	}

	// The backend: a cheap service endpoint.
	backendBody := []byte(`{"address":"0x28c6c06298d514db089934071355e5743bf21d60","chain":"ethereum","contract":false,"isUserAddress":false}`)
	b.backend, err = serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(backendBody)
	}))
	return err
}

// startEdge assembles the edge as Run assembles it, with a tier that never limits the bench, and
// creates the bench's API key.
func (b *bench) startEdge(ctx context.Context) error {
	cfg, err := b.edgeConfig()
	if err != nil {
		return err
	}
	ops, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	b.onClose(func() { _ = ops.Close() })
	tel, err := telemetry.Setup(ctx, edge.Name, cfg.Telemetry)
	if err != nil {
		return err
	}
	if !b.o.sampled {
		tel.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := service.New(ctx, edge.Name, cfg.Base, service.Deps{Logger: log, Telemetry: tel, OpsListener: ops})
	if err != nil {
		return err
	}
	sec, err := cfg.Kafka.Security()
	if err != nil {
		return err
	}
	b.onClose(sec.Close)
	pub := eventbus.NewPublisher(b.brokers, eventbus.PublisherOptions{Security: sec})
	b.onClose(func() { _ = pub.Close() })
	a, err := edge.Assemble(cfg, s, b.pool, b.rdb, pub)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	pctx, stopParts := context.WithCancel(ctx)
	for _, p := range a.Parts() {
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Run(pctx) }()
	}
	b.onClose(func() { stopParts(); wg.Wait() })
	if b.edgeURL, err = serve(a.Traced(s)); err != nil {
		return err
	}
	admin, err := edge.OpenAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	b.key, _, err = admin.CreateKey(ctx, edge.KeySpec{Tier: "bench"})
	admin.Close()
	return err
}

// edgeEnvPrefix is the edge's environment prefix, whose Kafka security the bench reads.
const edgeEnvPrefix = "EDGE_"

// edgeConfig is the edge's default configuration pointed at the bench's dependencies, every
// upstream at the backend.
func (b *bench) edgeConfig() (edge.Config, error) {
	var cfg edge.Config
	dir, err := os.MkdirTemp("", "edgebench")
	if err != nil {
		return cfg, err
	}
	b.onClose(func() { _ = os.RemoveAll(dir) })
	tiersFile := filepath.Join(dir, "tiers.yaml")
	if err := os.WriteFile(tiersFile, []byte("- {name: bench, rate: 10000000, burst: 10000000, heavyRate: 1, api: true, includedCredits: 1000000000000, overage: true}\n"), 0o600); err != nil {
		return cfg, err
	}
	if err := libconfig.Defaults(&cfg); err != nil {
		return cfg, err
	}
	cfg.InternalSecret = "edgebench-internal-secret-0123456789"
	cfg.DatabaseURL, cfg.Redis.URL, cfg.Kafka, cfg.TiersFile = b.dbURL, b.o.redisURL, b.kafka, tiersFile
	cfg.UpstreamTransfers, cfg.UpstreamIntelligence, cfg.UpstreamUserLabels = b.backend, b.backend, b.backend
	cfg.UpstreamBalances, cfg.UpstreamTokenAnalytics, cfg.UpstreamStreamFanout = b.backend, b.backend, b.backend
	return cfg, cfg.Validate()
}

// startBaselines serves /chains directly, and a bare reverse proxy to the backend.
func (b *bench) startBaselines() error {
	var err error
	b.chainsDirect, err = serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(chainsBody)
	}))
	if err != nil {
		return err
	}
	target, _ := url.Parse(b.backend)
	bare := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.SetXForwarded() }, Transport: httpx.NewTransport()}
	b.bareURL, err = serve(bare)
	return err
}

// request makes GET base+path requests, with the API key when one is given.
func request(base, path, key string) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		r, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err == nil && key != "" {
			r.Header.Set("API-Key", key)
		}
		return r, err
	}
}

// check makes sure every target answers as expected before measuring.
func (b *bench) check() error {
	for _, c := range []struct{ name, base, path, key string }{
		{"direct /chains", b.chainsDirect, "/chains", ""}, {"edge /chains", b.edgeURL, "/chains", b.key},
		{"bare proxy", b.bareURL, addressPath, ""}, {"edge proxy", b.edgeURL, addressPath, b.key},
	} {
		r, _ := request(c.base, c.path, c.key)()
		resp, err := b.client.Do(r)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s answered %d", c.name, resp.StatusCode)
		}
	}
	return nil
}

// sat runs a closed loop at saturation after a warm-up.
func (b *bench) sat(mk func() (*http.Request, error)) stats {
	_ = closedLoop(b.client, mk, b.o.conc, b.o.warmup)
	return closedLoop(b.client, mk, b.o.conc, b.o.duration)
}

// pair runs two scenarios interleaved, -rounds times; each line is the median round, so a burst of
// load from elsewhere on a shared machine skews one round, not the comparison.
func (b *bench) pair(nameA string, mkA func() (*http.Request, error), nameB string, mkB func() (*http.Request, error)) (stats, stats) {
	var as, bs []stats
	for range b.o.rounds {
		as = append(as, b.sat(mkA))
		bs = append(bs, b.sat(mkB))
	}
	ma, mb := median(as, byRate), median(bs, byRate)
	ma.print(nameA)
	mb.print(nameB)
	if b.o.rounds > 1 {
		fmt.Printf("  every round: %s | %s\n", spread(as), spread(bs))
	}
	return ma, mb
}

// measure runs the scenarios -only names, or the whole table.
func (b *bench) measure() error {
	single := map[string]struct {
		name string
		mk   func() (*http.Request, error)
	}{
		"chains-direct": {"/chains, handler served directly", request(b.chainsDirect, "/chains", "")},
		"chains-edge":   {"/chains through the edge", request(b.edgeURL, "/chains", b.key)},
		"bare":          {addressPath + ", bare ReverseProxy", request(b.bareURL, addressPath, "")},
		"edge":          {addressPath + ", full edge", request(b.edgeURL, addressPath, b.key)},
	}
	if sc, ok := single[b.o.only]; ok {
		b.sat(sc.mk).print(sc.name)
		return nil
	}
	switch b.o.only {
	case "", "quarter", "pair":
	default:
		return fmt.Errorf("-only %q: want chains-direct, chains-edge, bare, edge, pair or quarter", b.o.only)
	}
	bareReq, edgeReq := request(b.bareURL, addressPath, ""), request(b.edgeURL, addressPath, b.key)
	var bare stats
	switch b.o.only {
	case "pair":
		bare, full := b.pair("cheap route, bare ReverseProxy", bareReq, "cheap route, full edge", edgeReq)
		fmt.Printf("%-52s %10.2f\n", "  ratio edge/bare (req/s)", full.rps/bare.rps)
		return nil
	case "quarter":
		bare = b.sat(bareReq)
		bare.print("cheap route, bare ReverseProxy (saturation)")
		fmt.Println()
	default:
		d, e := b.pair("/chains, handler served directly", request(b.chainsDirect, "/chains", ""),
			"/chains through the edge (auth+limiter+metering)", request(b.edgeURL, "/chains", b.key))
		fmt.Printf("%-52s %10.2f\n\n", "  ratio edge/direct (req/s)", e.rps/d.rps)
		var full stats
		bare, full = b.pair("cheap route, bare ReverseProxy", bareReq, "cheap route, full edge", edgeReq)
		fmt.Printf("%-52s %10.2f\n\n", "  ratio edge/bare (req/s)", full.rps/bare.rps)
	}
	b.quarter(bare)
	fmt.Printf("\ncheap route = GET %s (1 credit)\n", addressPath)
	fmt.Printf("\ntargets: >= 10000 req/s through the edge, ratio >= 0.80, added p99 <= 1ms at a quarter load\n")
	return nil
}

// quarter offers both paths a quarter of the bare proxy's saturation (or -quarter-rate) at the same
// time, request by request in turn, so a burst of load from elsewhere on this shared machine lands
// on both alike; the difference of their latencies is what the edge adds. (Measured one after the
// other instead, the p99 of a bare proxy alone moves by more than its share of the edge's budget
// from one round to the next.)
func (b *bench) quarter(bare stats) {
	rate := bare.rps / 4
	if b.o.quarterRate > 0 {
		rate = b.o.quarterRate
	}
	fmt.Printf("open loop at a quarter of the bare proxy's saturation: %.0f req/s to each, interleaved request by request\n", rate)
	bareReq, edgeReq := request(b.bareURL, addressPath, ""), request(b.edgeURL, addressPath, b.key)
	var qbs, qes []stats
	var d50, d99 []time.Duration
	for range b.o.rounds {
		_, _ = openLoopPair(b.client, bareReq, edgeReq, rate, b.o.warmup)
		qb, qe := openLoopPair(b.client, bareReq, edgeReq, rate, b.o.duration)
		qbs, qes = append(qbs, qb), append(qes, qe)
		d50, d99 = append(d50, qe.p50-qb.p50), append(d99, qe.p99-qb.p99)
	}
	median(qbs, byP99).print("cheap route, bare ReverseProxy")
	median(qes, byP99).print("cheap route, full edge")
	if b.o.rounds > 1 {
		fmt.Printf("  every round: %s | %s\n", spread(qbs), spread(qes))
	}
	slices.Sort(d50)
	slices.Sort(d99)
	fmt.Printf("%-52s %10s %9s %9s\n", "  added by the edge (median of rounds)", "", fmtDur(d50[len(d50)/2]), fmtDur(d99[len(d99)/2]))
}

// serveBroker runs an embedded broker, prints its addresses on one line and serves until stdin
// closes (the parent exited).
func serveBroker() {
	b, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "edgebench broker:", err)
		os.Exit(1)
	}
	defer b.Close()
	fmt.Println(strings.Join(b.Addrs(), ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// childBroker starts serveBroker in a child process and returns its addresses.
func childBroker() ([]string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, "-serve-broker")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { _ = in.Close(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("embedded broker process: %w", err)
	}
	return strings.Split(strings.TrimSpace(line), ","), stop, nil
}

const addressPath = "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60"

var chainsBody = []byte(`["ethereum","polygon","bsc","optimism","avalanche","arbitrum_one","base","bitcoin","tron","solana","dogecoin","ton"]`)

func serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := httpx.NewServer(h)
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

type stats struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
}

func (s stats) print(name string) {
	fmt.Printf("%-52s %10.0f %9s %9s %7d\n", name, s.rps, fmtDur(s.p50), fmtDur(s.p99), s.errors)
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000)
}

func do(client *http.Client, mk func() (*http.Request, error)) bool {
	r, err := mk()
	if err != nil {
		return false
	}
	resp, err := client.Do(r)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == 200
}

// closedLoop runs conc clients back to back for d.
func closedLoop(client *http.Client, mk func() (*http.Request, error), conc int, d time.Duration) stats {
	var errs atomic.Int64
	lat := make([][]time.Duration, conc)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, 1<<16)
			for time.Now().Before(deadline) {
				t := time.Now()
				if !do(client, mk) {
					errs.Add(1)
				}
				own = append(own, time.Since(t))
			}
			lat[i] = own
		}()
	}
	wg.Wait()
	return summarize(lat, time.Since(start), errs.Load())
}

// openLoopPair offers rate requests/s to each of a and b for d, in turn on one schedule, and
// returns each one's latencies (counted from the scheduled time).
func openLoopPair(client *http.Client, a, b func() (*http.Request, error), rate float64, d time.Duration) (stats, stats) {
	const workers = 128
	var errsA, errsB atomic.Int64
	latA, latB := make([][]time.Duration, workers), make([][]time.Duration, workers)
	interval := time.Duration(float64(time.Second) * workers / (2 * rate))
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ownA, ownB := make([]time.Duration, 0, 1<<13), make([]time.Duration, 0, 1<<13)
			offset := time.Duration(float64(interval) * float64(w) / workers)
			for i := 0; ; i++ {
				at := start.Add(offset + time.Duration(i)*interval)
				if at.Sub(start) >= d {
					break
				}
				if wait := time.Until(at); wait > 0 {
					time.Sleep(wait)
				}
				mk, errs, own := a, &errsA, &ownA
				if (i+w)%2 == 1 {
					mk, errs, own = b, &errsB, &ownB
				}
				if !do(client, mk) {
					errs.Add(1)
				}
				*own = append(*own, time.Since(at))
			}
			latA[w], latB[w] = ownA, ownB
		}()
	}
	wg.Wait()
	took := time.Since(start)
	return summarize(latA, took, errsA.Load()), summarize(latB, took, errsB.Load())
}

func spread(rounds []stats) string {
	parts := make([]string, len(rounds))
	for i, r := range rounds {
		parts[i] = fmt.Sprintf("%.0f/s p99 %s", r.rps, fmtDur(r.p99))
	}
	return strings.Join(parts, ", ")
}

// Saturation rounds are ranked by throughput; fixed-rate rounds by their p99.
func byRate(s stats) float64 { return s.rps }
func byP99(s stats) float64  { return float64(s.p99) }

// median returns the median round by key.
func median(rounds []stats, key func(stats) float64) stats {
	s := slices.Clone(rounds)
	slices.SortFunc(s, func(a, b stats) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

func summarize(parts [][]time.Duration, took time.Duration, errs int64) stats {
	var all []time.Duration
	for _, p := range parts {
		all = append(all, p...)
	}
	if len(all) == 0 {
		return stats{errors: errs}
	}
	slices.Sort(all)
	q := func(f float64) time.Duration { return all[min(int(f*float64(len(all))), len(all)-1)] }
	return stats{rps: float64(len(all)) / took.Seconds(), p50: q(0.50), p99: q(0.99), errors: errs}
}
