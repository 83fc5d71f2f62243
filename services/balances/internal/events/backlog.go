package events

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/progress"
)

// BacklogJob reports the applier's backlog as a progress job (balances.apply): done is the
// observations this replica's applier took, remaining the observations past the mark (every
// replica's backlog, counted once per interval rather than per round, which would cost the
// applier a count of up to its whole backlog each round), the rate this replica's applies per
// second and the ETA the backlog at that rate.
type BacklogJob struct {
	// Backlog counts the observations past the applier's mark (store.Backlog).
	Backlog  func(ctx context.Context) (int64, error)
	Progress *progress.Reporter
	// Interval between counts (and log lines); default 10s.
	Interval time.Duration
	Log      *slog.Logger
	// Counted, if set, is told each count of the backlog (the backlog gauge, recorded here so a
	// scrape runs no query).
	Counted func(ctx context.Context, backlog int64)

	applied atomic.Int64
}

// Applied counts n more observations taken by the applier (Applier.Applied).
func (j *BacklogJob) Applied(n int) { j.applied.Add(int64(n)) }

// Tick counts the backlog and updates the job: done the observations applied so far, total done
// plus the backlog. A failed count leaves the job as it was (the next tick counts again).
func (j *BacklogJob) Tick(ctx context.Context) (progress.Snapshot, error) {
	backlog, err := j.Backlog(ctx)
	if err != nil {
		return progress.Snapshot{}, err
	}
	if j.Counted != nil {
		j.Counted(ctx, backlog)
	}
	done := j.applied.Load()
	j.Progress.Set(done)
	j.Progress.SetTotal(done + backlog)
	return j.Progress.Tick(ctx), nil
}

// Run ticks at once (so the backlog gauge has a count from the start) and then every Interval
// until ctx ends.
func (j *BacklogJob) Run(ctx context.Context) error {
	every := j.Interval
	if every <= 0 {
		every = 10 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := j.Tick(ctx); err != nil && ctx.Err() == nil && j.Log != nil {
			j.Log.DebugContext(ctx, "counting the applier's backlog failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
