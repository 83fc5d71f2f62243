package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/coder/websocket"
)

// The peer: the same clients (one channel each) and the same messages per client through
// Centrifugo v6, built from the Go module proxy at bench time into a temporary directory.
// The bench does the matching (Centrifugo has no filters) and publishes each transfer, rendered
// as stream-fanout renders it, with one broadcast to the channels of the clients it matches,
// batched per 10 ms over the HTTP API.
const centrifugoModule = "github.com/centrifugal/centrifugo/v6@v6.9.1"

func centrifugoBinary() (string, error) {
	if p := os.Getenv("BENCH_CENTRIFUGO"); p != "" {
		return p, nil
	}
	dir := filepath.Join(os.TempDir(), "chainintel-bench-centrifugo-v6.9.1")
	bin := filepath.Join(dir, "centrifugo")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "install", centrifugoModule)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", centrifugoModule, err, out)
	}
	return bin, nil
}

// centrifugo is a Centrifugo process under test.
type centrifugo struct {
	cmd  *exec.Cmd
	addr string
}

const peerAPIKey = "stream-bench-centrifugo-api-key"

// startCentrifugo builds (or finds) Centrifugo, starts it configured by env alone and waits
// until it is healthy.
func startCentrifugo() (*centrifugo, error) {
	bin, err := centrifugoBinary()
	if err != nil {
		return nil, err
	}
	p := &centrifugo{addr: freePort()}
	host, port, _ := strings.Cut(p.addr, ":")
	p.cmd = exec.Command(bin)
	p.cmd.Dir = os.TempDir() // configured by env alone, never by a config.json where the bench runs
	p.cmd.Env = append(os.Environ(), "CENTRIFUGO_CLIENT_INSECURE=true", "CENTRIFUGO_HEALTH_ENABLED=true", "CENTRIFUGO_HTTP_API_KEY="+peerAPIKey,
		"CENTRIFUGO_HTTP_SERVER_ADDRESS="+host, "CENTRIFUGO_HTTP_SERVER_PORT="+port, "CENTRIFUGO_LOG_LEVEL=error",
		"CENTRIFUGO_PROMETHEUS_ENABLED=true")
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + p.addr + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, nil
			}
		}
		if i > 300 {
			p.stop()
			return nil, fmt.Errorf("centrifugo not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *centrifugo) stop() { _ = p.cmd.Process.Signal(os.Interrupt); _ = p.cmd.Wait() }

// measurePeer runs the workload through Centrifugo: the same clients, each on a channel of its
// own, and the same deliveries, counted as measure counts them.
func measurePeer(ld load) (result, error) {
	w, clients := ld.w, len(ld.subs)
	res := result{serverDelivered: -1}
	p, err := startCentrifugo()
	if err != nil {
		return res, err
	}
	defer p.stop()
	pid := p.cmd.Process.Pid
	before := memoryOf(pid, p.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := make([]*websocket.Conn, clients)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.CloseNow()
			}
		}
	}()
	if err := connectAll(clients, func(i int) (err error) { conns[i], err = peerConnect(ctx, p.addr, i, len(ld.subs[i])); return err }); err != nil {
		return res, err
	}
	res.owed = ld.owed
	time.Sleep(2 * time.Second)
	res.idle(before, memoryOf(pid, p.addr), clients)

	var cs counters
	for _, c := range conns {
		go peerRead(ctx, c, &cs)
	}
	m, idx, attrs := newMatcher(w, ld.subs), w.index(), w.attrIndex()
	prng := rand.New(rand.NewPCG(11, 12)) // the transfers measure publishes
	c0, start := cpuOf(pid), time.Now()
	res.published, err = publishLoad(ld.rate, ld.secs, start, func(n int) error { return peerPublish(p.addr, w, m, idx, attrs, prng, n) })
	if err != nil {
		return res, err
	}
	waitOwed(&cs.delivered, res.owed)
	res.finish(&cs, start, c0, cpuOf(pid))
	res.closed = cs.closes.Load()
	return res, nil
}

