// Package chaos is the platform's fault suite (`make chaos`, part of `make test`): it starts
// the local stack (dev/stack) on a Redis server of its own, a PostgreSQL reached through a TCP
// proxy it can cut, and the embedded broker; drives a steady client through the edge; and for
// each fault prints the requests sent, answered, lost, duplicated and over-billed, asserting the
// last three are zero.
package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// tally is what the steady client saw.
type tally struct {
	sent, answered, lost atomic.Int64
	credits              atomic.Int64 // X-Credits-Used of the 2xx answers
	mu                   sync.Mutex
	statuses             map[string]int64 // how each request ended, for the report
}

func (t *tally) note(how string) {
	t.mu.Lock()
	t.statuses[how]++
	t.mu.Unlock()
}

type snapshot struct{ sent, answered, lost, credits int64 }

func (t *tally) snap() snapshot {
	return snapshot{t.sent.Load(), t.answered.Load(), t.lost.Load(), t.credits.Load()}
}

// client sends a steady mix of metered calls through the edge until ctx ends. An answer is a
// JSON response that is a success, a rate or credit refusal (429), or a dependency outage
// (503); anything else (no response, a 500, a 502) is a lost request.
func client(ctx context.Context, hc *http.Client, base, key string, paths []string, tl *tally) {
	for i := 0; ctx.Err() == nil; i++ {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, base+paths[i%len(paths)], nil)
		req.Header.Set("API-Key", key)
		tl.sent.Add(1)
		resp, err := hc.Do(req)
		if err != nil {
			tl.lost.Add(1)
			tl.note("no response")
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ok := json.Valid(body)
		switch {
		case ok && resp.StatusCode/100 == 2:
			tl.answered.Add(1)
			n, _ := strconv.ParseInt(resp.Header.Get("X-Credits-Used"), 10, 64)
			tl.credits.Add(n)
			tl.note("2xx")
		case ok && (resp.StatusCode == 429 || resp.StatusCode == 503):
			tl.answered.Add(1)
			tl.note(strconv.Itoa(resp.StatusCode))
		default:
			tl.lost.Add(1)
			tl.note(fmt.Sprintf("%d %.80s", resp.StatusCode, body))
		}
		time.Sleep(100 * time.Millisecond) // about 20 calls/s for two workers: under the API tier's rate
	}
}

type fault struct {
	name          string
	inject, clear func(t *testing.T)
}

func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole platform")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	rds := startRedis(t)
	direct, drop, err := pgtest.CreateDatabase(ctx, "chaos")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	cfg, err := pgx.ParseConfig(direct)
	if err != nil {
		t.Fatal(err)
	}
	pg := startProxy(t, fmt.Sprintf("%s:%d", cfg.Host, cfg.Port))
	proxied := strings.Replace(direct, fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), pg.addr, 1)
	if proxied == direct {
		t.Fatalf("cannot route %s through the proxy (write the test database URL as host:port)", direct)
	}

	logOut := io.Discard
	if path := os.Getenv("CHAININTEL_CHAOS_LOG"); path != "" {
		if f, err := os.Create(path); err == nil {
			logOut = f
			defer f.Close()
		}
	}
	broker := startBroker(t)
	stackCtx, stopStack := context.WithCancel(ctx)
	st, err := stack.Start(stackCtx, stack.Options{HTTPAddr: "127.0.0.1:0", DatabaseURL: proxied, RedisURL: rds.url(),
		KafkaBrokers: broker.c.ListenAddrs(),
		LogLevel:     "warn", LogOutput: logOut, SimRate: 3},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopStack(); <-st.Done() })

	db, err := pgxpool.New(ctx, direct) // the suite's own view, not through the proxy
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)

	hc := &http.Client{Timeout: 30 * time.Second}
	paths := []string{"/transfers?limit=5", "/chains", "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60", "/transfers/histogram?timeLast=1d&granularity=1h"}
	var billedBefore int64 = waitHealthy(t, hc, st.URL, st.APIKey, paths) // what the client was charged so far

	faults := []fault{
		{"none (steady)", func(*testing.T) {}, func(*testing.T) {}},
		{"Redis stop/start", func(*testing.T) { rds.stop() }, func(t *testing.T) {
			if err := rds.start(); err != nil {
				t.Fatal(err)
			}
		}},
		{"PostgreSQL cut/restore", func(*testing.T) { pg.Cut() }, func(t *testing.T) {
			if err := pg.Restore(); err != nil {
				t.Fatal(err)
			}
		}},
		{"broker down/up", func(*testing.T) { broker.down.Store(true) }, func(*testing.T) { broker.down.Store(false) }},
	}
	r := runner{hc: hc, base: st.URL, key: st.APIKey, paths: paths, db: db}
	var rows []row
	for _, f := range faults {
		var res row
		res, billedBefore = r.run(t, ctx, f, billedBefore)
		rows = append(rows, res)
	}

	fmt.Printf("\nfault suite (a steady client of 2 workers through the edge; each fault lasts 3 s)\n")
	fmt.Printf("%-24s %6s %9s %5s %11s %12s %13s  %s\n", "fault", "sent", "answered", "lost", "duplicated", "over-billed", "period drift", "outcomes")
	for _, r := range rows {
		fmt.Printf("%-24s %6d %9d %5d %11d %12d %13d  %s\n", r.name, r.sent, r.answered, r.lost, r.dup, r.over, r.drift, r.outcomes)
	}
	for _, r := range rows {
		if r.lost != 0 || r.dup != 0 || r.over != 0 {
			t.Errorf("%s: lost %d, duplicated %d, over-billed %d; want 0 each (outcomes: %s)", r.name, r.lost, r.dup, r.over, r.outcomes)
		}
		if r.under != 0 {
			t.Errorf("%s: the durable ledger holds %d credits less than the client was charged", r.name, r.under)
		}
		if r.drift != 0 {
			t.Errorf("%s: the period counter (X-Credits-Period-Used) is %+d credits off the durable ledger", r.name, r.drift)
		}
		if r.answered == 0 {
			t.Errorf("%s: no request answered", r.name)
		}
	}
}

