// Command stream-bench measures the transfer stream end to end: N WebSocket clients with mixed
// filters on a stream-fanout process, transfers published to the broker at a fixed rate, and
// prints deliveries per second, Kafka-to-client latency percentiles, the server's memory per
// idle connection and CPU per delivery; then the same workload on a server whose matcher
// checks every filter for every transfer, as ratios. Every run counts the deliveries the
// workload owes (the bench's own matcher) and waits for them, so a shortfall is a loss.
//
//	go run ./cmd/stream-bench          (make bench, section stream-fanout)
//
// Settings (env): BENCH_STREAM_CLIENTS (10,000), BENCH_STREAM_RATE (transfers/s, 2,000),
// BENCH_STREAM_SECONDS (10), BENCH_STREAM_NAIVE (1: also run the naive matcher),
// BENCH_STREAM_BASELINE (a stream-fanout binary built from another commit, run first on the same
// workload and printed as ratios), BENCH_STREAM_PEER
// (1: also run the peer, Centrifugo v6, built with go install at bench time; BENCH_CENTRIFUGO
// names a binary instead), BENCH_REDIS_URL
// (redis://127.0.0.1:6379/0; keys under a random prefix, deleted at the end), BENCH_STREAM_PROFILE
// (write the server's CPU profile during the load to this path, suffixed .naive-<bool>, and
// this process's, the clients' side, suffixed .clients.naive-<bool>).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
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

// filter is client i's filter: addresses, entities, types with a floor, tokens with a floor,
// and large-value-only, in the proportions of a trading desk's watch lists.
func (w *world) filter(i int, rng *rand.Rand) map[string]any {
	switch i % 10 {
	case 0, 1, 2, 3:
		side := []string{"from", "to"}[rng.IntN(2)]
		return map[string]any{side: []string{w.addrs[rng.IntN(len(w.addrs))]}}
	case 4, 5, 6:
		return map[string]any{"to": []string{fmt.Sprintf("ent-%d", rng.IntN(w.entities))}}
	case 7:
		return map[string]any{"from": []string{"type:" + types[rng.IntN(len(types))]}, "usdGte": 100_000}
	case 8:
		return map[string]any{"tokens": []string{w.tokens[rng.IntN(len(w.tokens))]}, "usdGte": 10_000}
	}
	return map[string]any{"usdGte": 10_000_000 + rng.IntN(90_000_000)}
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
	deliveries           int64
	seconds              float64
	p50, p99             time.Duration
	idleKB, cpuPerKDeliv float64
	// cores used during the load: the server process, and this process (the clients, the
	// broker and the publisher), so a run shows which side held it back.
	serverCores, benchCores float64
	published               int
	// owed is what the workload's filters match (the bench's own matcher); the server's own
	// count of transfers written and of clients dropped as slow, from its /metrics.
	owed, serverDelivered, slowDropped int64
	dups, reconnects                   int64 // transfers a client got twice; clients that reconnected
}

