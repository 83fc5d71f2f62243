package store_test

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// A change of an address's entity waits for the transfer batches holding store.ReorgLock shared
// (the migration's trigger names the same key), so the pairs it moves between entities include
// those a batch counted with the old attribution; an update moving no address does not wait.
func TestEntityMoveWaitsForTransferBatches(t *testing.T) {
	ctx := context.Background()
	reset(t)
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `INSERT INTO intel.entities (id, name, type, source, version) VALUES ('acme', 'Acme', 'cex', 'test', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.addresses (chain_type, address, label, confidence, source, version)
		VALUES ('evm', '0x01', '', 1, 'test', 1)`); err != nil {
		t.Fatal(err)
	}
	batch, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = batch.Rollback(ctx) }()
	if _, err := batch.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, int64(store.ReorgLock)); err != nil {
		t.Fatal(err)
	}
	// A hang here would be the re-versioning waiting: the timeout turns it into a failure.
	reversion, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reversion.Rollback(ctx) }()
	if _, err := reversion.Exec(ctx, `SET LOCAL lock_timeout = '30s'`); err != nil {
		t.Fatal(err)
	}
	if _, err := reversion.Exec(ctx, `UPDATE intel.addresses SET version = 2`); err != nil {
		t.Fatalf("an update moving no address: %v", err)
	}
	if err := reversion.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, `UPDATE intel.addresses SET entity_id = 'acme', version = 3`)
		done <- err
	}()
	if !waitForLockWait(t, waitsForAdvisoryLock) {
		t.Fatal("the move did not wait for the batch's lock")
	}
	select {
	case err := <-done:
		t.Fatalf("the move ended while the batch held its lock: %v", err)
	default:
	}
	if err := batch.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
