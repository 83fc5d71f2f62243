package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// PassPruner is the part of the store the Pruner drives.
type PassPruner interface {
	PrunePass(ctx context.Context, retention time.Duration, pages int64) (store.PruneResult, error)
}

// Pruner deletes the observations no rule can read any more (store.PrunePass), one pass every
// Interval, until its context ends. Every replica may run one: passes are idempotent and take no
// lock a writer waits for.
type Pruner struct {
	Store PassPruner
	Log   *slog.Logger
	// Retention is how much chain time before each chain's newest block keeps every observation.
	Retention time.Duration
	// Pages is how many pages of observations one statement walks.
	Pages int64
	// Interval is the wait between passes (and after a pass that failed).
	Interval time.Duration
	// Pruned, if set, is told how many observations each pass deleted (the metric).
	Pruned func(ctx context.Context, n int64)
}

// Run prunes until ctx ends; the first pass runs at once.
func (p Pruner) Run(ctx context.Context) error {
	for {
		start := time.Now()
		res, err := p.Store.PrunePass(ctx, p.Retention, p.Pages)
		if ctx.Err() != nil {
			return nil
		}
		if p.Pruned != nil && res.Pruned > 0 {
			p.Pruned(ctx, res.Pruned)
		}
		if err != nil {
			p.Log.Warn("pruning observations failed; next pass later", "error", err, "pruned", res.Pruned, "retry_in", p.Interval)
		} else {
			p.Log.Info("pruned observations", "pruned", res.Pruned, "pages", res.Pages, "batches", res.Batches,
				"chains", len(res.Horizons), "took", time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.Interval):
		}
	}
}
