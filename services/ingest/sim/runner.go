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
func (r *Runner) Run(ctx context.Context) error {
	if err := r.publish(ctx, r.w.Bootstrap()); err != nil {
		return err
	}
	now := time.Now()
	if n := r.cfg.BackfillTxs; n > 0 && now.After(r.w.Now()) {
		start := r.w.Now()
		span := now.Sub(start)
		for done := 0; done < n; {
			k := min(r.cfg.ChunkTxs, n-done)
			until := start.Add(time.Duration(float64(span) * float64(done+k) / float64(n)))
			if err := r.publish(ctx, r.w.NextUntil(until, k)); err != nil {
				return err
			}
			done += k
		}
		r.log.Info("simulator backfill published", "transactions", n, "from", start, "to", now)
	}
	t := time.NewTicker(r.cfg.Tick)
	defer t.Stop()
	owed := 0.0
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			owed += now.Sub(last).Seconds() * r.cfg.Rate
			last = now
			n := int(owed)
			owed -= float64(n)
			for n > 0 {
				k := min(n, r.cfg.ChunkTxs)
				n -= k
				until := now
				if n > 0 {
					until = r.w.Now().Add(now.Sub(r.w.Now()) * time.Duration(k) / time.Duration(k+n))
				}
				if err := r.publish(ctx, r.w.NextUntil(until, k)); err != nil {
					return err
				}
			}
		}
	}
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
	r.mu.Lock()
	for _, a := range b.Activities {
		r.last[a.Kind+"/"+a.Entity] = a
	}
	r.published += int64(len(b.Transfers))
	r.mu.Unlock()
	if r.cfg.OnBatch != nil {
		r.cfg.OnBatch(b)
	}
	return nil
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
