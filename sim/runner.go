package sim

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// Publisher is where a Runner sends events; *eventbus.Publisher satisfies it.
type Publisher interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// RunnerConfig paces a Runner. Zero values take the documented defaults.
type RunnerConfig struct {
	// Rate is simulated transactions per second of wall time (about 1.2 transfers each);
	// default 3.
	Rate float64
	// Tick is how often a batch is generated and published; default 1s.
	Tick time.Duration
	// BackfillTxs transactions are generated at start, spread from the world's clock to now,
	// before live generation starts (set Config.Start to now minus the history you want).
	BackfillTxs int
	// ChunkTxs is the most transactions generated per Publish call; default 2000.
	ChunkTxs int
	// OnBatch, when set, sees every batch after it was published.
	OnBatch func(*Batch)
	// NoMarketEvents leaves the registry and prices (market.tokens.v1, market.prices.v1) out of
	// what is published, for when token-analytics publishes them from a MarketFeed.
	NoMarketEvents bool
	// Resume, when set, is the state an earlier run saved (through Save) with a world of the
	// same seed and chains, built with Start = Resume.Timeline.Start. The runner regenerates
	// what that run published without publishing it, publishes again (identically) what it may
	// have been publishing when it stopped, and goes on from there at Rate: no transaction hash
	// is published twice with different content. BackfillTxs is then the earlier run's.
	Resume *State
	// Save, when set, records the runner's state before each publish, for a later Resume.
	Save func(context.Context, State) error
}

// Runner publishes a world's activity at a rate, with the wall clock as the world's clock.
type Runner struct {
	w   *World
	pub Publisher
	cfg RunnerConfig
	log *slog.Logger

	mu        sync.Mutex
	last      map[string]Activity
	published int64 // transfers published
}

// NewRunner returns a runner for w publishing to pub. The runner owns w from then on.
func NewRunner(w *World, pub Publisher, cfg RunnerConfig, log *slog.Logger) *Runner {
	if cfg.Rate <= 0 {
		cfg.Rate = 3
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.ChunkTxs <= 0 {
		cfg.ChunkTxs = 2000
	}
	if log == nil {
		log = slog.Default()
	}
	return &Runner{w: w, pub: pub, cfg: cfg, log: log, last: map[string]Activity{}}
}

// Run publishes the bootstrap batch, the backfill and then live activity until ctx ends. A
// failed publish is retried with backoff (consumers are idempotent), so nothing is skipped.
// Every transaction is placed by a Timeline (timeline.go); resumed, the runner first replays
// the earlier runs' transactions.
func (r *Runner) Run(ctx context.Context) error {
	st, err := r.start(time.Now().Round(0)) // wall time only: it is saved and compared

	if err != nil {
		return err
	}
	if err := r.publish(ctx, r.w.Bootstrap()); err != nil {
		return err
	}
	// What earlier runs published: regenerated, not published (their activities are kept).
	for pos := int64(0); pos < st.Published; {
		end := min(pos+int64(r.cfg.ChunkTxs), st.Published)
		r.record(r.w.NextAt(r.times(&st.Timeline, pos, end)))
		pos = end
	}
	if st.Published > 0 {
		r.log.Info("simulator resumed", "replayed_transactions", st.Published, "republishing", st.Reserved-st.Published, "world_start", st.Timeline.Start)
	}
	if err := r.catchUp(ctx, &st, st.Reserved); err != nil || ctx.Err() != nil {
		return err
	}
	t := time.NewTicker(r.cfg.Tick)
	defer t.Stop()
	for {
		if err := r.catchUp(ctx, &st, st.Timeline.Due(time.Now())); err != nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// start is the state Run starts from: a fresh timeline (the backfill up to now, then live at
// Rate), or the resumed one with a live stretch of this run from what the last run reserved.
func (r *Runner) start(now time.Time) (State, error) {
	if res := r.cfg.Resume; res != nil {
		st := *res
		st.Timeline.Live = append([]Stretch(nil), res.Timeline.Live...)
		if err := st.Timeline.check(); err != nil {
			return State{}, err
		}
		if !st.Timeline.Start.Equal(r.w.cfg.Start) {
			return State{}, fmt.Errorf("sim: resumed timeline starts at %s, the world at %s", st.Timeline.Start, r.w.cfg.Start)
		}
		if st.Published < 0 || st.Reserved < st.Published {
			return State{}, fmt.Errorf("sim: resumed state published %d of %d reserved", st.Published, st.Reserved)
		}
		st.Timeline.resume(max(st.Reserved, st.Timeline.Backfill), now, r.cfg.Rate)
		return st, nil
	}
	tl := Timeline{Start: r.w.cfg.Start, Anchor: now}
	if r.cfg.BackfillTxs > 0 && now.After(tl.Start) {
		tl.Backfill = int64(r.cfg.BackfillTxs)
	}
	tl.Live = []Stretch{{From: tl.Backfill, At: now, Rate: r.cfg.Rate}}
	return State{Timeline: tl}, nil
}

// catchUp publishes the transactions from st.Published up to due, a chunk at a time, saving
// the state (the chunk reserved) before each publish.
func (r *Runner) catchUp(ctx context.Context, st *State, due int64) error {
	for st.Published < due && ctx.Err() == nil {
		end := min(st.Published+int64(r.cfg.ChunkTxs), due)
		st.Reserved = max(st.Reserved, end)
		if r.cfg.Save != nil {
			if err := r.cfg.Save(ctx, *st); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("save the simulator's state: %w", err)
			}
		}
		if err := r.publish(ctx, r.w.NextAt(r.times(&st.Timeline, st.Published, end))); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil // not published: the next run publishes it again
		}
		if st.Published < st.Timeline.Backfill && end >= st.Timeline.Backfill {
			r.log.Info("simulator backfill published", "transactions", st.Timeline.Backfill, "from", st.Timeline.Start, "to", st.Timeline.Anchor)
		}
		st.Published = end
	}
	return nil
}

// times are the times of transactions from..end-1.
func (r *Runner) times(tl *Timeline, from, end int64) []time.Time {
	out := make([]time.Time, 0, end-from)
	for j := from; j < end; j++ {
		out = append(out, tl.At(j))
	}
	return out
}

func (r *Runner) publish(ctx context.Context, b *Batch) error {
	ev := b.Events()
	if r.cfg.NoMarketEvents {
		ev = slices.DeleteFunc(ev, func(e eventbus.Event) bool {
			return e.Topic == eventsv1.TopicMarketTokens || e.Topic == eventsv1.TopicPrices
		})
	}
	backoff := 100 * time.Millisecond
	for {
		err := r.pub.Publish(ctx, ev...)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		r.log.Warn("simulator publish failed; retrying", "events", len(ev), "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
	r.record(b)
	r.mu.Lock()
	r.published += int64(len(b.Transfers))
	r.mu.Unlock()
	if r.cfg.OnBatch != nil {
		r.cfg.OnBatch(b)
	}
	return nil
}

// record keeps the batch's activities for LastActivity.
func (r *Runner) record(b *Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range b.Activities {
		r.last[a.Kind+"/"+a.Entity] = a
	}
}

// LastActivity returns the newest published activity of a kind concerning an entity. It is
// safe to call while Run runs.
func (r *Runner) LastActivity(kind, entity string) (Activity, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.last[kind+"/"+entity]
	return a, ok
}

// Published is the number of transfers published so far.
func (r *Runner) Published() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.published
}

// String describes the runner's pace.
func (r *Runner) String() string {
	return fmt.Sprintf("simulator at %.1f tx/s, tick %s", r.cfg.Rate, r.cfg.Tick)
}
