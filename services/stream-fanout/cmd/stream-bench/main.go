// Command stream-bench measures the transfer stream end to end: N WebSocket clients with mixed
// filters on a stream-fanout process, transfers published to the broker at a fixed rate, and
// prints deliveries per second, latency percentiles (from the publish and from the broker's ack
// to the client), the server's memory per
// idle connection and CPU per delivery; then the same workload on a server whose matcher
// checks every filter for every transfer, as ratios. Every run counts the deliveries the
// workload owes (the bench's own matcher) and waits for them, so a shortfall is a loss.
//
//	go run ./cmd/stream-bench          (make bench, section stream-fanout)
//
// Settings (env): BENCH_STREAM_MIX (watchlists: 1 to 5 filters a client, popular targets
// followed by many; single: one filter a client, see mix.go), BENCH_STREAM_CLIENTS (10,000), BENCH_STREAM_RATE (transfers/s, 2,000),
// BENCH_STREAM_SECONDS (10), BENCH_STREAM_NAIVE (1: also run the naive matcher),
// BENCH_STREAM_CAPACITY (1: with the naive matcher, offer the same transfers to both at
// BENCH_STREAM_CAPACITY_RATE, ten times the rate by default, and compare their capacities),
// BENCH_STREAM_BASELINE (a stream-fanout binary built from another commit, run on the same
// workload and printed as ratios), BENCH_STREAM_PEER (1: also run the peer, Centrifugo v6,
// built with go install at bench time; BENCH_CENTRIFUGO names a binary instead),
// BENCH_REDIS_URL (redis://127.0.0.1:6379/0; keys under a random prefix, deleted at the end),
// BENCH_STREAM_KAFKA (brokers to use instead of an embedded one; their TLS and SASL are the
// STREAM_KAFKA_TLS* and STREAM_KAFKA_SASL_* variables, as stream-fanout reads them),
// BENCH_STREAM_PROFILE=<path> (the server's CPU profile during the load, <path>.<binary>.naive-<bool>;
// this process's, the clients' side, <path>.clients.…; the server's heap once the clients are
// connected, <path>.heap.…; its goroutines mid-load and at the end, <path>.goroutine.… and
// <path>.goroutine.end.…).
package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
)

const secret = "stream-bench-internal-secret-0123456789"

var labelsURL string

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stream-bench:", err)
		os.Exit(1)
	}
}

// world is the synthetic chain the workload draws from.
type world struct {
	addrs    []string // addresses transfers move between
	entityOf []int    // entity index of addrs[i], -1 for none
	depOf    []int    // deposit service of addrs[i], -1 for none
	entities int
	tokens   []string
}

var types = []string{"cex", "dex", "fund", "individual"}

func newWorld(rng *rand.Rand) *world {
	w := &world{entities: 200}
	for i := range 5000 {
		w.addrs = append(w.addrs, fmt.Sprintf("0x%040x", 0x5eed0000+i))
		e, d := -1, -1
		switch {
		case i%2 == 0:
			e = rng.IntN(w.entities)
		case i%10 == 1:
			d = rng.IntN(w.entities)
		}
		w.entityOf, w.depOf = append(w.entityOf, e), append(w.depOf, d)
	}
	for i := range 100 {
		w.tokens = append(w.tokens, fmt.Sprintf("token-%d", i))
	}
	return w
}