func run() error {
	clients := env("BENCH_STREAM_CLIENTS", 10_000)
	rate := env("BENCH_STREAM_RATE", 2_000)
	secs := env("BENCH_STREAM_SECONDS", 10)
	b, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		return err
	}
	defer b.Close()
	brokers := b.Addrs()
	ctx := context.Background()
	topics := []eventbus.TopicSpec{{Name: eventsv1.TopicTransfers, Partitions: 4}, {Name: eventsv1.TopicAttributions, Partitions: 4},
		{Name: eventsv1.TopicUsageCalls, Partitions: 4}, {Name: eventsv1.TopicUserChanges, Partitions: 4}}
	if err := eventbus.EnsureTopics(ctx, brokers, 1, topics); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := newWorld(rng)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	if err := pub.Publish(ctx, w.attributions()...); err != nil {
		return err
	}
	redisURL := os.Getenv("BENCH_REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	// A user-labels stand-in: every caller has no labels (each caller's book is still read).
	labels := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer labels.Close()
	labelsURL = labels.URL
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("stream-fanout-bench-%d", os.Getpid()))
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/stream-fanout").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	defer os.Remove(bin)

	fmt.Printf("workload: %d clients (4 in 10 an address, 3 an entity, 1 an entity type with usdGte 100k, 1 a token with usdGte 10k, 1 usdGte >= 10M),\n"+
		"          %d transfers/s for %d s between 5,000 addresses (half attributed to 200 entities), 2 cores shared by server, clients and broker\n\n", clients, rate, secs)
	fast, err := measure(w, brokers, redisURL, bin, false, clients, rate, secs)
	if err != nil {
		return err
	}
	print("stream-fanout (indexed)", fast)
	if bb := os.Getenv("BENCH_STREAM_BASELINE"); bb != "" {
		base, err := measure(w, brokers, redisURL, bb, false, clients, rate, secs)
		if err != nil {
			return fmt.Errorf("baseline %s: %w", bb, err)
		}
		print("baseline build (indexed)", base)
		fmt.Printf("\nthis build vs baseline: deliveries/s %.2fx, p50 %.2fx lower, p99 %.2fx lower, server CPU per delivery %.2fx lower\n",
			perSec(fast)/perSec(base), ratio(base.p50, fast.p50), ratio(base.p99, fast.p99), base.cpuPerKDeliv/fast.cpuPerKDeliv)
	}
	if os.Getenv("BENCH_STREAM_NAIVE") != "0" {
		slow, err := measure(w, brokers, redisURL, bin, true, clients, rate, secs)
		if err != nil {
			return err
		}
		print("naive matcher (every filter)", slow)
		fmt.Printf("\nindexed vs naive: deliveries/s %.2fx, p99 %.2fx lower, server CPU per delivery %.2fx lower\n",
			(float64(fast.deliveries)/fast.seconds)/(float64(slow.deliveries)/slow.seconds), ratio(slow.p99, fast.p99), slow.cpuPerKDeliv/fast.cpuPerKDeliv)
	}
	if os.Getenv("BENCH_STREAM_PEER") != "0" {
		peer, err := measurePeer(w, clients, rate, secs)
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

func perSec(r result) float64 { return float64(r.deliveries) / r.seconds }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

func print(name string, r result) {
	fmt.Printf("%-30s published %d, delivered %d in %.1f s: %.0f deliveries/s; Kafka-to-client p50 %s p99 %s; %.1f KB per idle connection; %.3f CPU-s per 1,000 deliveries\n",
		name, r.published, r.deliveries, r.seconds, float64(r.deliveries)/r.seconds, dur(r.p50), dur(r.p99), r.idleKB, r.cpuPerKDeliv)
	fmt.Printf("%-30s cores used during the load: server %.2f, clients+broker+publisher %.2f (of 2, shared)\n", "", r.serverCores, r.benchCores)
	switch {
	case r.serverDelivered >= 0:
		fmt.Printf("%-30s owed %d deliveries, received %d once (%d missing, %d twice); server counted %d written, %d clients dropped as slow, %d reconnects\n", "",
			r.owed, r.deliveries, r.owed-r.deliveries, r.dups, r.serverDelivered, r.slowDropped, r.reconnects)
	case r.owed > 0:
		fmt.Printf("%-30s owed %d deliveries, received %d (%d missing)\n", "", r.owed, r.deliveries, r.owed-r.deliveries)
	}
}

// owedDeliveries is how many deliveries the n transfers measure publishes owe the clients'
// filters: the same transfers (the same seed) through the bench's own matcher.
func owedDeliveries(w *world, clients, n int) int64 {
	m := newMatcher(w, clients)
	idx := make(map[string]int, len(w.addrs))
	for i, a := range w.addrs {
		idx[a] = i
	}
	prng := rand.New(rand.NewPCG(11, 12))
	var owed int64
	for range n {
		owed += int64(len(m.match(w.transfer(prng, time.Now()), idx)))
	}
	return owed
}

// serverCounters reads the server's own delivery and slow-drop counters from its /metrics.
func serverCounters(opsAddr string) (delivered, slow int64) {
	resp, err := http.Get("http://" + opsAddr + "/metrics")
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		switch name, _, _ := strings.Cut(f[0], "{"); name {
		case "stream_transfers_delivered_total":
			delivered += int64(v)
		case "stream_slow_clients_dropped_total":
			slow += int64(v)
		}
	}
	return delivered, slow
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

// measure runs one server through the whole workload. It is one long function on purpose: the
// steps (start, connect, idle memory, load, drain, CPU) share the server process, the clients
// and the clocks, and read in order as the measurement they make.
// funclen: a bench driver printing one table in the order it measures; its split into steps is
// an open item of the lint gate (docs/README.md)
//
//gocyclo:ignore
func measure(w *world, brokers []string, redisURL, bin string, naive bool, clients, rate, secs int) (result, error) {
	var res result
	prefix := fmt.Sprintf("bench%d:", rand.Uint64())
	httpAddr, opsAddr := freePort(), freePort()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "STREAM_HTTP_ADDR="+httpAddr, "STREAM_OPS_ADDR="+opsAddr, "STREAM_INTERNAL_SECRET="+secret,
		"STREAM_KAFKA_BROKERS="+strings.Join(brokers, ","), "STREAM_REDIS_URL="+redisURL, "STREAM_REDIS_PREFIX="+prefix,
		"STREAM_USER_LABELS_URL="+labelsURL, "STREAM_MAX_CONNS_PER_KEY=1000", "STREAM_QUOTAS=bench=0/0", "STREAM_LOG_LEVEL=error",
		"STREAM_CHECKPOINT=30s", "STREAM_QUEUE_SIZE=4096", fmt.Sprintf("STREAM_NAIVE_MATCHER=%v", naive))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		cleanRedis(redisURL, prefix)
	}()
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + opsAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i > 600 {
			return res, fmt.Errorf("server not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	rss0, _ := proc(cmd.Process.Pid)

	signer := httpx.NewSigner(secret)
	rng := rand.New(rand.NewPCG(7, 8)) // the same filters for both servers
	var lat latency
	var delivered, dups, reconnects, closes atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	cls := make([]*benchClient, clients)
	sem := make(chan struct{}, 64)
	errs := make(chan error, clients)
	dial := func(i int) (*websocket.Conn, error) {
		h := http.Header{}
		signer.Sign(h, httpx.Identity{KeyID: fmt.Sprintf("key-%d", i%100), UserID: fmt.Sprintf("user-%d", i%100), Role: httpx.RoleIndividual, Tier: "bench"}, time.Now())
		dctx, dcancel := context.WithTimeout(ctx, 60*time.Second)
		defer dcancel()
		c, _, err := websocket.Dial(dctx, "ws://"+httpAddr+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			c.SetReadLimit(1 << 20)
		}
		return c, err
	}
	for i := range clients {
		f := w.filter(i, rng)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dial(i)
			if err != nil {
				errs <- err
				return
			}
			dctx, dcancel := context.WithTimeout(ctx, 60*time.Second)
			defer dcancel()
			b, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"filters": f}})
			if err := c.Write(dctx, websocket.MessageText, b); err != nil {
				errs <- err
				return
			}
			var ack struct {
				Payload struct {
					Success bool
					Data    struct {
						SessionID string `json:"sessionId"`
					}
				}
			}
			if _, m, err := c.Read(dctx); err != nil || json.Unmarshal(m, &ack) != nil || !ack.Payload.Success {
				errs <- fmt.Errorf("subscribe: %v %s", err, m)
				return
			}
			cl := &benchClient{sess: ack.Payload.Data.SessionID, seen: map[uint64]struct{}{}}
			cl.c.Store(c)
			cls[i] = cl
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	res.owed = owedDeliveries(w, clients, rate*secs)
	time.Sleep(2 * time.Second)
	rss1, cpu0 := proc(cmd.Process.Pid)
	_, self0 := proc(os.Getpid())
	res.idleKB = float64(rss1-rss0) / float64(clients)
	if path := os.Getenv("BENCH_STREAM_PROFILE"); path != "" {
		if resp, err := http.Get("http://" + opsAddr + "/debug/pprof/heap"); err == nil {
			if f, err := os.Create(fmt.Sprintf("%s.heap.%s.naive-%v", path, filepath.Base(bin), naive)); err == nil {
				_, _ = io.Copy(f, resp.Body)
				_ = f.Close()
			}
			resp.Body.Close()
		}
	}

	var last atomic.Int64
	// A client the server drops (its pong late behind a backlog, its queue full) reconnects
	// with its sessionId, as a real client does, and is owed what was matched meanwhile; a
	// transfer it gets twice counts as a duplicate, not a delivery.
	redials := make(chan struct{}, 32)
	redial := func(i int, cl *benchClient) bool {
		// As a client should: back off a moment, and not all at once.
		time.Sleep(time.Second + rand.N(2*time.Second))
		redials <- struct{}{}
		defer func() { <-redials }()
		for try := 0; ctx.Err() == nil && try < 20; try++ {
			c, err := dial(i)
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			b, _ := json.Marshal(map[string]any{"type": "reconnect", "id": "r", "payload": map[string]any{"sessionId": cl.sess}})
			if err := c.Write(ctx, websocket.MessageText, b); err != nil {
				_ = c.CloseNow()
				continue
			}
			reconnects.Add(1)
			cl.c.Store(c)
			return true
		}
		return false
	}
	for i, cl := range cls {
		go func() {
			blockKey, idKey := []byte(`"blockNumber":`), []byte(`"transfer":{"id":"`)
			buf := make([]byte, 0, 4096)
			for {
				m, err := readInto(cl.c.Load(), buf[:0])
				if err != nil {
					if ctx.Err() == nil && closes.Add(1) <= 3 {
						fmt.Fprintf(os.Stderr, "client %d dropped: %v\n", i, err)
					}
					_ = cl.c.Load().CloseNow()
					if ctx.Err() != nil || !redial(i, cl) {
						return
					}
					continue
				}
				buf = m
				now := time.Now()
				bi, ii := bytes.Index(m, blockKey), bytes.Index(m, idKey)
				if bi < 0 || ii < 0 {
					if bytes.Contains(m, []byte(`"type":"error"`)) {
						fmt.Fprintf(os.Stderr, "client %d: %s\n", i, m)
					}
					continue
				}
				id := m[ii+len(idKey):]
				id = id[:max(bytes.IndexByte(id, '_'), 0)]
				n, _ := strconv.ParseUint(string(id[max(len(id)-16, 0):]), 16, 64)
				if _, ok := cl.seen[n]; ok {
					dups.Add(1)
					continue
				}
				cl.seen[n] = struct{}{}
				rest := m[bi+len(blockKey):]
				if us, err := strconv.ParseInt(string(rest[:max(bytes.IndexByte(rest, ','), 0)]), 10, 64); err == nil {
					lat.add(now.Sub(time.UnixMicro(us)))
				}
				delivered.Add(1)
				last.Store(now.UnixNano())
			}
		}()
	}

	if path := os.Getenv("BENCH_STREAM_PROFILE"); path != "" {
		// The server's CPU profile during the load, from its ops port.
		go func() {
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", opsAddr, max(secs-1, 1)))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(fmt.Sprintf("%s.%s.naive-%v", path, filepath.Base(bin), naive))
			if err == nil {
				_, _ = io.Copy(f, resp.Body)
				_ = f.Close()
			}
		}()
		go func() {
			time.Sleep(time.Duration(secs) * time.Second / 2)
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/goroutine?debug=1", opsAddr))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(fmt.Sprintf("%s.goroutines.%s.naive-%v", path, filepath.Base(bin), naive))
			if err == nil {
				_, _ = io.Copy(f, resp.Body)
				_ = f.Close()
			}
		}()
	}
	if path := os.Getenv("BENCH_STREAM_PROFILE"); path != "" {
		// This process's CPU profile during the load: the clients' side.
		if f, err := os.Create(fmt.Sprintf("%s.clients.%s.naive-%v", path, filepath.Base(bin), naive)); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
	}
	// Publish at the rate, in 10 ms batches.
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	prng := rand.New(rand.NewPCG(11, 12))
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	for res.published < rate*secs {
		<-tick.C
		due := min(int(time.Since(start).Seconds()*float64(rate)), rate*secs) - res.published
		if due <= 0 {
			continue
		}
		evs := make([]eventbus.Event, due)
		now := time.Now()
		for i := range evs {
			t := w.transfer(prng, now)
			evs[i] = eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey(t.Chain, t.TransactionHash), Msg: t}
		}
		if err := pub.Publish(context.Background(), evs...); err != nil {
			return res, err
		}
		res.published += due
	}
	tick.Stop()
	// Wait until every owed delivery arrived, or none arrived for a while (a loss): on a
	// shared machine a second without deliveries happens while the server waits for a core.
	for prev, still := int64(-1), 0; still < 15; {
		time.Sleep(time.Second)
		n := delivered.Load()
		if n >= res.owed {
			break
		}
		if still++; n != prev {
			still = 0
		}
		prev = n
	}
	if path := os.Getenv("BENCH_STREAM_PROFILE"); path != "" {
		if resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/goroutine?debug=1", opsAddr)); err == nil {
			if f, err := os.Create(fmt.Sprintf("%s.goroutines-end.%s.naive-%v", path, filepath.Base(bin), naive)); err == nil {
				_, _ = io.Copy(f, resp.Body)
				_ = f.Close()
			}
			resp.Body.Close()
		}
	}
	res.serverDelivered, res.slowDropped = serverCounters(opsAddr)
	res.dups, res.reconnects = dups.Load(), reconnects.Load()
	_, cpu1 := proc(cmd.Process.Pid)
	_, self1 := proc(os.Getpid())
	wall := time.Since(start).Seconds()
	res.serverCores, res.benchCores = (cpu1-cpu0).Seconds()/wall, (self1-self0).Seconds()/wall
	res.deliveries = delivered.Load()
	res.seconds = time.Unix(0, last.Load()).Sub(start).Seconds()
	res.p50, res.p99 = lat.pct(0.50), lat.pct(0.99)
	res.cpuPerKDeliv = (cpu1 - cpu0).Seconds() / float64(max(res.deliveries, 1)) * 1000
	cancel()
	for _, cl := range cls {
		_ = cl.c.Load().CloseNow()
	}
	return res, nil
}

// benchClient is one client of measure: its connection (replaced when it reconnects), its
// session, and the transfers it received (read by its reader goroutine only).
type benchClient struct {
	c    atomic.Pointer[websocket.Conn]
	sess string
	seen map[uint64]struct{}
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
