package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
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
)

// server is a stream-fanout process under test.
type server struct {
	cmd               *exec.Cmd
	httpAddr, opsAddr string
	redisURL, prefix  string
	// tag names the run in profile file names: the binary and the matcher.
	tag string
}

// startServer starts bin on the broker and Redis and waits until it is ready.
func startServer(bin string, brokers kafkaBus, redisURL string, naive bool) (*server, error) {
	s := &server{httpAddr: freePort(), opsAddr: freePort(), redisURL: redisURL, prefix: fmt.Sprintf("bench%d:", rand.Uint64()),
		tag: fmt.Sprintf("%s.naive-%v", filepath.Base(bin), naive)}
	s.cmd = exec.Command(bin)
	// The bench's tier is in no tier table, so STREAM_DEFAULT_QUOTA=0/0 leaves it unmetered (in
	// a baseline build from before the table was shared too: its STREAM_QUOTAS named no such
	// tier, and this build refuses to start with that variable set).
	s.cmd.Env = append(os.Environ(), "STREAM_HTTP_ADDR="+s.httpAddr, "STREAM_OPS_ADDR="+s.opsAddr, "STREAM_INTERNAL_SECRET="+secret,
		"STREAM_KAFKA_BROKERS="+strings.Join(brokers.addrs, ","), "STREAM_REDIS_URL="+redisURL, "STREAM_REDIS_PREFIX="+s.prefix,
		"STREAM_USER_LABELS_URL="+labelsURL, "STREAM_TOKEN_ANALYTICS_URL=", "STREAM_MAX_CONNS_PER_KEY=1000", "STREAM_MAX_SESSIONS_PER_KEY=1000", "STREAM_DEFAULT_QUOTA=0/0", "STREAM_LOG_LEVEL=error",
		"STREAM_CHECKPOINT=30s", "STREAM_QUEUE_SIZE=4096", fmt.Sprintf("STREAM_NAIVE_MATCHER=%v", naive))
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + s.opsAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i > 600 {
			s.stop()
			return nil, fmt.Errorf("server not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
	cleanRedis(s.redisURL, s.prefix)
}

// memory is a process's resident memory and, for a Go server exporting them, its heap and
// goroutine stacks in use (bytes; -1 when not exported).
type memory struct {
	rssKB         int64
	heap, stacks  float64
	goroutineSize float64
}

// memoryOf reads pid's resident memory and, from opsAddr's /metrics when given, the Go heap
// and stacks, so the idle memory per connection can be split into them.
func memoryOf(pid int, opsAddr string) memory {
	m := memory{heap: -1, stacks: -1}
	m.rssKB, _ = proc(pid)
	if opsAddr == "" {
		return m
	}
	for name, v := range metricValues(opsAddr, "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes") {
		switch name {
		case "go_memstats_heap_inuse_bytes":
			m.heap = v
		case "go_memstats_stack_inuse_bytes":
			m.stacks = v
		}
	}
	return m
}

// idle sets the result's memory per idle connection from before and after connecting clients.
func (r *result) idle(before, after memory, clients int) {
	r.idleKB = float64(after.rssKB-before.rssKB) / float64(clients)
	r.idleHeapKB, r.idleStackKB = -1, -1
	if before.heap >= 0 && after.heap >= 0 {
		r.idleHeapKB = (after.heap - before.heap) / 1024 / float64(clients)
		r.idleStackKB = (after.stacks - before.stacks) / 1024 / float64(clients)
	}
}

// saveDebug writes one of the server's /debug/pprof documents to the profile path, when set.
func (s *server) saveDebug(what, query string) {
	path := os.Getenv("BENCH_STREAM_PROFILE")
	if path == "" {
		return
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s%s", s.opsAddr, strings.SplitN(what, ".", 2)[0], query))
	if err != nil {
		return
	}
	defer resp.Body.Close()
	name := path + "." + s.tag
	if what != "profile" {
		name = fmt.Sprintf("%s.%s.%s", path, what, s.tag)
	}
	if f, err := os.Create(name); err == nil {
		_, _ = io.Copy(f, resp.Body)
		_ = f.Close()
	}
}

// profileLoad starts, when BENCH_STREAM_PROFILE is set, the server's CPU profile over the load,
// a goroutine dump halfway, and this process's CPU profile (the clients' side); the returned
// function stops this process's profile.
func (s *server) profileLoad(secs int) (stop func()) {
	path := os.Getenv("BENCH_STREAM_PROFILE")
	if path == "" {
		return func() {}
	}
	go s.saveDebug("profile", fmt.Sprintf("?seconds=%d", max(secs-1, 1)))
	go func() {
		time.Sleep(time.Duration(secs) * time.Second / 2)
		s.saveDebug("goroutine", "?debug=1")
	}()
	f, err := os.Create(fmt.Sprintf("%s.clients.%s", path, s.tag))
	if err != nil || pprof.StartCPUProfile(f) != nil {
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}

// counters are what the clients saw during a load.
type counters struct {
	// lat is from a transfer's publish (before the publisher's batch) to a client reading it;
	// kafka from the broker's ack of its batch (the record is in the topic), as acks holds it.
	lat, kafka, pub                           latency
	acks                                      ackTimes
	delivered, dups, reconnects, closes, last atomic.Int64
}

// ackTimes holds, by transfer sequence number, when the broker acked the batch that carried it
// (unix ns; 0 while not acked). Sized for every transfer one bench process publishes.
type ackTimes struct{ at [1 << 22]atomic.Int64 }

func (a *ackTimes) set(seq uint64, t int64) { a.at[seq%uint64(len(a.at))].Store(t) }

// since is how long before now the broker acked seq: 0 when the client read the transfer
// before the publisher saw the ack (it was in the topic then).
func (a *ackTimes) since(seq uint64, now time.Time) time.Duration {
	t := a.at[seq%uint64(len(a.at))].Load()
	if t == 0 {
		return 0
	}
	return max(time.Duration(now.UnixNano()-t), 0)
}

// seqOf is a transfer's sequence number: the last 16 hex digits of its hash (world.transfer).
func seqOf(hash string) uint64 {
	n, _ := strconv.ParseUint(hash[max(len(hash)-16, 0):], 16, 64)
	return n
}

// benchClient is one client of measure: its connection (replaced when it reconnects), its
// session, and the transfers it received (read by its reader goroutine only).
type benchClient struct {
	c    atomic.Pointer[websocket.Conn]
	sess string
	// fids are the client's filter ids, each its filter's place in the client's list; seen
	// holds the deliveries received, by transfer and filter.
	fids map[string]uint64
	seen map[uint64]struct{}
}

// dialer connects clients to a server as the bench's callers (100 keys).
type dialer struct {
	addr   string
	signer *httpx.Signer
	// redials bounds the clients reconnecting at once.
	redials chan struct{}
	// keyless is set once the server refused a keyed signature (401): a baseline build from
	// before keys were signed (v2) reads only keyless ones.
	keyless atomic.Bool
}

func (d *dialer) dial(ctx context.Context, i int) (*websocket.Conn, error) {
	for {
		h := http.Header{}
		id := httpx.Identity{KeyID: fmt.Sprintf("key-%d", i%100), UserID: fmt.Sprintf("user-%d", i%100), Role: httpx.RoleIndividual, Tier: "bench"}
		keyless := d.keyless.Load()
		if keyless {
			d.signer.Sign(h, id, time.Now())
		} else {
			// Signed as the edge signs a stream call: with a key hash (stream-fanout requires one).
			key := sha256.Sum256(fmt.Appendf(nil, "key-%d", i%100))
			d.signer.SignWithKey(h, id, hex.EncodeToString(key[:]), time.Now())
		}
		dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		c, resp, err := websocket.Dial(dctx, "ws://"+d.addr+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if err != nil && !keyless && resp != nil && resp.StatusCode == http.StatusUnauthorized {
			d.keyless.Store(true)
			continue
		}
		if err == nil {
			c.SetReadLimit(1 << 20)
		}
		return c, err
	}
}

// subscribe connects client i and subscribes it to its filters, one subscribe message each.
func (d *dialer) subscribe(ctx context.Context, i int, fs []spec) (*benchClient, error) {
	c, err := d.dial(ctx, i)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl := &benchClient{fids: map[string]uint64{}, seen: map[uint64]struct{}{}}
	for j, f := range fs {
		b, _ := json.Marshal(map[string]any{"type": "subscribe", "id": strconv.Itoa(j), "payload": map[string]any{"filters": f.payload()}})
		if err := c.Write(dctx, websocket.MessageText, b); err != nil {
			return nil, err
		}
		var ack struct {
			Payload struct {
				Success bool
				Data    struct {
					SessionID string `json:"sessionId"`
					FilterID  string `json:"filterId"`
				}
			}
		}
		if _, m, err := c.Read(dctx); err != nil || json.Unmarshal(m, &ack) != nil || !ack.Payload.Success {
			return nil, fmt.Errorf("subscribe: %v %s", err, m)
		}
		cl.sess = ack.Payload.Data.SessionID
		cl.fids[ack.Payload.Data.FilterID] = uint64(j)
	}
	cl.c.Store(c)
	return cl, nil
}

// connectAll runs connect for clients 0..n-1, 64 at a time; the first error ends it.
func connectAll(n int, connect func(i int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := connect(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// connectClients connects and subscribes the workload's clients (the same filters for every
// server measured).
func (d *dialer) connectClients(ctx context.Context, subs [][]spec) ([]*benchClient, error) {
	cls := make([]*benchClient, len(subs))
	err := connectAll(len(subs), func(i int) (err error) {
		cls[i], err = d.subscribe(ctx, i, subs[i])
		return err
	})
	if err != nil {
		closeClients(cls)
		return nil, err
	}
	return cls, nil
}

func closeClients(cls []*benchClient) {
	for _, cl := range cls {
		if cl != nil {
			_ = cl.c.Load().CloseNow()
		}
	}
}

// redial reconnects a client the server dropped with its sessionId, as a real client does;
// it is owed what was matched meanwhile.
func (d *dialer) redial(ctx context.Context, i int, cl *benchClient, cs *counters) bool {
	// As a client should: back off a moment, and not all at once.
	time.Sleep(time.Second + rand.N(2*time.Second))
	d.redials <- struct{}{}
	defer func() { <-d.redials }()
	for try := 0; ctx.Err() == nil && try < 20; try++ {
		c, err := d.dial(ctx, i)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		b, _ := json.Marshal(map[string]any{"type": "reconnect", "id": "r", "payload": map[string]any{"sessionId": cl.sess}})
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			_ = c.CloseNow()
			continue
		}
		cs.reconnects.Add(1)
		cl.c.Store(c)
		return true
	}
	return false
}

// read counts client i's transfers until ctx ends; a transfer it gets twice counts as a
// duplicate, not a delivery.
func (d *dialer) read(ctx context.Context, i int, cl *benchClient, cs *counters) {
	buf := make([]byte, 0, 4096)
	for {
		m, err := readInto(cl.c.Load(), buf[:0])
		if err != nil {
			if ctx.Err() == nil && cs.closes.Add(1) <= 3 {
				fmt.Fprintf(os.Stderr, "client %d dropped: %v\n", i, err)
			}
			_ = cl.c.Load().CloseNow()
			if ctx.Err() != nil || !d.redial(ctx, i, cl, cs) {
				return
			}
			continue
		}
		buf = m
		cl.count(m, i, cs)
	}
}

var blockKey, idKey, alertKey = []byte(`"blockNumber":`), []byte(`"transfer":{"id":"`), []byte(`"alertId":"`)

// count records one message a client received.
func (cl *benchClient) count(m []byte, i int, cs *counters) {
	now := time.Now()
	bi, ii := bytes.Index(m, blockKey), bytes.Index(m, idKey)
	if bi < 0 || ii < 0 {
		if bytes.Contains(m, []byte(`"type":"error"`)) {
			fmt.Fprintf(os.Stderr, "client %d: %s\n", i, m)
		}
		return
	}
	id := m[ii+len(idKey):]
	id = id[:max(bytes.IndexByte(id, '_'), 0)]
	n, _ := strconv.ParseUint(string(id[max(len(id)-16, 0):]), 16, 64)
	seq := n
	if ai := bytes.Index(m, alertKey); ai >= 0 {
		a := m[ai+len(alertKey):]
		n = n<<3 | cl.fids[string(a[:max(bytes.IndexByte(a, '"'), 0)])]
	}
	if _, ok := cl.seen[n]; ok {
		cs.dups.Add(1)
		return
	}
	cl.seen[n] = struct{}{}
	rest := m[bi+len(blockKey):]
	if us, err := strconv.ParseInt(string(rest[:max(bytes.IndexByte(rest, ','), 0)]), 10, 64); err == nil {
		cs.lat.add(now.Sub(time.UnixMicro(us)))
	}
	cs.kafka.add(cs.acks.since(seq, now))
	cs.delivered.Add(1)
	cs.last.Store(now.UnixNano())
}

// publishLoad publishes rate transfers a second for secs seconds, in 10 ms batches, each
// through publish; it returns how many it published.
func publishLoad(rate, secs int, start time.Time, publish func(n int) error) (int, error) {
	published := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for published < rate*secs {
		<-tick.C
		due := min(int(time.Since(start).Seconds()*float64(rate)), rate*secs) - published
		if due <= 0 {
			continue
		}
		if err := publish(due); err != nil {
			return published, err
		}
		published += due
	}
	return published, nil
}

// publishTransfers is publishLoad to the broker: the transfers measure's clients are owed.
func publishTransfers(brokers kafkaBus, w *world, rate, secs int, start time.Time, cs *counters) (int, error) {
	pub := eventbus.NewPublisher(brokers.addrs, eventbus.PublisherOptions{Security: brokers.sec})
	defer pub.Close()
	prng := rand.New(rand.NewPCG(11, 12))
	return publishLoad(rate, secs, start, func(n int) error {
		evs := make([]eventbus.Event, n)
		now := time.Now()
		for i := range evs {
			t := w.transfer(prng, now)
			evs[i] = eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey(t.Chain, t.TransactionHash), Msg: t}
		}
		err := pub.Publish(context.Background(), evs...)
		acked := time.Now()
		cs.pub.add(acked.Sub(now))
		for _, e := range evs {
			cs.acks.set(seqOf(e.Msg.(*eventsv1.Transfer).TransactionHash), acked.UnixNano())
		}
		return err
	})
}

// waitOwed waits until every owed delivery arrived, or none arrived for a while (a loss): on
// a shared machine a second without deliveries happens while the server waits for a core.
func waitOwed(delivered *atomic.Int64, owed int64) {
	for prev, still := int64(-1), 0; still < 15; {
		time.Sleep(time.Second)
		n := delivered.Load()
		if n >= owed {
			return
		}
		if still++; n != prev {
			still = 0
		}
		prev = n
	}
}

// cpu is the CPU time used so far by the server and by this process.
type cpu struct{ server, self time.Duration }

func cpuOf(pid int) cpu {
	_, s := proc(pid)
	_, b := proc(os.Getpid())
	return cpu{s, b}
}

// finish fills the result's delivery, latency and CPU figures from a load that started at
// start, between the CPU readings c0 and c1.
func (r *result) finish(cs *counters, start time.Time, c0, c1 cpu) {
	wall := time.Since(start).Seconds()
	r.serverCores, r.benchCores = (c1.server-c0.server).Seconds()/wall, (c1.self-c0.self).Seconds()/wall
	r.deliveries = cs.delivered.Load()
	r.dups, r.reconnects = cs.dups.Load(), cs.reconnects.Load()
	r.seconds = time.Unix(0, cs.last.Load()).Sub(start).Seconds()
	r.p50, r.p99 = cs.lat.pct(0.50), cs.lat.pct(0.99)
	r.k50, r.k99 = cs.kafka.pct(0.50), cs.kafka.pct(0.99)
	r.pub50, r.pub99 = cs.pub.pct(0.50), cs.pub.pct(0.99)
	r.cpuPerKDeliv = (c1.server - c0.server).Seconds() / float64(max(r.deliveries, 1)) * 1000
}

// measure runs one stream-fanout server through the workload: connect and subscribe the
// clients, take the idle memory, publish at the rate, wait for every owed delivery, and read
// the CPU both sides used.
func measure(ld load, brokers kafkaBus, redisURL, bin string, naive bool) (result, error) {
	res := result{serverDelivered: -1}
	srv, err := startServer(bin, brokers, redisURL, naive)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	before := memoryOf(pid, srv.opsAddr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &dialer{addr: srv.httpAddr, signer: httpx.NewSigner(secret), redials: make(chan struct{}, 32)}
	cls, err := d.connectClients(ctx, ld.subs)
	if err != nil {
		return res, err
	}
	defer closeClients(cls)
	res.owed = ld.owed
	time.Sleep(2 * time.Second)
	res.idle(before, memoryOf(pid, srv.opsAddr), len(cls))
	srv.saveDebug("heap", "")

	var cs counters
	for i, cl := range cls {
		go d.read(ctx, i, cl, &cs)
	}
	stopProfile := srv.profileLoad(ld.secs)
	c0, start := cpuOf(pid), time.Now()
	res.published, err = publishTransfers(brokers, ld.w, ld.rate, ld.secs, start, &cs)
	if err != nil {
		stopProfile()
		return res, err
	}
	waitOwed(&cs.delivered, res.owed)
	stopProfile()
	srv.saveDebug("goroutine.end", "?debug=1")
	res.serverDelivered, res.slowDropped = serverCounters(srv.opsAddr)
	res.stages = serverStages(srv.opsAddr)
	res.finish(&cs, start, c0, cpuOf(pid))
	cancel()
	return res, nil
}