// peerConnect connects client i with Centrifugo's JSON protocol and subscribes it to one
// channel per filter, c<i>.<j>.
func peerConnect(ctx context.Context, addr string, i, filters int) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, "ws://"+addr+"/connection/websocket", nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 22)
	cmds := []string{`{"id":1,"connect":{}}`}
	for j := range filters {
		cmds = append(cmds, fmt.Sprintf(`{"id":%d,"subscribe":{"channel":"c%d.%d"}}`, j+2, i, j))
	}
	for id, cmd := range cmds {
		if err := c.Write(dctx, websocket.MessageText, []byte(cmd)); err != nil {
			return nil, err
		}
		_, m, err := c.Read(dctx)
		if err != nil || !bytes.Contains(m, []byte(fmt.Sprintf(`"id":%d`, id+1))) || bytes.Contains(m, []byte(`"error"`)) {
			return nil, fmt.Errorf("centrifugo %s: %v %s", cmd, err, m)
		}
	}
	return c, nil
}

// peerRead counts the publications a client receives (several per frame, one a line) and
// answers the server's pings.
func peerRead(ctx context.Context, c *websocket.Conn, cs *counters) {
	key := []byte(`"blockNumber":`)
	for {
		_, m, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				cs.closes.Add(1) // the peer's clients do not reconnect: what follows is missing
			}
			return
		}
		now := time.Now()
		if bytes.Equal(bytes.TrimSpace(m), []byte(`{}`)) {
			_ = c.Write(ctx, websocket.MessageText, []byte(`{}`))
			continue
		}
		for {
			i := bytes.Index(m, key)
			if i < 0 {
				break
			}
			m = m[i+len(key):]
			j := bytes.IndexAny(m, ",}")
			if us, err := strconv.ParseInt(string(m[:j]), 10, 64); err == nil {
				cs.lat.add(now.Sub(time.UnixMicro(us)))
			}
			cs.delivered.Add(1)
			cs.last.Store(now.UnixNano())
		}
	}
}

// peerBatch is the most broadcasts one request to Centrifugo's HTTP API carries: after a stall
// the publisher has many transfers due at once, and one request for all of them would pass the
// API's body limit.
const peerBatch = 256

// peerPublish publishes n transfers: one broadcast each to the channels it matches, with the
// Transfer JSON stream-fanout sends (rendered by its code, with the attributions of the
// world), in batch requests.
func peerPublish(addr string, w *world, m *matcher, idx map[string]int, attrs map[string]*render.Attr, rng *rand.Rand, n int) error {
	type broadcast struct {
		Channels []string        `json:"channels"`
		Data     json.RawMessage `json:"data"`
	}
	var cmds []map[string]broadcast
	now := time.Now()
	for range n {
		t := w.transfer(rng, now)
		subs := m.match(t, idx)
		if len(subs) == 0 {
			continue
		}
		chans := make([]string, len(subs))
		for i, s := range subs {
			chans[i] = s.channel()
		}
		tr := render.TransferOf(t, attrs[t.From], attrs[t.To])
		cmds = append(cmds, map[string]broadcast{"broadcast": {Channels: chans, Data: render.JSON(&tr)}})
	}
	for len(cmds) > 0 {
		k := min(len(cmds), peerBatch)
		body, err := json.Marshal(map[string]any{"commands": cmds[:k]})
		if err != nil {
			return err
		}
		if err := peerPost(addr, body); err != nil {
			return err
		}
		cmds = cmds[k:]
	}
	return nil
}

// peerPost sends one batch request to Centrifugo's HTTP API.
func peerPost(addr string, body []byte) error {
	var resp *http.Response
	for try := 0; ; try++ {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/batch", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("X-API-Key", peerAPIKey)
		req.Header.Set("Content-Type", "application/json")
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		if try == 2 {
			return fmt.Errorf("centrifugo batch of %d bytes: %w", len(body), err)
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("centrifugo batch: %s", resp.Status)
	}
	return nil
}