func (w *world) attributions() []eventbus.Event {
	var evs []eventbus.Event
	for i, a := range w.addrs {
		if w.entityOf[i] < 0 && w.depOf[i] < 0 {
			continue
		}
		at := &eventsv1.Attribution{ChainType: "evm", Address: a, Version: 1}
		if e := w.entityOf[i]; e >= 0 {
			at.Entity = &eventsv1.Entity{Id: fmt.Sprintf("ent-%d", e), Name: fmt.Sprintf("Entity %d", e), Type: types[e%len(types)]}
		}
		if d := w.depOf[i]; d >= 0 {
			at.DepositServiceId = fmt.Sprintf("ent-%d", d)
		}
		evs = append(evs, eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", a), Msg: at})
	}
	return evs
}

// attrIndex is the attribution of each attributed address, as the servers' read model has it.
func (w *world) attrIndex() map[string]*render.Attr {
	out := map[string]*render.Attr{}
	for _, ev := range w.attributions() {
		a := ev.Msg.(*eventsv1.Attribution)
		out[a.GetAddress()] = render.AttrFrom(a)
	}
	return out
}

// index is the position of each address in w.addrs.
func (w *world) index() map[string]int {
	idx := make(map[string]int, len(w.addrs))
	for i, a := range w.addrs {
		idx[a] = i
	}
	return idx
}

var seq atomic.Uint64

func (w *world) transfer(rng *rand.Rand, now time.Time) *eventsv1.Transfer {
	n := seq.Add(1)
	h := fmt.Sprintf("0x%064x", n)
	usd := 10 * rng.ExpFloat64()
	switch r := rng.Float64(); {
	case r < 0.002:
		usd = 10_000_000 + rng.Float64()*100_000_000
	case r < 0.05:
		usd = 100_000 + rng.Float64()*1_000_000
	case r < 0.2:
		usd = 10_000 + rng.Float64()*90_000
	}
	// BlockNumber carries the publish time in microseconds: the client's latency clock.
	return &eventsv1.Transfer{Id: h + "_0", Chain: "ethereum", TransactionHash: h, BlockHash: h, BlockNumber: uint64(now.UnixMicro()),
		BlockTimeMs: now.UnixMilli(), From: w.addrs[rng.IntN(len(w.addrs))], To: w.addrs[rng.IntN(len(w.addrs))],
		TokenAddress: "", TokenId: w.tokens[rng.IntN(len(w.tokens))], TokenName: "Token", TokenSymbol: "TKN", TokenDecimals: 6,
		Amount: strconv.Itoa(1 + rng.IntN(1_000_000_000)), HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_TOKEN}
}

// latency is a histogram of 100 µs buckets up to 10 s.
type latency struct{ b [100_001]atomic.Int64 }

func (l *latency) add(d time.Duration) {
	i := int(d / (100 * time.Microsecond))
	l.b[min(max(i, 0), len(l.b)-1)].Add(1)
}

func (l *latency) pct(p float64) time.Duration {
	var total int64
	for i := range l.b {
		total += l.b[i].Load()
	}
	want := int64(float64(total)*p + 0.5)
	var n int64
	for i := range l.b {
		if n += l.b[i].Load(); n >= want && n > 0 {
			return time.Duration(i+1) * 100 * time.Microsecond
		}
	}
	return 0
}

type result struct {
	deliveries int64
	seconds    float64
	// p50 and p99 are from a transfer's publish (before the publisher's batch) to a client
	// reading it, the figure the peer, which has no broker, compares on; k50 and k99 from the
	// broker's ack of its batch (zero for the peer).
	p50, p99, k50, k99 time.Duration
	// stages are the server's per-delivery stages (stream_delivery_stage_seconds), nil when it has none.
	stages []stage
	// pub50 and pub99 are the publisher's: from a batch's publish to the broker's ack.
	pub50, pub99         time.Duration
	idleKB, cpuPerKDeliv float64
	// idleHeapKB and idleStackKB split idleKB: the Go heap and goroutine stacks in use per
	// idle connection (-1 when the server does not export them).
	idleHeapKB, idleStackKB float64
	// cores used during the load: the server process, and this process (the clients, the
	// broker and the publisher), so a run shows which side held it back.
	serverCores, benchCores float64
	published               int
	// owed is what the workload's filters match (the bench's own matcher); the server's own
	// count of transfers written and of clients dropped as slow, from its /metrics.
	owed, serverDelivered, slowDropped int64
	dups, reconnects                   int64 // transfers a client got twice; clients that reconnected
	closed                             int64 // the peer's clients the server disconnected (they do not reconnect)
}

func run() error {
	if os.Getenv("GOGC") == "" {
		// The clients and the broker live in this process: each of its collections would take
		// one of the 2 cores for a few hundred milliseconds at 10,000 clients, and the reads
		// and fetches waiting behind it would count as the server's latency.
		debug.SetGCPercent(400)
	}
	mx, err := mixFromEnv()
	if err != nil {
		return err
	}
	clients := env("BENCH_STREAM_CLIENTS", 10_000)
	rate := env("BENCH_STREAM_RATE", 2_000)
	secs := env("BENCH_STREAM_SECONDS", 10)
	brokers, stopBroker, err := startBus()
	if err != nil {
		return err
	}
	defer stopBroker()
	ctx := context.Background()
	topics := []eventbus.TopicSpec{{Name: eventsv1.TopicTransfers, Partitions: 4}, {Name: eventsv1.TopicAttributions, Partitions: 4},
		{Name: eventsv1.TopicUsageCalls, Partitions: 4}, {Name: eventsv1.TopicUserChanges, Partitions: 4}}
	if err := eventbus.EnsureTopics(ctx, brokers.addrs, brokers.sec, brokers.rf, topics); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := newWorld(rng)
	pub := eventbus.NewPublisher(brokers.addrs, eventbus.PublisherOptions{Security: brokers.sec})
	defer pub.Close()
	if err := pub.Publish(ctx, w.attributions()...); err != nil {
		return err
	}
	redisURL := os.Getenv("BENCH_REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	// A user-labels stand-in: every caller has no labels and no additions to operator entities
	// (each caller's book is still read, and its additions to the entities each filter names).
	labels := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/internal/additions": // the caller's additions, asked once per filter build
			_, _ = w.Write([]byte(`{"additions":{}}`))
			return
		case "/internal/entities":
			_, _ = w.Write([]byte(`{"entities":[]}`))
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	defer labels.Close()
	labelsURL = labels.URL
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("stream-fanout-bench-%d", os.Getpid()))
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/stream-fanout").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	defer os.Remove(bin)

	return compare(newLoad(w, mx, clients, rate, secs), brokers, redisURL, bin)
}

// newLoad makes the workload of mx and prints what it is and what its transfers owe.
func newLoad(w *world, mx mix, clients, rate, secs int) load {
	subs := workload(w, mx, clients)
	nf := 0
	for _, fs := range subs {
		nf += len(fs)
	}
	fmt.Printf("workload: mix %q (BENCH_STREAM_MIX): %d clients holding %d filters;\n          %s;\n"+
		"          %d transfers/s for %d s between 5,000 addresses (half attributed to 200 entities, 1 in 10 deposit addresses) in 100 tokens,\n"+
		"          2 cores shared by server, clients and broker\n", mx.name, clients, nf, mx.about, rate, secs)
	ld := load{w: w, subs: subs, rate: rate, secs: secs}
	ld.owed = owedDeliveries(w, subs, rate*secs)
	fmt.Printf("          the transfers owe %d deliveries (%.1f per transfer, %.0f a second)\n\n", ld.owed, float64(ld.owed)/float64(rate*secs), float64(ld.owed)/float64(secs))
	return ld
}

// compare measures this build, then the baseline build, the naive matcher and the peer as
// asked, on the same load, and prints their ratios.
// kafkaBus is the broker the bench publishes to and its stream-fanout reads: an embedded one,
// plaintext, or BENCH_STREAM_KAFKA's, with the TLS and SASL of the STREAM_KAFKA_TLS* and
// STREAM_KAFKA_SASL_* variables, which the stream-fanout process reads too (it inherits the
// environment).
type kafkaBus struct {
	addrs []string
	sec   eventbus.Security
	rf    int // replication factor of the topics the bench creates
}

// startBus starts the embedded broker, or connects to BENCH_STREAM_KAFKA's; stop releases it.
func startBus() (kafkaBus, func(), error) {
	if v := os.Getenv("BENCH_STREAM_KAFKA"); v != "" {
		k, err := service.KafkaFromEnv("STREAM_", strings.Split(v, ","))
		if err != nil {
			return kafkaBus{}, nil, err
		}
		sec, err := k.Security()
		if err != nil {
			return kafkaBus{}, nil, err
		}
		return kafkaBus{addrs: k.Brokers, sec: sec, rf: k.ReplicationFactor}, sec.Close, nil
	}
	b, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		return kafkaBus{}, nil, err
	}
	return kafkaBus{addrs: b.Addrs(), rf: 1}, b.Close, nil
}

