package store_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// statementLog records what a pool sends: each statement sent on its own (Exec, Query, and
// BEGIN/COMMIT, which pgx sends as statements) and each batch, with the statements queued in it.
// Each entry is one round trip once the statements are prepared on the connection.
type statementLog struct {
	mu      sync.Mutex
	entries [][]string // a statement alone, or a batch's statements
	batch   []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, []string{d.SQL})
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batch = []string{}
	return ctx
}

func (l *statementLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batch = append(l.batch, d.SQL)
}

func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, l.batch)
	l.batch = nil
}

// take returns the entries logged since the last call and forgets them.
func (l *statementLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.entries
	l.entries = nil
	return out
}

// tracedStore is a store over a pool of its own (one connection) on the package database whose statements l
// records.
func tracedStore(t *testing.T) (*store.Store, *pgxpool.Pool, *statementLog) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	l := &statementLog{}
	cfg.ConnConfig.Tracer = l
	cfg.MaxConns = 1 // one connection: what a call sets on it, the next sees
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool), pool, l
}

// naming counts the statements of entries that name any of tables.
func naming(entries [][]string, tables ...string) (n int) {
	for _, e := range entries {
		for _, sql := range e {
			for _, table := range tables {
				if strings.Contains(sql, table) {
					n++
					break
				}
			}
		}
	}
	return n
}

// A transfer batch adds its pairs to intel.pair_activity and to the internal figures of the
// entities holding both their addresses in one statement, and both come out right: the pairs
// per (from, to), an entity's figure the transfers between two of its addresses.
func TestTransferBatchPairsInOneStatement(t *testing.T) {
	ctx := context.Background()
	reset(t)
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE intel.pair_activity, intel.entity_internal, intel.entity_moves, intel.edges,
		intel.address_activity, intel.settled_activity, intel.consumer_offsets, intel.block_facts, intel.orphaned_blocks, intel.transfer_ids, intel.displaced_facts;
		INSERT INTO intel.entities (id, name, type, source, version) VALUES ('acme', 'Acme', 'cex', 'test', 1);
		INSERT INTO intel.addresses (chain_type, address, entity_id, label, confidence, source, version)
		VALUES ('evm', '0x01', 'acme', '', 1, 'test', 1), ('evm', '0x02', 'acme', '', 1, 'test', 2)`); err != nil {
		t.Fatal(err)
	}
	st, _, log := tracedStore(t)
	tr := func(off int64, from, to string, usd float64) store.TransferFact {
		return store.TransferFact{Offset: store.Offset{Topic: "chain.transfers.v1", Offset: off}, Chain: "ethereum", ChainType: "evm",
			BlockHash: "0xb1", ID: "t" + string(rune('a'+off)), From: from, To: to, TimeMs: 1000 + off, USD: usd}
	}
	if err := st.ApplyTransfers(ctx, []store.TransferFact{
		tr(0, "0x01", "0x02", 10), tr(1, "0x02", "0x01", 5), tr(2, "0x01", "0x03", 7), tr(3, "0x01", "0x02", 2),
	}); err != nil {
		t.Fatal(err)
	}
	entries := log.take()
	if n := naming(entries, "intel.pair_activity", "intel.entity_internal"); n != 1 {
		t.Fatalf("%d statements name intel.pair_activity or intel.entity_internal; want one: %q", n, entries)
	}
	rows, err := pool.Query(ctx, `SELECT from_addr || '>' || to_addr || ' ' || volume_usd || '/' || transfer_count FROM intel.pair_activity
		UNION ALL SELECT entity_id || ' ' || volume_usd || '/' || transfer_count FROM intel.entity_internal ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0x01>0x02 12/2", "0x01>0x03 7/1", "0x02>0x01 5/1", "acme 17/3"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// A cluster summary's read costs one round trip: JIT turned off, custom plans forced and the
// statement in one batch, not a transaction of its own (BEGIN, SET LOCAL, the statement,
// COMMIT). The settings hold for the batch's statement (with jit_above_cost 0 the same EXPLAIN
// alone shows JIT, in the batch none; the prepared statement never runs a generic plan), and the
// batch's implicit transaction ends them: the connection's next statement has the server's.
func TestClusterActivityOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	reset(t)
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE intel.pair_activity, intel.address_activity;
		INSERT INTO intel.addresses (chain_type, address, cluster_ids, version)
		VALUES ('evm', 'm0', ARRAY['cl-00000000000000c1'], 1), ('evm', 'm1', ARRAY['cl-00000000000000c1'], 2);
		INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count) VALUES ('evm', 'm0', 'm1', 4, 1);
		INSERT INTO intel.address_activity (chain_type, address, volume_usd, transfer_count, first_ms, last_ms)
		VALUES ('evm', 'm0', 4, 1, 1000, 1000), ('evm', 'm1', 4, 1, 1000, 1000)`); err != nil {
		t.Fatal(err)
	}
	st, tpool, log := tracedStore(t)
	var server string
	if err := tpool.QueryRow(ctx, "SHOW jit").Scan(&server); err != nil {
		t.Fatal(err)
	}
	log.take()
	// The first on the connection prepares the statement, the others reuse it, past the five
	// runs after which PostgreSQL would turn to a generic plan.
	for range 7 {
		ca, err := st.ClusterActivity(ctx, "cl-00000000000000c1", 10)
		if err != nil {
			t.Fatal(err)
		}
		if ca.NumAddresses != 2 || ca.VolumeUSD != 4 || ca.TransferCount != 1 || ca.FirstMs != 1000 || ca.LastMs != 1000 {
			t.Fatalf("got %+v, want 2 members, 4 USD in 1 transfer at 1000", ca)
		}
		if got, want := log.take(), [][]string{{"SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)", store.ClusterActivitySQL}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("sent %q\nwant one batch %q", got, want)
		}
	}
	var generic, custom int
	if err := tpool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`,
		store.ClusterActivitySQL).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if generic != 0 || custom != 7 {
		t.Fatalf("the statement ran with %d generic and %d custom plans; want 0 and 7", generic, custom)
	}
	var after, mode string
	if err := tpool.QueryRow(ctx, "SELECT current_setting('jit'), current_setting('plan_cache_mode')").Scan(&after, &mode); err != nil {
		t.Fatal(err)
	}
	if after != server || mode != "auto" {
		t.Fatalf("after a summary on the connection: jit %s, plan_cache_mode %s; want the server's %s, auto", after, mode, server)
	}

	if _, err := tpool.Exec(ctx, "SET jit_above_cost = 0"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = tpool.Exec(ctx, "RESET jit_above_cost") }()
	explain := "EXPLAIN (ANALYZE, FORMAT JSON) " + store.ClusterActivitySQL
	var plan string
	if err := tpool.QueryRow(ctx, explain, "cl-00000000000000c1", 10).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, `"JIT"`) {
		t.Log("the server does not compile with JIT (pg_jit_available() false): nothing to turn off")
		return
	}
	br := tpool.SendBatch(ctx, store.CustomPlanNoJIT(explain, "cl-00000000000000c1", 10))
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	if err := br.QueryRow().Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, `"JIT"`) {
		t.Fatalf("the batch's statement was compiled: %s", plan)
	}
}
