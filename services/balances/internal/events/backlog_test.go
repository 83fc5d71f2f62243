package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/chainintel/chainintel/libs/progress"
	"github.com/chainintel/chainintel/services/balances/internal/events"
)

// The job's remaining is the counted backlog and its done the observations the applier took;
// a failed count leaves the job (and the gauge) as it was; an empty backlog is done (ETA 0).
func TestBacklogJobRemainingIsTheBacklog(t *testing.T) {
	backlog := []int64{500, 300, -1, 0}
	job := &events.BacklogJob{
		Backlog: func(context.Context) (int64, error) {
			n := backlog[0]
			backlog = backlog[1:]
			if n < 0 {
				return 0, errors.New("connection lost")
			}
			return n, nil
		},
		Progress: progress.New(progress.Options{Job: "balances.apply", Unit: "observations", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}),
	}
	ctx := context.Background()
	last := int64(-1) // the newest count the gauge was given
	job.Counted = func(_ context.Context, n int64) { last = n }
	type got struct{ done, total, remaining, last int64 }
	var steps []got
	for _, applied := range []int{0, 200, 100, 300} {
		job.Applied(applied)
		s, err := job.Tick(ctx)
		if err != nil {
			steps = append(steps, got{-1, -1, -1, last})
			continue
		}
		steps = append(steps, got{s.Done, s.Total, s.Remaining, last})
		if s.Remaining == 0 && s.ETA != 0 {
			t.Errorf("empty backlog: ETA %v, want 0", s.ETA)
		}
	}
	want := []got{{0, 500, 500, 500}, {200, 500, 300, 300}, {-1, -1, -1, 300}, {600, 600, 0, 0}}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("tick %d: (done, total, remaining, last) = %v, want %v", i, steps[i], want[i])
		}
	}
}

// rounds answers the applier's rounds in turn, then ends the test's context.
type rounds struct {
	taken  []int
	errs   []error
	cancel context.CancelFunc
}

func (r *rounds) ApplyPending(ctx context.Context, limit int) (int, int, error) {
	if len(r.taken) == 0 {
		r.cancel()
		return 0, 0, ctx.Err()
	}
	n, err := r.taken[0], r.errs[0]
	r.taken, r.errs = r.taken[1:], r.errs[1:]
	return n, n, err
}

// The applier tells the job what each round took; a failed round took nothing (its
// observations stay past the mark).
func TestApplierReportsRoundsTaken(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &rounds{taken: []int{4, 2, 4, 0}, errs: []error{nil, nil, errors.New("deadlock"), nil}, cancel: cancel}
	var got []int
	a := events.Applier{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Batch: 4, Applied: func(n int) { got = append(got, n) }}
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[4 2 0]" {
		t.Errorf("rounds reported %v, want [4 2 0]", got)
	}
}
