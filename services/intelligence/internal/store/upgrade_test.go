package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The previous release's statements that open its transfer batches and reorgs, as it sends them
// (internal/store/chaindata.go before migration 13): replicas of that release run beside this one
// during a rolling upgrade, after the migrations, and keep neither pair_activity nor
// entity_internal.
var previousWrites = []struct {
	name, sql string
	args      []any
}{
	{"batch's offsets read (its first statement after the lock)",
		`SELECT partition, "offset" FROM intel.consumer_offsets WHERE topic = $1 FOR UPDATE`,
		[]any{"chain.transfers.v1"}},
	{"batch's offsets write",
		`INSERT INTO intel.consumer_offsets (topic, partition, "offset") VALUES ($1, $2, $3)
			ON CONFLICT (topic, partition) DO UPDATE SET "offset" = GREATEST(intel.consumer_offsets."offset", excluded."offset")`,
		[]any{"chain.transfers.v1", 0, int64(7)}},
	{"batch's block states",
		`SELECT b.chain, b.hash, o.block_hash IS NOT NULL, coalesce(f.ids, '{}')
		FROM unnest($1::text[], $2::text[]) b(chain, hash)
		LEFT JOIN intel.orphaned_blocks o ON o.chain = b.chain AND o.block_hash = b.hash
		LEFT JOIN intel.block_facts f ON f.chain = b.chain AND f.block_hash = b.hash`,
		[]any{[]string{"ethereum"}, []string{"0xb1"}}},
	{"reorg's orphaned blocks (its first statement after the lock when it orphans)",
		`INSERT INTO intel.orphaned_blocks (chain, block_hash) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
		[]any{"ethereum", []string{"0xb1"}}},
	{"reorg's canonical blocks (its first statement after the lock otherwise)",
		`DELETE FROM intel.orphaned_blocks WHERE chain = $1 AND block_hash = ANY($2)`,
		[]any{"ethereum", []string{"0xb1"}}},
}

// TestMigrationFailsPreviousWriters runs the previous release's transfer-batch and reorg
// statements against the migrated schema: each must fail on a column migration 13 renamed, so a
// batch or reorg of a previous-release replica is rolled back and retried, its offsets not
// committed, by a replica of this release, never committed without its pairs.
func TestMigrationFailsPreviousWriters(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for _, w := range previousWrites {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx, w.sql, w.args...)
		_ = tx.Rollback(ctx)
		if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42703" {
			t.Errorf("the previous release's %s: %v, want an undefined column", w.name, err)
		}
	}
}

// Migration 13 waits for an import's uncommitted relabel and a transfer batch holding
// store.ReorgLock before counting, and a relabel started while it runs waits for its triggers:
// the relabel before it is counted by the backfill and the one after it moves the pairs, so the
// entity's internal figure ends right: the backfill missing the first relabel, the second would
// take back what was never added (acme -30 in -1 transfers). It fails without either lock.
func TestPairActivityMigrationWaitsForWriters(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "intel_migrate13", migrations.Schema, migrations.FS, 8)
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	exec := func(q pgx.Tx, sql string) {
		t.Helper()
		var err error
		if q == nil {
			_, err = pool.Exec(ctx, sql)
		} else {
			_, err = q.Exec(ctx, sql)
		}
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// A transfer of 30 USD from h1 to h2 in the journal; neither address attributed yet.
	exec(nil, `INSERT INTO intel.entities (id, name, type, source, version) VALUES ('acme', 'Acme', 'cex', 'test', 1), ('other', 'Other', 'cex', 'test', 1)`)
	exec(nil, `INSERT INTO intel.addresses (chain_type, address, label, confidence, source, version)
		VALUES ('evm', '0xh1', '', 1, 'test', 1), ('evm', '0xh2', '', 1, 'test', 1)`)
	exec(nil, `INSERT INTO intel.block_facts (chain, block_hash, chain_type, newest_ms, ids, ms, from_addr, to_addr, usd, orphaned)
		VALUES ('ethereum', '0xb1', 'evm', 1000, '{t1}', '{1000}', '{0xh1}', '{0xh2}', '{30}', false)`)

	begin := func() pgx.Tx {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		return tx
	}
	importTx := begin() // an import attributing both addresses to acme, uncommitted
	exec(importTx, `UPDATE intel.addresses SET entity_id = 'acme', version = 2`)
	batchTx := begin() // a transfer batch in flight
	exec(batchTx, fmt.Sprintf(`SELECT pg_advisory_xact_lock_shared(%d)`, int64(store.ReorgLock)))

	migrated := make(chan error, 1)
	go func() {
		_, err := p.UpTo(ctx, 13)
		migrated <- err
	}()
	notDone := func(what string) {
		t.Helper()
		select {
		case err := <-migrated:
			t.Fatalf("the migration ended %s: %v", what, err)
		default:
		}
	}
	if !waitInDB(t, pool, `l.locktype = 'relation' AND l.relation = 'intel.addresses'::regclass`) {
		t.Fatal("the migration did not wait for the import")
	}
	notDone("while the import was uncommitted")
	if err := importTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !waitInDB(t, pool, `l.locktype = 'advisory'`) {
		t.Fatal("the migration did not wait for the transfer batch")
	}
	notDone("while the batch held its lock")
	relabeled := make(chan error, 1)
	go func() { // a relabel moving h2 to other, started while the migration runs
		_, err := pool.Exec(ctx, `UPDATE intel.addresses SET entity_id = 'other', version = 3 WHERE address = '0xh2'`)
		relabeled <- err
	}()
	if !waitInDB(t, pool, `l.locktype = 'relation' AND l.relation = 'intel.addresses'::regclass`) {
		t.Fatal("the relabel did not wait for the migration")
	}
	if err := batchTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatal(err)
	}
	if err := <-relabeled; err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT entity_id || ' ' || volume_usd || ' ' || transfer_count FROM intel.entity_internal ORDER BY entity_id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "; ") != "acme 0 0" {
		t.Fatalf("internal figures after the migration and the relabels: %q, want acme 0 0", got)
	}
}

// waitInDB reports whether a lock matching cond (over pg_locks l) is awaited in pool's database
// within a minute.
func waitInDB(t *testing.T, pool *pgxpool.Pool, cond string) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var waiting bool
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks l
			WHERE NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND `+cond+`)`).
			Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
