package events

import (
	"context"
	"log/slog"
	"time"
)

// LogApplier is the part of the store the Applier drives.
type LogApplier interface {
	ApplyLog(ctx context.Context, limit int) (taken, fresh int, err error)
}

// Applier folds the observation log into current balances, snapshots and entity rows
// (store.ApplyLog) until its context ends. Every replica may run one: the writers' lock makes
// them take turns, and a round that fails leaves its rows in the log for the next.
type Applier struct {
	Store LogApplier
	Log   *slog.Logger
	// Batch is the most observations applied in one transaction.
	Batch int
	// Idle is the wait after a round that found the log empty.
	Idle time.Duration
	// Retry is the wait after a round that failed (its rows stay in the log).
	Retry time.Duration
}

// Run applies the log until ctx ends.
func (a Applier) Run(ctx context.Context) error {
	for {
		taken, _, err := a.Store.ApplyLog(ctx, a.Batch)
		if ctx.Err() != nil {
			return nil
		}
		wait := a.Idle
		switch {
		case err != nil:
			a.Log.Warn("applying the observation log failed; retrying", "error", err, "retry_in", a.Retry)
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
