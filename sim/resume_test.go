package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/sim"
	"google.golang.org/protobuf/proto"
)

// recorder keeps every transaction, transfer and swap published, by natural id, and stops its
// run (cancel) inside its stopAt-th publish: after the events were sent and before the runner
// learns it, as a process killed there would.
type recorder struct {
	t       *testing.T
	seen    map[string]proto.Message
	calls   int
	stopAt  int
	cancel  context.CancelFunc
	fresh   int // ids this run published first
	repeats int // ids this run published again
}

func (r *recorder) Publish(ctx context.Context, ev ...eventbus.Event) error {
	r.calls++
	for _, e := range ev {
		var id string
		switch m := e.Msg.(type) {
		case *eventsv1.Transaction:
			id = "tx " + m.Chain + " " + m.Hash
		case *eventsv1.Transfer:
			id = "transfer " + m.Chain + " " + m.Id
		case *eventsv1.Swap:
			id = "swap " + m.Chain + " " + m.Id
		default:
			continue
		}
		if old, ok := r.seen[id]; ok {
			if !proto.Equal(old, e.Msg) {
				r.t.Errorf("%s published again with other content:\n%v\nthen\n%v", id, old, e.Msg)
			}
			r.repeats++
			continue
		}
		r.seen[id] = e.Msg
		r.fresh++
	}
	if r.calls == r.stopAt {
		r.cancel()
		return errors.New("stopped")
	}
	return nil
}

// A runner stopped in the middle of a publish and started again from the state it saved, with
// a world built from the same seed and start, three times: no transaction, transfer or swap is
// published twice with different content, a run publishes again at most the chunk that was
// under way, and each run goes on with new transactions.
func TestRunnerResumesItsWorld(t *testing.T) {
	seen := map[string]proto.Message{}
	var saved *sim.State
	start := time.Now().Add(-6 * time.Hour).Truncate(time.Minute)
	for run := range 4 {
		cfg := sim.Config{Seed: 5, Start: start}
		if saved != nil {
			cfg.Start = saved.Timeline.Start
		}
		w, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		rec := &recorder{t: t, seen: seen, stopAt: 4 + run, cancel: cancel}
		r := sim.NewRunner(w, rec, sim.RunnerConfig{Rate: 500, Tick: 5 * time.Millisecond, BackfillTxs: 300, ChunkTxs: 100,
			Resume: saved, Save: func(_ context.Context, s sim.State) error {
				s.Timeline.Live = append([]sim.Stretch(nil), s.Timeline.Live...)
				saved = &s
				return nil
			}}, nil)
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		t.Logf("run %d: %d ids first published, %d again; state %+v", run, rec.fresh, rec.repeats, *saved)
		if rec.fresh == 0 {
			t.Fatalf("run %d published nothing new", run)
		}
		// The bootstrap has no ids; a resumed run publishes again only the chunk under way (100
		// transactions, with their transfers and swaps).
		if max := 100 * 4; run > 0 && (rec.repeats == 0 || rec.repeats > max) {
			t.Fatalf("run %d published %d ids again, more than the chunk under way", run, rec.repeats)
		}
		if saved.Reserved <= saved.Published {
			t.Fatalf("run %d stopped inside a publish but saved %d of %d reserved", run, saved.Published, saved.Reserved)
		}
	}
}

// A world's transactions depend on their times only, not on how they are split into calls.
func TestNextAtIsIndependentOfChunks(t *testing.T) {
	tl := sim.Timeline{Start: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), Backfill: 500,
		Anchor: time.Date(2025, 3, 1, 6, 0, 0, 0, time.UTC)}
	tl.Live = []sim.Stretch{{From: 500, At: tl.Anchor, Rate: 2}}
	times := make([]time.Time, 900)
	for j := range times {
		times[j] = tl.At(int64(j))
	}
	run := func(chunk int) map[string]proto.Message {
		w, err := sim.New(sim.Config{Seed: 3, Start: tl.Start})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]proto.Message{}
		for i := 0; i < len(times); i += chunk {
			b := w.NextAt(times[i:min(i+chunk, len(times))])
			for _, m := range b.Transactions {
				out["tx "+m.Hash] = m
			}
			for _, m := range b.Transfers {
				out["transfer "+m.Id] = m
			}
		}
		return out
	}
	a, b := run(900), run(7)
	if len(a) < 900 || len(a) != len(b) {
		t.Fatalf("%d and %d ids", len(a), len(b))
	}
	for id, m := range a {
		if !proto.Equal(m, b[id]) {
			t.Fatalf("%s differs by chunking:\n%v\n%v", id, m, b[id])
		}
	}
}
