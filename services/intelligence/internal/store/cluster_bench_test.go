package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5"
)

// BenchmarkClusterActivity measures a cluster summary's read (sql/cluster_activity.sql) over a
// cluster of INTEL_BENCH_CLUSTER_MEMBERS (5,000) members, each paying the next and three
// non-members; member 0, a busy sender, also pays INTEL_BENCH_PAIRS (300,000) non-members and
// member 2, and as many non-members pay member 1. It reports the read's time per summary and
// the buffers EXPLAIN (ANALYZE, BUFFERS) counts for it, and checks the internal figure (the n
// pairs between members) is subtracted once.
func BenchmarkClusterActivity(b *testing.B) {
	n, m := benchEnv("INTEL_BENCH_CLUSTER_MEMBERS", 5_000), benchEnv("INTEL_BENCH_PAIRS", 300_000)
	ctx := context.Background()
	reset(b)
	pool := pgtest.Pool(b)
	const id = "cl-00000000000000c1"
	start := time.Now()
	for _, q := range []string{
		`TRUNCATE intel.pair_activity, intel.address_activity`,
		`INSERT INTO intel.addresses (chain_type, address, cluster_ids, version)
			SELECT 'evm', 'm' || g, ARRAY['` + id + `'], g FROM generate_series(0, $1::int - 1) g`,
		`INSERT INTO intel.address_activity (chain_type, address, volume_usd, transfer_count, first_ms, last_ms)
			SELECT 'evm', 'm' || g, 10, 10, 1000, 2000 FROM generate_series(0, $1::int - 1) g`,
		`INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count)
			SELECT 'evm', 'm' || g, 'm' || (g + 1), 1, 1 FROM generate_series(0, $1::int - 2) g
			UNION ALL SELECT 'evm', 'm0', 'm2', 1, 1
			UNION ALL SELECT 'evm', 'm' || g, 'x' || g || '-' || k, 1, 1 FROM generate_series(0, $1::int - 1) g, generate_series(1, 3) k`,
		`INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count)
			SELECT 'evm', 'm0', 'y' || g, 1, 1 FROM generate_series(1, $1::int) g
			UNION ALL SELECT 'evm', 'z' || g, 'm1', 1, 1 FROM generate_series(1, $1::int) g`,
		`ANALYZE intel.addresses, intel.pair_activity, intel.address_activity`,
	} {
		var args []any
		switch {
		case strings.Contains(q, "'y' ||"):
			args = []any{m}
		case strings.Contains(q, "$1"):
			args = []any{n}
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d members, %d pairs of the busy member each way: built in %v", n, m, time.Since(start).Round(time.Millisecond))
	st := store.New(pool)
	b.ResetTimer()
	for range b.N {
		ca, err := st.ClusterActivity(ctx, id, n)
		if err != nil {
			b.Fatal(err)
		}
		if want := float64(10*n - n); ca.NumAddresses != int64(n) || ca.VolumeUSD != want {
			b.Fatalf("%d members, volume %v; want %d, %v", ca.NumAddresses, ca.VolumeUSD, n, want)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/summary")
	b.ReportMetric(float64(explainBuffers(b, pool, id, n)), "buffers")
}

// explainBuffers returns the shared buffers (hit and read) the statement's run touches, JIT
// off as the store runs it.
func explainBuffers(b *testing.B, pool interface {
	Begin(context.Context) (pgx.Tx, error)
}, id string, maxMembers int) int64 {
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET LOCAL jit = off"); err != nil {
		b.Fatal(err)
	}
	var out []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+store.ClusterActivitySQL, id, maxMembers).Scan(&out); err != nil {
		b.Fatal(err)
	}
	var plan []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal(out, &plan); err != nil || len(plan) == 0 {
		b.Fatalf("explain: %v %s", err, out)
	}
	return plan[0].Plan.Hit + plan[0].Plan.Read
}

// The cluster summary's statement reads each member's outgoing pairs once: one scan of
// intel.pair_activity by sender alone (a member's range), beside the per-member probe of the
// members with many pairs (by sender and recipient). Of a cluster over the limit it reads one
// member more than the limit, and neither pairs nor activity.
func TestClusterActivityReadsPairsOnce(t *testing.T) {
	ctx := context.Background()
	reset(t)
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE intel.pair_activity, intel.address_activity;
		INSERT INTO intel.addresses (chain_type, address, cluster_ids, version)
		VALUES ('evm', 'm0', ARRAY['cl-00000000000000c1'], 1), ('evm', 'm1', ARRAY['cl-00000000000000c1'], 2), ('evm', 'm2', ARRAY['cl-00000000000000c1'], 3);
		INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count)
		VALUES ('evm', 'm0', 'm1', 1, 1), ('evm', 'm0', 'x1', 1, 1), ('evm', 'm0', 'x2', 1, 1), ('evm', 'm1', 'm2', 2, 1)`); err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+store.ClusterActivitySQL, "cl-00000000000000c1", 10).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plan []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plan); err != nil || len(plan) != 1 {
		t.Fatalf("explain: %v %s", err, out)
	}
	var ranges, probes int
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == "pair_activity" {
			if strings.Contains(n.IndexCond+n.Filter, "to_addr") {
				probes++
			} else {
				ranges++
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plan[0].Plan)
	if ranges != 1 || probes != 1 {
		t.Fatalf("the plan reads intel.pair_activity by sender %d times and probes it %d times; want once each:\n%s", ranges, probes, out)
	}
	// Over the limit (3 members, at most 2): no pair is read at all.
	if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+store.ClusterActivitySQL, "cl-00000000000000c1", 2).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &plan); err != nil || len(plan) != 1 {
		t.Fatalf("explain: %v %s", err, out)
	}
	var loops func(n planNode) int
	loops = func(n planNode) int {
		l := 0
		if n.Relation == "pair_activity" || n.Relation == "address_activity" {
			l += n.Loops
		}
		for _, c := range n.Plans {
			l += loops(c)
		}
		return l
	}
	if l := loops(plan[0].Plan); l != 0 {
		t.Fatalf("a cluster over the limit read intel.pair_activity or address_activity %d times:\n%s", l, out)
	}
	over, err := store.New(pool).ClusterActivity(ctx, "cl-00000000000000c1", 2)
	if err != nil || !over.TooLarge || len(over.Members) != 3 || over.VolumeUSD != 0 {
		t.Fatalf("over the limit: %+v, %v; want 3 members read, TooLarge, nothing summed", over, err)
	}

	ca, err := store.New(pool).ClusterActivity(ctx, "cl-00000000000000c1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if ca.NumAddresses != 3 || ca.VolumeUSD != -3 || ca.TransferCount != -2 {
		// No address_activity rows: the figure is minus the internal pairs (m0>m1, m1>m2).
		t.Fatalf("got %+v, want 3 members, volume -3 in -2 transfers", ca)
	}
}

type planNode struct {
	Relation  string     `json:"Relation Name"`
	IndexCond string     `json:"Index Cond"`
	Filter    string     `json:"Filter"`
	Loops     int        `json:"Actual Loops"`
	Plans     []planNode `json:"Plans"`
}
