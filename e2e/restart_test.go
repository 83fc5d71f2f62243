package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// `make run` killed (SIGKILL, nothing shut down) and started again on the same database, three
// times: every transfer, swap and transaction is stored once, and the counts of every settled
// hour (transfers per hour, and the chain rollup's, which must agree) never change. The stack
// runs as the `make run` binary in a child process; the simulator publishes a backfill of past
// hours at its first start and live activity after.
func TestRestartStoresEveryIDOnce(t *testing.T) {
	if os.Getenv("CHAININTEL_E2E_URL") != "" {
		t.Skip("the platform under test is not ours to kill (CHAININTEL_E2E_URL)")
	}
	ctx := context.Background()
	bin := buildStackBinary(t)
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "e2e_restart")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)

	var settled map[string]int64 // hour → transfers, as first seen settled
	for cycle := range 4 {
		startedAt := time.Now()
		child := startStack(t, bin, dbURL)
		db, err := pgxpool.New(ctx, dbURL)
		if err != nil {
			child.kill()
			t.Fatal(err)
		}
		// Settled: every hour before the current one, once this run's live transfers are stored
		// (the simulator publishes them after anything it publishes of the past) and two reads
		// a second apart agree (and agree with the rollup).
		var now map[string]int64
		Eventually(t, 60*time.Second, func() error {
			if err := child.alive(); err != nil {
				return err
			}
			var live int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers WHERE block_time >= $1`, startedAt).Scan(&live); err != nil {
				return err
			}
			if live < 20 {
				return fmt.Errorf("%d transfers of this run stored", live)
			}
			a, err := hourCounts(ctx, db)
			if err != nil {
				return err
			}
			if len(a) == 0 {
				return fmt.Errorf("no settled hour stored yet")
			}
			time.Sleep(time.Second)
			b, err := hourCounts(ctx, db)
			if err != nil {
				return err
			}
			if !maps.Equal(a, b) {
				return fmt.Errorf("settled hours still changing")
			}
			now = b
			return nil
		})
		if err := idsStoredOnce(ctx, db); err != nil {
			child.kill()
			t.Fatalf("cycle %d: %v\n%s", cycle, err, child.logTail())
		}
		for h, n := range settled {
			if now[h] != n {
				child.kill()
				t.Fatalf("cycle %d: hour %s held %d transfers, now %d\n%s", cycle, h, n, now[h], child.logTail())
			}
		}
		if settled == nil {
			settled = map[string]int64{}
		}
		for h, n := range now {
			if _, ok := settled[h]; !ok {
				settled[h] = n
			}
		}
		t.Logf("cycle %d: %d settled hours, %d transfers in them", cycle, len(now), sum(now))
		db.Close()
		if cycle < 3 {
			// Live activity under way, then killed.
			time.Sleep(2 * time.Second)
		}
		child.kill()
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// hourCounts are the transfers per hour before the current one, from the rows; an error if the
// chain rollup disagrees with them for any of those hours.
func hourCounts(ctx context.Context, db *pgxpool.Pool) (map[string]int64, error) {
	rows, err := db.Query(ctx, `WITH r AS (
  SELECT date_trunc('hour', block_time, 'UTC') AS h, count(*) AS n FROM transfers.transfers
  WHERE block_time < date_trunc('hour', now(), 'UTC') GROUP BY 1
), c AS (
  SELECT bucket AS h, sum(n) AS n FROM transfers.chain_hourly WHERE bucket < date_trunc('hour', now(), 'UTC') GROUP BY 1
)
SELECT to_char(coalesce(r.h, c.h) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), coalesce(r.n, 0), coalesce(c.n, 0)::bigint
FROM r FULL JOIN c ON r.h = c.h`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	var bad []string
	for rows.Next() {
		var h string
		var n, rolled int64
		if err := rows.Scan(&h, &n, &rolled); err != nil {
			return nil, err
		}
		if n != rolled {
			bad = append(bad, fmt.Sprintf("%s: %d rows, rollup %d", h, n, rolled))
		}
		out[h] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("rollup disagrees with the rows: %s", strings.Join(bad, "; "))
	}
	return out, nil
}

// idsStoredOnce is an error naming the natural ids stored more than once.
func idsStoredOnce(ctx context.Context, db *pgxpool.Pool) error {
	var errs []string
	for name, q := range map[string]string{
		"transfers":    `SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM transfers.transfers GROUP BY chain, tx_hash, id HAVING count(*) > 1) d`,
		"swaps":        `SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM transfers.swaps GROUP BY chain, tx_hash, id HAVING count(*) > 1) d`,
		"transactions": `SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM transfers.transactions GROUP BY chain, hash HAVING count(*) > 1) d`,
	} {
		var ids, rows int64
		if err := db.QueryRow(ctx, q).Scan(&ids, &rows); err != nil {
			return err
		}
		if ids > 0 {
			errs = append(errs, fmt.Sprintf("%d %s ids stored %d times in all", ids, name, rows))
		}
	}
	var total int64
	if err := db.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers`).Scan(&total); err != nil {
		return err
	}
	if total == 0 {
		errs = append(errs, "no transfer stored")
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// buildStackBinary builds `make run`'s command (dev/cmd/chainintel) into the test's directory.
func buildStackBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chainintel")
	cmd := exec.Command("go", "build", "-o", bin, "./dev/cmd/chainintel")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the stack: %v\n%s", err, out)
	}
	return bin
}

// repoRoot is the repository's root (go.work, Makefile).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// stackProcess is a running `make run` command.
type stackProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

// startStack runs the stack on dbURL and waits until it serves.
func startStack(t *testing.T, bin, dbURL string) *stackProcess {
	t.Helper()
	p := &stackProcess{cmd: exec.Command(bin), done: make(chan struct{})}
	p.cmd.Env = stackEnv(dbURL, filepath.Join(t.TempDir(), "stack.json"))
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &lockedWriter{p: p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "chainintel is running") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("the stack exited while starting:\n%s", p.logTail())
	case <-time.After(120 * time.Second):
		p.kill()
		t.Fatalf("the stack did not start within 120 s:\n%s", p.logTail())
	}
	return p
}

// stackEnv is the environment of a `make run` stack of its own on dbURL: embedded broker and
// Redis, a free edge port, three simulated chains at 30 transactions a second.
func stackEnv(dbURL, stateFile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "KAFKA_BROKERS", "REDIS_URL", "EVM_RPC_URL", "OTEL_EXPORTER_OTLP_ENDPOINT", "CHAININTEL_DEV_API_KEY":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "DATABASE_URL="+dbURL, "CHAININTEL_HTTP_ADDR=127.0.0.1:0", "CHAININTEL_CHAINS=ethereum,base,solana",
		"CHAININTEL_SIM_RATE=30", "CHAININTEL_LOG_LEVEL=warn",
		// A killed stack leaves its state file behind: in the test's own directory, not the tree.
		"CHAININTEL_STATE_FILE="+stateFile)
}

// kill stops the process with SIGKILL: nothing is shut down or committed.
func (p *stackProcess) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// alive is an error once the process has exited.
func (p *stackProcess) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("the stack exited:\n%s", p.logTail())
	default:
		return nil
	}
}

// logTail is the end of the process's log.
func (p *stackProcess) logTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.logs.Bytes()
	return string(b[max(0, len(b)-4000):])
}

type lockedWriter struct{ p *stackProcess }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.logs.Write(b)
}