func compare(ld load, brokers kafkaBus, redisURL, bin string) error {
	fast, err := measure(ld, brokers, redisURL, bin, false)
	if err != nil {
		return err
	}
	print("stream-fanout (indexed)", fast)
	if bb := os.Getenv("BENCH_STREAM_BASELINE"); bb != "" {
		base, err := measure(ld, brokers, redisURL, bb, false)
		if err != nil {
			return fmt.Errorf("baseline %s: %w", bb, err)
		}
		print("baseline build (indexed)", base)
		fmt.Printf("\nthis build vs baseline: deliveries/s %.2fx, p50 %.2fx lower, p99 %.2fx lower, server CPU per delivery %.2fx lower\n",
			perSec(fast)/perSec(base), ratio(base.p50, fast.p50), ratio(base.p99, fast.p99), base.cpuPerKDeliv/fast.cpuPerKDeliv)
	}
	if os.Getenv("BENCH_STREAM_NAIVE") != "0" {
		slow, err := measure(ld, brokers, redisURL, bin, true)
		if err != nil {
			return err
		}
		print("naive matcher (every filter)", slow)
		fmt.Printf("\nindexed vs naive: deliveries/s %.2fx, p99 %.2fx lower, server CPU per delivery %.2fx lower\n",
			(float64(fast.deliveries)/fast.seconds)/(float64(slow.deliveries)/slow.seconds), ratio(slow.p99, fast.p99), slow.cpuPerKDeliv/fast.cpuPerKDeliv)
		if os.Getenv("BENCH_STREAM_CAPACITY") != "0" {
			if err := capacity(ld, brokers, redisURL, bin); err != nil {
				return err
			}
		}
	}
	if os.Getenv("BENCH_STREAM_PEER") != "0" {
		peer, err := measurePeer(ld)
		if err != nil {
			fmt.Printf("\npeer: Centrifugo v6 not measured: %v\n", err)
			return nil
		}
		print("Centrifugo v6.9.1 (peer)", peer)
		fmt.Printf("\nstream-fanout vs Centrifugo: deliveries/s %.2fx, p99 %.2fx lower, KB per idle connection %.2fx, server CPU per delivery %.2fx lower\n",
			(float64(fast.deliveries)/fast.seconds)/(float64(peer.deliveries)/peer.seconds), ratio(peer.p99, fast.p99), fast.idleKB/peer.idleKB, peer.cpuPerKDeliv/fast.cpuPerKDeliv)
	}
	return nil
}

