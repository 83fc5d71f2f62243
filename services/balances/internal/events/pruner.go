package events

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// PassPruner is the part of the store the Pruner drives.
type PassPruner interface {
	PrunePass(ctx context.Context, retention time.Duration, pages int64) (store.PruneResult, error)
}

// Pruner deletes the observations no rule can read any more (store.PrunePass), one pass every
// Interval, until its context ends. Every replica runs one: one pass runs at a time in the
// database (the others skip theirs), and passes take no lock a writer waits for.
type Pruner struct {
	Store PassPruner
	Log   *slog.Logger
	// Retention is how much chain time before each chain's newest block keeps every observation.
	Retention time.Duration
	// Pages is how many pages of observations one statement walks.
	Pages int64
	// Interval is the wait between passes (and after a pass that failed or was skipped).
	Interval time.Duration
	// Jitter, if set, delays the first pass and lengthens each wait by a random part of it, so
	// replicas started together do not all try their passes at the same moment.
	Jitter time.Duration
	// Pruned, if set, is told how many observations each pass deleted (the metric).
	Pruned func(ctx context.Context, n int64)
}

// Run prunes until ctx ends; the first pass runs at once, or within Jitter.
func (p Pruner) Run(ctx context.Context) error {
	if !p.wait(ctx, 0) {
		return nil
	}
	for {
		start := time.Now()
		res, err := p.Store.PrunePass(ctx, p.Retention, p.Pages)
		if ctx.Err() != nil {
			return nil
		}
		if p.Pruned != nil && res.Pruned > 0 {
			p.Pruned(ctx, res.Pruned)
		}
		switch {
		case res.Skipped:
			p.Log.Debug("pruning pass skipped: another replica's pass is running", "retry_in", p.Interval)
		case err != nil:
			p.Log.Warn("pruning observations failed; next pass later", "error", err, "pruned", res.Pruned,
				"failed_ranges", res.Failed, "batches", res.Batches, "retry_in", p.Interval)
		default:
			p.Log.Info("pruned observations", "pruned", res.Pruned, "pages", res.Pages, "batches", res.Batches,
				"chains", len(res.Horizons), "took", time.Since(start).Round(time.Millisecond))
		}
		if !p.wait(ctx, p.Interval) {
			return nil
		}
	}
}

// wait waits d and a random part of Jitter; false when ctx ended first.
func (p Pruner) wait(ctx context.Context, d time.Duration) bool {
	if p.Jitter > 0 {
		d += rand.N(p.Jitter)
	}
	return lifecycle.Sleep(ctx, d)
}
