// Package transfers serves transfers, swaps, transactions, histograms, counterparties and flow from its own read model of chain data.
package transfers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/config"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Name is the service name.
const Name = "transfers"

// GCPercent is the service's GOGC unless the environment sets one (service.TuneRuntime). Its
// heap is mostly the attribution cache; collecting it four times less often than Go's default
// keeps the collector's work out of page turns' tail (docs/transfers.md). The pod's memory
// limit still bounds the heap (GOMEMLIMIT at 90% of it).
const GCPercent = 400

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from TRANSFERS_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics transfers produces or consumes: `transfers migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicSwaps, eventsv1.TopicReorgs, eventsv1.TopicAttributions, eventsv1.TopicUserChanges}

// Migrate applies the transfers schema's migrations, then builds the rollups of attribution
// groups that are above TRANSFERS_GROUP_ROLLUPS_ABOVE and have none yet (nothing to do normally),
// and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: Name + "-migrate"})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.New(pool, cfg.StoreOptions()).Reconcile(ctx); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	s, err := service.New(ctx, Name, cfg.Base, deps, service.WithKafka(cfg.Kafka))
	if err != nil {
		return err
	}
	defer s.Close() // what was built, when a step below fails before Run
	service.LogConfig(s.Log, cfg)
	cs, err := chains.NewSet(cfg.Chains)
	if err != nil {
		return err
	}
	pool, err := s.Postgres(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	st := store.New(pool, cfg.StoreOptions())
	// Inline, the worker only finds rows a write queued but failed to apply after it committed
	// (its retry is a redelivery, which queues nothing).
	s.Add(lifecycle.Part{Name: "rollup worker", Run: func(ctx context.Context) error {
		return st.RunRollups(ctx, cfg.RollupPoll, s.Log, s.Tel.Meter())
	}})

	var labels app.UserLabels
	if cfg.UserLabelsURL != "" {
		c, err := ulclient.New(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return err
		}
		cache := app.NewLabelCache(c, cfg.UserLabelsCacheTTL, 200000)
		labels = cache
		// Every replica holds its own cache, so every replica reads every change, from the end
		// (an empty cache has nothing older to forget): a broadcast consumer, with no group
		// left behind on the broker when the replica goes.
		service.Consume(s, eventsv1.TopicUserChanges, func() *eventsv1.UserChange { return new(eventsv1.UserChange) },
			events.UserChanges(cache), func(o *eventbus.ConsumerOptions) { o.Broadcast = true })
	}

	h := events.Handlers{W: st, Log: s.Log}
	batch := func(o *eventbus.ConsumerOptions) { o.MaxBatch = cfg.ConsumerBatch }
	service.Consume(s, eventsv1.TopicTransactions, func() *eventsv1.Transaction { return new(eventsv1.Transaction) }, h.Transactions, batch)
	service.Consume(s, eventsv1.TopicTransfers, func() *eventsv1.Transfer { return new(eventsv1.Transfer) }, h.Transfers, batch)
	service.Consume(s, eventsv1.TopicSwaps, func() *eventsv1.Swap { return new(eventsv1.Swap) }, h.Swaps, batch)
	service.Consume(s, eventsv1.TopicReorgs, func() *eventsv1.Reorg { return new(eventsv1.Reorg) }, h.Reorgs)
	service.Consume(s, eventsv1.TopicAttributions, func() *eventsv1.Attribution { return new(eventsv1.Attribution) }, h.Attributions, batch)

	var opts []app.Option
	if cfg.IntelligenceURL != "" {
		ic, err := intelclient.New(cfg.IntelligenceURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("TRANSFERS_INTELLIGENCE_URL: %w", err)
		}
		opts = append(opts, app.WithTags(ic), app.WithEntities(ic, app.EntityOptions{Log: s.Log, Meter: s.Tel.Meter()}))
	}
	if cfg.TokenAnalyticsURL != "" {
		tc, err := taclient.New(cfg.TokenAnalyticsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("TRANSFERS_TOKEN_ANALYTICS_URL: %w", err)
		}
		opts = append(opts, app.WithTokens(tc, app.TokenOptions{Log: s.Log, Meter: s.Tel.Meter()}))
	}
	e := s.Engine()
	svchttp.Register(e, app.New(st, labels, cs, opts...), query.Parser{Chains: cs})
	return s.Run(ctx, e)
}
