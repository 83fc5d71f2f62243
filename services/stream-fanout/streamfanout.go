// Package streamfanout streams matching transfers to WebSocket subscribers, with sessions and replay buffers in Redis.
package streamfanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/alerts"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/config"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	svchttp "github.com/chainintel/chainintel/services/stream-fanout/internal/http"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/orphans"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// Name is the service name.
const Name = "stream-fanout"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from STREAM_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics stream-fanout produces or consumes: `stream-fanout migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicTransfers, eventsv1.TopicAttributions, eventsv1.TopicReorgs, eventsv1.TopicUsageCalls, eventsv1.TopicUserChanges}

// Migrate creates the missing Topics. stream-fanout owns no PostgreSQL schema: it keeps its
// state (sessions, replay buffers, quotas) in Redis.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s, err := service.New(ctx, Name, cfg.Base, deps, service.WithKafka(cfg.Kafka))
	if err != nil {
		return err
	}
	defer s.Close() // what was built, when a step below fails before Run
	service.LogConfig(s.Log, cfg)
	rdb, err := s.Redis(ctx, cfg.Redis)
	if err != nil {
		return err
	}
	served, _ := chains.NewSet(cfg.Chains)
	quotas, creditLimit := tierLimits(cfg)
	labels, tokens, err := newClients(s, cfg)
	if err != nil {
		return err
	}
	meter, metrics, err := newMeters(s, cfg)
	if err != nil {
		return err
	}
	eng, orphaned, err := newEngine(s, cfg)
	if err != nil {
		return err
	}
	topic := kafkaTopics(s, cfg.Kafka, metrics)
	transfers := topic(eventsv1.TopicTransfers)
	hub := ws.NewHub(ws.Options{
		Engine: eng, Store: store.New(rdb, cfg.RedisPrefix, nil, store.ReplayLimits(cfg.ReplayMaxBytes, cfg.ReplayMaxBytesPerKey)), Transfers: transfers, Orphans: orphaned, Labels: labels, Tokens: tokens, Meter: meter, Metrics: metrics,
		Served: served, Quotas: quotas, Window: cfg.Window, V2Window: cfg.V2Window, QueueSize: cfg.QueueSize,
		QueuePerFilter: cfg.QueuePerFilter, QueueMax: cfg.QueueMax, SendBuffer: cfg.SendBuffer,
		PingInterval: cfg.PingInterval, WriteTimeout: cfg.WriteTimeout, Writers: cfg.Writers, MaxConnsPerKey: cfg.MaxConnsPerKey,
		MaxFilters: cfg.MaxFilters, MaxSessionsPerKey: cfg.MaxSessionsPerKey, MaxSessionFilterBytes: cfg.MaxSessionFilterBytes,
		MessageRate: cfg.MessageRate, MessageBurst: cfg.MessageBurst,
		CreditLimit: creditLimit, Checkpoint: cfg.Checkpoint, OffsetsTTL: cfg.OffsetsTTL, CatchUpParallel: cfg.CatchUpParallel, MaxCatchUp: cfg.MaxCatchUp, Log: s.Log, Now: deps.Clock,
	})
	var loaded atomic.Bool
	// One check for both: the pipeline reads the attributions and the reorgs before it starts.
	s.Ready.AddCheck("attribution read model", func(context.Context) error {
		if !loaded.Load() {
			return errors.New("loading")
		}
		return nil
	})
	ready, readyOnce := make(chan struct{}), sync.Once{}
	p := &ws.Pipeline{Engine: eng, Hub: hub, Transfers: transfers, Log: s.Log,
		Ready:        func() { loaded.Store(true); readyOnce.Do(func() { close(ready) }) },
		Attributions: topic(eventsv1.TopicAttributions), Reorgs: topic(eventsv1.TopicReorgs), Orphans: orphaned}
	s.Add(lifecycle.Part{Name: "fanout", Run: p.Run, Stop: p.Stop})
	deliverer, err := startAlerts(s, cfg, alerts.Options{Labels: labels, Engine: eng, Orphans: orphaned, Meter: meter, Served: served, Ready: ready,
		Quota: store.NewAlertQuota(rdb, cfg.RedisPrefix, cfg.AlertMaxPerHour, cfg.AlertMaxPerMonth),
		Sent:  store.NewAlertSent(rdb, cfg.RedisPrefix, cfg.AlertSentKeep), TierQuota: quotas, CreditsSpent: hub.CreditsSpent,
		Suspensions: store.NewAlertSuspensions(rdb, cfg.RedisPrefix)})
	if err != nil {
		return err
	}
	s.Add(lifecycle.Part{Name: "user changes", Run: func(ctx context.Context) error {
		return followUserChanges(ctx, topic(eventsv1.TopicUserChanges), hub, deliverer, s.Log)
	}})

	channel := cfg.KeyInvalidateChannel
	if channel == "" {
		channel = keyevents.DefaultChannel
	}
	s.Add(lifecycle.Part{Name: "key invalidations", Run: func(ctx context.Context) error {
		return followKeyInvalidations(ctx, rdb, channel, hub, s.Log)
	}})

	e := s.Engine()
	svchttp.Register(e, hub)
	return s.Run(ctx, e)
}

// tierLimits are the stream quotas and the credit limit of a tier, from the tier table (the
// default quota for a tier it does not name). Validate read the table already.
func tierLimits(cfg Config) (quotas func(tier string) store.Limits, creditLimit func(tier string) (int64, bool)) {
	table, def, _ := cfg.Tiers()
	quotas = func(tier string) store.Limits {
		t, ok := table.Get(tier)
		if !ok {
			return store.Limits{Hourly: def.Hourly, Monthly: def.Monthly}
		}
		return store.Limits{Hourly: t.StreamHourly, Monthly: t.StreamMonthly}
	}
	creditLimit = func(tier string) (int64, bool) {
		t, ok := table.Get(tier)
		if !ok {
			return 0, false
		}
		return t.CreditLimit()
	}
	return quotas, creditLimit
}

// startAlerts runs, when the configuration turns them on, the alerts' webhook delivery
// (internal/alerts) as two parts of s: the alerts read from user-labels and kept current, and,
// once they are loaded, the consumer group handing this replica its share of
// chain.transfers.v1 to match against them. nil when off.
func startAlerts(s *service.Service, cfg Config, o alerts.Options) (*alerts.Deliverer, error) {
	if !cfg.AlertsOn() {
		return nil, nil
	}
	src, err := ulclient.New(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
	if err != nil {
		return nil, fmt.Errorf("STREAM_USER_LABELS_URL: %w", err)
	}
	o.Source, o.Reload, o.RetryWindow, o.AllowPrivate = src, cfg.AlertsReload, cfg.AlertRetryWindow, cfg.AlertWebhookAllowPrivate
	o.Cooldown = cfg.AlertWebhookCooldown
	o.Metrics, o.Log = s.Tel.Meter(), s.Log
	d, err := alerts.New(o)
	if err != nil {
		return nil, err
	}
	k, dlq := s.KafkaSecurity(), s.Publisher()
	// Built once the alerts are loaded, but counted by /status from now.
	setConsumer := s.LateConsumer()
	// Added before the alerts' part, so it is stopped after it: a batch whose deliveries the
	// stop interrupts is left uncommitted.
	s.Add(lifecycle.Part{Name: "alerts consumer", Run: func(ctx context.Context) error {
		select {
		case <-d.Loaded():
		case <-ctx.Done():
			return nil
		}
		co := eventbus.ConsumerOptions{Brokers: cfg.Kafka.Brokers, Security: k, Group: cfg.AlertsGroup, Topic: eventsv1.TopicTransfers,
			StartAtEnd: !cfg.AlertsFromStart, Logger: s.Log, TracerProvider: s.Tel.TracerProvider, MeterProvider: s.Tel.MeterProvider,
			Propagator: s.Tel.Propagator, DLQ: dlq}
		d.Consumer(&co)
		c := eventbus.NewConsumer(co, func() *eventsv1.Transfer { return &eventsv1.Transfer{} }, d.Handle)
		setConsumer(c)
		return c.Run(ctx)
	}})
	s.Add(lifecycle.Part{Name: "alerts", Run: d.Run})
	return d, nil
}

// newEngine returns the matching engine and the orphaned blocks it skips the transfers of,
// whose count of decisions made without the reorg topic read to its end is exported.
func newEngine(s *service.Service, cfg Config) (*engine.Engine, *orphans.Set, error) {
	// The marks' ages are compared with the broker's timestamps: the real clock, not deps.Clock.
	orphaned := orphans.New(orphanKeep(cfg), nil)
	if err := ws.ObserveOrphansUnsettled(s.Tel.Meter(), orphaned.Unsettled); err != nil {
		return nil, nil, err
	}
	return engine.New(engine.Options{Naive: cfg.NaiveMatcher, Orphaned: orphaned.SkipRecord, Copies: cfg.CopyWindow}), orphaned, nil
}

// lateMargin is how long past the longest session window a block's orphan mark is kept: a
// resume reads back nothing older than that window (and a checkpoint), and ingest publishing a
// transfer of an orphaned block late refreshes the mark when this replica skips it.
const lateMargin = time.Hour

// orphanKeep is how long a block's orphan mark is kept after its reorg.
func orphanKeep(cfg Config) time.Duration {
	return max(cfg.Window, cfg.V2Window) + cfg.Checkpoint + lateMargin
}

// newClients returns the clients of the other services a filter is resolved and checked with:
// user-labels (callers' labels and user entities) and token-analytics' registry (pricing ids);
// nil for one whose URL is empty.
func newClients(s *service.Service, cfg Config) (ws.Labels, *ws.TokenCheck, error) {
	var labels ws.Labels
	if cfg.UserLabelsURL != "" {
		c, err := ws.NewLabelsClient(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return nil, nil, err
		}
		labels = c
	}
	var tokens *ws.TokenCheck
	if cfg.TokenAnalyticsURL != "" {
		tc, err := taclient.New(cfg.TokenAnalyticsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return nil, nil, fmt.Errorf("STREAM_TOKEN_ANALYTICS_URL: %w", err)
		}
		tokens = ws.NewTokenCheck(tc, ws.TokenCheckOptions{Log: s.Log})
	}
	return labels, tokens, nil
}

// newMeters returns the usage meter, run as a part of s, and the stream's metrics, the meter's
// pending batch among them.
func newMeters(s *service.Service, cfg Config) (*ws.Meter, *ws.Metrics, error) {
	meter := ws.NewMeter(s.Publisher(), time.Second, s.Log)
	s.Add(lifecycle.Part{Name: "usage meter", Run: meter.Run})
	metrics, err := ws.NewMetrics(s.Tel.Meter())
	if err != nil {
		return nil, nil, err
	}
	if err := meter.Instrument(s.Tel.Meter()); err != nil {
		return nil, nil, err
	}
	return meter, metrics, nil
}

// followKeyInvalidations closes the connections of the keys the edge invalidates (a revoke or a
// tier change) on its channel. The subscription reconnects by itself; each time it is
// established the edge's record of recent invalidations is read, so one published while it was
// away still closes what it must (see docs/stream-fanout.md). A read that fails is retried,
// backing off, until it succeeds or the subscription is established again (which reads anew).
func followKeyInvalidations(ctx context.Context, rdb redis.UniversalClient, channel string, hub *ws.Hub, log *slog.Logger) error {
	var retrying sync.WaitGroup
	stop := func() {}
	defer func() { stop(); retrying.Wait() }()
	// resync runs on FollowResync's goroutine, one call at a time.
	resync := func(ctx context.Context) {
		stop()
		rctx, cancel := context.WithCancel(ctx)
		stop = cancel
		if readMissedKeys(rctx, rdb, channel, hub, log) {
			return
		}
		retrying.Add(1)
		go func() {
			defer retrying.Done()
			for wait := missedRetryMin; ; wait = min(2*wait, missedRetryMax) {
				if !lifecycle.Sleep(rctx, wait) || readMissedKeys(rctx, rdb, channel, hub, log) {
					return
				}
			}
		}()
	}
	return redisx.FollowResync(ctx, rdb, channel, resync, func(payload string) {
		if n := hub.KeysChanged(payload); n > 0 {
			log.Info("closed the connections of invalidated keys", "connections", n)
		}
	})
}

// The backoff of a failed read of the missed key invalidations.
const (
	missedRetryMin = 100 * time.Millisecond
	missedRetryMax = 5 * time.Second
)

// readMissedKeys reads the edge's record of recent key invalidations and closes the
// connections it names (Hub.KeysMissed); it reports whether the read succeeded.
func readMissedKeys(ctx context.Context, rdb redis.UniversalClient, channel string, hub *ws.Hub, log *slog.Logger) bool {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	missed, now, err := keyevents.Recent(rctx, rdb, channel, time.Now().Add(-keyevents.Retention))
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("the key invalidations missed while unsubscribed were not read; retrying", "error", err)
		}
		return false
	}
	if n := hub.KeysMissed(missed, now); n > 0 {
		log.Info("closed the connections of keys invalidated while unsubscribed", "connections", n)
	}
	return true
}

// kafkaTopics returns the topics' readers, on the service's Kafka security: its shared
// transport carries their offsets and metadata requests (each connect reads the transfer
// topic's end), so those reuse connections rather than dial, and shake hands, each. Their
// failed reads count in metrics.
func kafkaTopics(s *service.Service, k service.Kafka, metrics *ws.Metrics) func(name string) feed.Topic {
	sec := s.KafkaSecurity()
	return func(name string) feed.Topic {
		metrics.FollowsTopic(name)
		return feed.Topic{Brokers: k.Brokers, Security: sec, Name: name, Log: s.Log,
			OnReadError: func(int, error) { metrics.FeedReadError(name) }}
	}
}

// followUserChanges drops a caller's cached labels when user-labels announces a change, so the
// next transfer shows the edit, and has the caller's filters naming an operator entity whose
// additions changed, or a user entity of theirs that changed, rebuilt, so they match the
// addresses it holds now (by the hub's worker for the caller: the partition's goroutine does
// not wait on user-labels). Every replica reads every change
// from the end: its cache holds nothing older, and its filters were built from user-labels'
// answers of then.
func followUserChanges(ctx context.Context, t feed.Topic, hub *ws.Hub, deliverer *alerts.Deliverer, log *slog.Logger) error {
	apply := func(m kafka.Message) {
		user := string(m.Key)
		var ch eventsv1.UserChange
		err := proto.Unmarshal(m.Value, &ch)
		if err == nil && deliverer != nil {
			deliverer.UserChanged(user, &ch)
		}
		if err == nil && ch.GetKind() == eventsv1.UserChange_KIND_ALERT {
			return // an alert's change: no label, entity or filter of the caller's streams moved
		}
		hub.Forget(user)
		if err != nil || ch.GetEntityId() == "" {
			return
		}
		// Whatever the op: an OP_DELETE (additions removed, a user entity deleted) changes what
		// the filters naming the entity match as much as an OP_UPSERT does.
		switch ch.GetKind() {
		case eventsv1.UserChange_KIND_ENTITY_ADDITIONS:
			hub.AdditionsChanged(user, ch.GetEntityId())
		case eventsv1.UserChange_KIND_ENTITY:
			hub.UserEntityChanged(user, ch.GetEntityId())
		}
	}
	for {
		start, err := t.Offsets(ctx, true)
		if err == nil {
			err = t.Follow(ctx, start, apply, nil)
		}
		if ctx.Err() != nil {
			return nil
		}
		log.Warn("following user changes failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
}