// capacity offers the load's transfers again, to both matchers, at BENCH_STREAM_CAPACITY_RATE
// (ten times the load's rate by default), faster than either delivers them, so each run's
// deliveries/s is what it can do on this machine. At the load's own rate the indexed run
// delivers what is offered, so that ratio is the offered rate over the naive matcher's capacity
// (it falls on a faster machine, whatever the indexes do); this one compares the two capacities.
func capacity(ld load, brokers kafkaBus, redisURL, bin string) error {
	n := ld.rate * ld.secs
	rate := env("BENCH_STREAM_CAPACITY_RATE", 10*ld.rate)
	fast := ld
	fast.secs = max(1, n/rate)
	fast.rate = n / fast.secs
	fmt.Printf("\ncapacity: the same %d transfers offered at %d/s (BENCH_STREAM_CAPACITY_RATE), the same clients and filters\n", fast.rate*fast.secs, fast.rate)
	idx, err := measure(fast, brokers, redisURL, bin, false)
	if err != nil {
		return err
	}
	naive, err := measure(fast, brokers, redisURL, bin, true)
	if err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		r    result
	}{{"indexed", idx}, {"naive", naive}} {
		fmt.Printf("  %-8s delivered %d in %.1f s, %.0f deliveries/s (server %.2f cores); owed %d, %d missing, %d twice\n",
			r.name+":", r.r.deliveries, r.r.seconds, perSec(r.r), r.r.serverCores, r.r.owed, r.r.owed-r.r.deliveries, r.r.dups)
	}
	fmt.Printf("indexed vs naive at capacity: deliveries/s %.2fx, server CPU per delivery %.2fx lower\n",
		perSec(idx)/perSec(naive), naive.cpuPerKDeliv/idx.cpuPerKDeliv)
	return nil
}

func perSec(r result) float64 { return float64(r.deliveries) / r.seconds }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

