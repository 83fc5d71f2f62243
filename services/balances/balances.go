// Package balances serves balances, history, portfolios, token balances and holders from exact balance observations.
package balances

import (
	"context"
	"log/slog"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/progress"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/config"
	"github.com/chainintel/chainintel/services/balances/internal/events"
	svchttp "github.com/chainintel/chainintel/services/balances/internal/http"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Name is the service name.
const Name = "balances"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from BALANCES_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics balances produces or consumes: `balances migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicAttributions, eventsv1.TopicBalances, eventsv1.TopicMarketTokens, eventsv1.TopicPrices, eventsv1.TopicReorgs}

// Migrate applies the balances schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	cs, err := chains.NewSet(cfg.Chains)
	if err != nil {
		return err
	}
	s, err := service.New(ctx, Name, cfg.Base, deps, service.WithKafka(cfg.Kafka))
	if err != nil {
		return err
	}
	defer s.Close() // what was built, when a step below fails before Run
	service.LogConfig(s.Log, cfg)
	pool, err := s.Postgres(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	st := store.New(pool)

	var labels app.UserLabels
	if cfg.UserLabelsURL != "" {
		c, err := ulclient.New(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return err
		}
		labels = c
	}

	deep, err := s.Tel.Meter().Int64Counter("balances.reorgs.past_retention",
		metric.WithDescription("reorgs that reached observations the pruner thinned (deeper than BALANCES_OBSERVATION_RETENTION, or consumed later than it): their fallback saw only the kept observations"))
	if err != nil {
		return err
	}
	// Each served chain's series exists from the start at 0, so an alert on any increase sees
	// the first reorg past the retention.
	for _, c := range cs.Chains() {
		deep.Add(ctx, 0, metric.WithAttributes(attribute.String("chain", c.Name)))
	}
	h := events.Handlers{W: st, Log: s.Log, DeepReorg: func(ctx context.Context, chain string) {
		deep.Add(ctx, 1, metric.WithAttributes(attribute.String("chain", chain)))
	}}
	batch := func(o *eventbus.ConsumerOptions) { o.MaxBatch = cfg.ConsumerBatch }
	service.Consume(s, eventsv1.TopicMarketTokens, func() *eventsv1.MarketToken { return new(eventsv1.MarketToken) }, h.Tokens)
	service.Consume(s, eventsv1.TopicPrices, func() *eventsv1.Price { return new(eventsv1.Price) }, h.Prices, batch)
	service.Consume(s, eventsv1.TopicAttributions, func() *eventsv1.Attribution { return new(eventsv1.Attribution) }, h.Attributions, batch)
	service.Consume(s, eventsv1.TopicBalances, func() *eventsv1.BalanceObservation { return new(eventsv1.BalanceObservation) }, h.Balances, batch)
	service.Consume(s, eventsv1.TopicReorgs, func() *eventsv1.Reorg { return new(eventsv1.Reorg) }, h.Reorgs)
	// The backlog as a job: remaining is the observations past the mark, the ETA the time to
	// apply them at the current rate (progress_eta_seconds{task="balances.apply"}).
	// The gauge is recorded at each count (every 10s), so a scrape runs no query: a count can
	// read the whole backlog, and the exporter's collection waits for its callbacks.
	backlog, err := s.Tel.Meter().Int64Gauge("balances.observations.backlog",
		metric.WithDescription("observations appended and not applied to balances yet (counted every 10s)"))
	if err != nil {
		return err
	}
	job := &events.BacklogJob{Backlog: st.Backlog, Log: s.Log,
		Progress: progress.New(progress.Options{Job: "balances.apply", Unit: "observations", Log: s.Log, Meter: s.Tel.Meter()}),
		Counted:  func(ctx context.Context, n int64) { backlog.Record(ctx, n) }}
	ap := events.Applier{Store: st, Log: s.Log, Batch: cfg.ApplyBatch, Idle: cfg.ApplyIdle, Retry: time.Second, Applied: job.Applied}
	s.Add(lifecycle.Part{Name: "observations applier", Run: ap.Run})
	s.Add(lifecycle.Part{Name: "applier progress", Run: job.Run})
	if cfg.ObservationRetention > 0 {
		pruned, err := s.Tel.Meter().Int64Counter("balances.observations.pruned",
			metric.WithDescription("observations the pruner deleted (applied, before the retention horizon, read by no rule)"))
		if err != nil {
			return err
		}
		pruned.Add(ctx, 0) // exported before the first pass deletes anything
		pr := events.Pruner{Store: st, Log: s.Log, Retention: cfg.ObservationRetention, Pages: cfg.PrunePages, Interval: cfg.PruneInterval,
			Jitter: cfg.PruneInterval / 10, Pruned: func(ctx context.Context, n int64) { pruned.Add(ctx, n) }}
		s.Add(lifecycle.Part{Name: "observations pruner", Run: pr.Run})
	}

	e := s.Engine()
	svchttp.Register(e, app.New(st, labels, cs))
	return s.Run(ctx, e)
}
