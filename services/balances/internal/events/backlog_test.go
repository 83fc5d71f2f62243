package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/chainintel/chainintel/libs/progress"
	"github.com/chainintel/chainintel/services/balances/internal/events"
)

// The job's remaining is the counted backlog and its done the observations the applier took;
// a failed count leaves the job as it was; an empty backlog is done (ETA 0).
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
	type got struct{ done, total, remaining int64 }
	var steps []got
	for _, applied := range []int{0, 200, 100, 300} {
		job.Applied(applied)
		s, err := job.Tick(ctx)
		if err != nil {
			steps = append(steps, got{-1, -1, -1})
			continue
		}
		steps = append(steps, got{s.Done, s.Total, s.Remaining})
		if s.Remaining == 0 && s.ETA != 0 {
			t.Errorf("empty backlog: ETA %v, want 0", s.ETA)
		}
	}
	want := []got{{0, 500, 500}, {200, 500, 300}, {-1, -1, -1}, {600, 600, 0}}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("tick %d: (done, total, remaining) = %v, want %v", i, steps[i], want[i])
		}
	}
}
