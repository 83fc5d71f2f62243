package store

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// TestRegistryWriterWaitsForRepublish: a registry change made while a republish holds its lock
// waits for it, so its record is enqueued after the republished copy of its entry (which would
// otherwise stay on the compacted topic as the entry's newest record).
func TestRegistryWriterWaitsForRepublish(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := New(pool)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, sqlRepublishLock); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "alpha", Name: "Alpha", Symbol: "ALP"}})
	}()
	waitUntilBlocked(t, pool, done, "the registry writer")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