// row is one fault's line of the report.
type row struct {
	name                                          string
	sent, answered, lost, dup, over, under, drift int64
	outcomes                                      string
}

// runner drives one fault under the steady client and measures it.
type runner struct {
	hc          *http.Client
	base, key   string
	paths       []string
	db          *pgxpool.Pool
	dupBefore   int64 // duplicated ids before the fault
	driftBefore int64 // period counter drift before the fault
}

// run sends steady traffic, injects the fault, clears it, waits for recovery, sends traffic
// again, then compares what the client was charged with the durable ledger and the period
// counter, and counts duplicated natural ids. billed is what the client had been charged before;
// run returns it updated.
func (r *runner) run(t *testing.T, ctx context.Context, f fault, billed int64) (row, int64) {
	tl := &tally{statuses: map[string]int64{}}
	cctx, stopClient := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); client(cctx, r.hc, r.base, r.key, r.paths, tl) }()
	}
	time.Sleep(2 * time.Second) // steady traffic before the fault
	f.inject(t)
	time.Sleep(3 * time.Second) // traffic through the fault
	f.clear(t)
	recovery := waitHealthy(t, r.hc, r.base, r.key, r.paths)
	time.Sleep(2 * time.Second) // traffic after recovery
	stopClient()
	wg.Wait()
	s := tl.snap()

	// Billing: the durable ledger must reach exactly what the client was told it spent, and
	// the period counter the edge enforces limits with must converge to the ledger.
	charged := billed + s.credits + recovery
	durable := settle(t, r.db, charged)
	over, under := max(durable-charged, 0), max(charged-durable, 0)
	drift := periodDrift(t, r.hc, r.base, r.key, durable)
	dup := duplicates(t, r.db)
	res := row{f.name, s.sent, s.answered, s.lost, dup - r.dupBefore, over, under, drift - r.driftBefore, outcomes(tl)}
	r.dupBefore, r.driftBefore = dup, drift
	return res, durable // a difference is reported once, for the fault that made it
}

// periodDrift returns how far the period counter a call reports (X-Credits-Period-Used) stays
// from the durable ledger, once it has had the chance to converge: 0 when it reaches it. The
// call used (/chains) costs nothing.
func periodDrift(t *testing.T, hc *http.Client, base, key string, durable int64) int64 {
	t.Helper()
	var drift int64
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, base+"/chains", nil)
		req.Header.Set("API-Key", key)
		resp, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n, err := strconv.ParseInt(resp.Header.Get("X-Credits-Period-Used"), 10, 64); err == nil {
				if drift = n - durable; drift == 0 {
					return 0
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return drift
}

func outcomes(tl *tally) string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var parts []string
	for k, v := range tl.statuses {
		parts = append(parts, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// waitHealthy waits until every path answers 200 through the edge, and returns the credits its
// own calls were charged. The bound is a hang guard.
func waitHealthy(t *testing.T, hc *http.Client, base, key string, paths []string) (credits int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range paths {
		for {
			req, _ := http.NewRequest(http.MethodGet, base+p, nil)
			req.Header.Set("API-Key", key)
			resp, err := hc.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					n, _ := strconv.ParseInt(resp.Header.Get("X-Credits-Used"), 10, 64)
					credits += n
				}
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not recover: %v", p, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return credits
}

// settle waits until the durable ledger (edge.credit_periods, fed by the metering consumer)
// holds want credits, and returns what it holds then or when it stops moving. The platform has
// one caller, the suite's client.
func settle(t *testing.T, db *pgxpool.Pool, want int64) int64 {
	t.Helper()
	var got, last int64 = -1, -1
	stable := time.Now()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if err := db.QueryRow(context.Background(), `SELECT coalesce(sum(credits_used), 0)::bigint FROM edge.credit_periods`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != last {
			last, stable = got, time.Now()
		}
		// Equal, or past it, or not moving for a minute: the consumer has caught up either way.
		// Short of it, a minute outlasts several of the consumer's retries after a fault (its
		// backoff reaches 10 s) on a loaded machine, so a consumer still retrying is not taken
		// for one that has caught up short.
		if got == want || got > want && time.Since(stable) > 5*time.Second || time.Since(stable) > time.Minute {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
	return got
}

// duplicates counts natural ids (chain, id) stored more than once in transfers.
func duplicates(t *testing.T, db *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(context.Background(),
		`SELECT count(*) - count(DISTINCT (chain, id)) FROM transfers.transfers`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
