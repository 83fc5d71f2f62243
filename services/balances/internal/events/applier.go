package events

import (
	"context"
	"log/slog"
	"time"
)

// PendingApplier is the part of the store the Applier drives.
type PendingApplier interface {
	ApplyPending(ctx context.Context, limit int) (taken, fresh int, err error)
}

// Applier folds the appended observations into current balances, snapshots and entity rows
// (store.ApplyPending) until its context ends. Every replica may run one: the writers' lock makes
// them take turns, and a round that fails leaves its observations past the mark for the next.
type Applier struct {
	Store PendingApplier
	Log   *slog.Logger
	// Batch is the most observations applied in one transaction.
	Batch int
	// Idle is the wait after a round that found nothing appended.
	Idle time.Duration
	// Retry is the wait after a round that failed (its observations stay past the mark).
	Retry time.Duration
	// Applied, if set, is told how many observations each round took (the progress job).
	Applied func(n int)
}

// Run applies appended observations until ctx ends.
func (a Applier) Run(ctx context.Context) error {
	for {
		taken, _, err := a.Store.ApplyPending(ctx, a.Batch)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && a.Applied != nil {
			a.Applied(taken)
		}
		wait := a.Idle
		switch {
		case err != nil:
			a.Log.Warn("applying observations failed; retrying", "error", err, "retry_in", a.Retry)
			wait = a.Retry
		case taken == a.Batch:
			continue // more is waiting
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