func print(name string, r result) {
	kafka := "–"
	if r.k99 > 0 {
		kafka = fmt.Sprintf("p50 %s p99 %s", dur(r.k50), dur(r.k99))
	}
	fmt.Printf("%-30s published %d, delivered %d in %.1f s: %.0f deliveries/s; publish-to-client p50 %s p99 %s; Kafka-to-client %s; %.1f KB per idle connection; %.3f CPU-s per 1,000 deliveries\n",
		name, r.published, r.deliveries, r.seconds, float64(r.deliveries)/r.seconds, dur(r.p50), dur(r.p99), kafka, r.idleKB, r.cpuPerKDeliv)
	if r.idleHeapKB >= 0 {
		fmt.Printf("%-30s per idle connection: %.1f KB of Go heap, %.1f KB of goroutine stacks in use\n", "", r.idleHeapKB, r.idleStackKB)
	}
	fmt.Printf("%-30s cores used during the load: server %.2f, clients+broker+publisher %.2f (of 2, shared)\n", "", r.serverCores, r.benchCores)
	printStages(r)
	switch {
	case r.serverDelivered >= 0:
		fmt.Printf("%-30s owed %d deliveries, received %d once (%d missing, %d twice); server counted %d written, %d clients dropped as slow, %d reconnects\n", "",
			r.owed, r.deliveries, r.owed-r.deliveries, r.dups, r.serverDelivered, r.slowDropped, r.reconnects)
	case r.owed > 0:
		fmt.Printf("%-30s owed %d deliveries, received %d (%d missing); %d clients disconnected by the server\n", "", r.owed, r.deliveries, r.owed-r.deliveries, r.closed)
	}
}

// load is a run's workload: the world, every client's filters, the rate and duration, and the
// deliveries its transfers owe.
type load struct {
	w          *world
	subs       [][]spec
	rate, secs int
	owed       int64
}

// owedDeliveries is how many deliveries the n transfers measure publishes owe the clients'
// filters: the same transfers (the same seed) through the bench's own matcher.
func owedDeliveries(w *world, subs [][]spec, n int) int64 {
	m, idx := newMatcher(w, subs), w.index()
	prng := rand.New(rand.NewPCG(11, 12))
	var owed int64
	for range n {
		owed += int64(len(m.match(w.transfer(prng, time.Now()), idx)))
	}
	return owed
}

// serverCounters reads the server's own delivery and slow-drop counters from its /metrics.
func serverCounters(opsAddr string) (delivered, slow int64) {
	v := metricValues(opsAddr, "stream_transfers_delivered_total", "stream_slow_clients_dropped_total")
	if v == nil {
		return -1, -1
	}
	return int64(v["stream_transfers_delivered_total"]), int64(v["stream_slow_clients_dropped_total"])
}

// metricValues reads the named metrics from a server's /metrics, each summed over its series
// (nil when /metrics cannot be read).
func metricValues(opsAddr string, names ...string) map[string]float64 {
	samples, err := promscrape.Scrape(context.Background(), http.DefaultClient, "http://"+opsAddr+"/metrics")
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, name := range names {
		for _, x := range samples.Select(name, nil) {
			out[name] += x.Value
		}
	}
	return out
}

// dur prints a percentile, ">10s" when it is past the histogram (the run fell behind).
func dur(d time.Duration) string {
	if d > 10*time.Second {
		return ">10s"
	}
	return d.Round(100 * time.Microsecond).String()
}

func freePort() string {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	return ln.Addr().String()
}

// proc reads a process's resident memory (KB) and CPU time.
func proc(pid int) (rssKB int64, cpu time.Duration) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			if f := strings.Fields(s.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
				rssKB, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		cpu = time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
	}
	return
}

// readInto reads one message into buf's space (a client reads tens of thousands of messages
// a second: no allocation per message, no context per read).
func readInto(c *websocket.Conn, buf []byte) ([]byte, error) {
	_, r, err := c.Reader(context.Background())
	if err != nil {
		return buf, err
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func cleanRedis(url, prefix string) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		if keys = append(keys, iter.Val()); len(keys) == 1000 {
			c.Del(ctx, keys...)
			keys = keys[:0]
		}
	}
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}
