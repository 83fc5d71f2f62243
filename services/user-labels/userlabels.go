// Package userlabels keeps each caller's private labels, custom entities and alert rules: the
// user-labels service. They belong to the caller's user (not the key, not the org); every change
// is published on user.changes.v1 through an outbox so other services' caches drop it (and the
// alerts' deliverer reloads the alert).
package userlabels

import (
	"context"
	"log/slog"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/chainintel/chainintel/services/user-labels/internal/config"
	"github.com/chainintel/chainintel/services/user-labels/internal/events"
	svchttp "github.com/chainintel/chainintel/services/user-labels/internal/http"
	"github.com/chainintel/chainintel/services/user-labels/internal/store"
	"github.com/chainintel/chainintel/services/user-labels/migrations"
)

// Name is the service name.
const Name = "user-labels"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from USERLABELS_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics user-labels produces or consumes: `user-labels migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicUserChanges}

// Migrate applies the userdata schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	set, err := chains.NewSet(cfg.Chains)
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
	pub := s.Publisher()
	var relay *outbox.Relay
	st := store.New(pool, store.OnOutbox(func() { relay.Kick() }))
	relay = events.NewRelay(st, pub, outbox.Options{
		PollInterval: cfg.OutboxPollInterval, Retention: cfg.OutboxRetention, Logger: s.Log, Meter: s.Tel.Meter(),
	})
	s.Add(relay.Part())

	svc := app.New(st, app.NewChainTypes(set), app.WithLabelCache(cfg.LabelCacheBytes), app.WithLookupCache(cfg.LookupCacheBytes),
		app.WithOwnerLimits(cfg.MaxLabelsPerUser, cfg.MaxEntitiesPerUser),
		app.WithAlerts(app.AlertOptions{MaxPerUser: cfg.MaxAlerts, AllowHTTP: cfg.AlertWebhookAllowHTTP, Chains: set}))
	e := httpx.NewEngine(httpx.EngineOptions{
		Service: Name, Logger: s.Log, TracerProvider: s.Tel.TracerProvider, MeterProvider: s.Tel.MeterProvider,
		MaxBodyBytes: svchttp.MaxInternalBodyBytes,
	})
	e.Use(httpx.IdentityMiddleware(s.Signer))
	svchttp.Register(e, svc)
	return s.Run(ctx, e)
}
