package store

import (
	"context"
	"testing"
	"time"

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
	go func() { done <- st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "alpha", Name: "Alpha", Symbol: "ALP"}}) }()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("the registry writer finished while a republish held its lock (%v)", err)
		default:
		}
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
