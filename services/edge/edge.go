// Package edge is the public door of chainintel: it authenticates API keys, applies the tier's
// access, rate limits and credit metering, routes every public path to the service that owns it
// and serves /health, /chains, /openapi.json and /analytics/* itself. It also runs the metering
// consumer that aggregates usage events into rollups and billing periods.
package edge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/attribution"
	"github.com/chainintel/chainintel/services/edge/internal/config"
	edgehttp "github.com/chainintel/chainintel/services/edge/internal/http"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/openapi"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/chainintel/chainintel/services/edge/tiers"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/rs/cors"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"golang.org/x/sync/semaphore"
)

// Name is the service name.
const Name = "edge"

// Config is the edge's configuration.
type Config = config.Config

// Deps are what a caller may hand the edge instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from EDGE_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics edge produces or consumes: `edge migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicUsageCalls}

// Migrate applies the edge schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// DevKeyTier is the tier of the key the local stack seeds.
const DevKeyTier = "api"

// SeedDevKey makes raw a working org-admin key on the API tier (for the local stack),
// re-enabling it if it was revoked; with revokeEarlier (a key made up for this start), the dev
// user's earlier seeded keys are revoked.
func SeedDevKey(ctx context.Context, cfg Config, raw string, revokeEarlier bool) error {
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: "edge-seed"})
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = keys.NewStore(pool).SeedDevKey(ctx, raw, DevKeyTier, revokeEarlier)
	return err
}

// Run serves the edge until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
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
	rdb, err := connectRedis(ctx, s, cfg.Redis.URL)
	if err != nil {
		return err
	}
	pub := s.Publisher()
	a, err := Assemble(cfg, s, pool, rdb, pub)
	if err != nil {
		return err
	}
	for _, p := range a.Parts() {
		s.Add(p)
	}
	service.Consume(s, eventsv1.TopicUsageCalls, func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} }, a.Aggregator.Handle)
	return s.Run(ctx, a.Traced(s))
}

// Traced is the public handler as Run serves it: wrapped in a server span per request. A
// request's trace context (traceparent, tracestate, baggage) is followed only from a peer of
// EDGE_TRACE_TRUSTED_PROXIES (a proxy that sets those headers itself; none by default): from
// anyone else the edge starts a new trace under its own sample ratio, linked to the caller's,
// and drops the caller's baggage (the proxy drops every caller propagation header and sends the
// edge's). Otherwise any caller could have its calls traced through every service whatever the
// operator's ratio (the services follow a sampled parent), and place spans in traces it names.
func (a *Assembly) Traced(s *service.Service) http.Handler {
	public := func(r *http.Request) bool { return !edgehttp.PeerTrusted(r, a.traceTrusted) }
	h := otelhttp.NewHandler(a.Handler, "edge", otelhttp.WithTracerProvider(s.Tel.TracerProvider),
		otelhttp.WithPublicEndpointFn(public),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.Pattern }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r) {
			r.Header.Del("Baggage")
		}
		h.ServeHTTP(w, r)
	})
}

// connectRedis connects to Redis without making it a readiness dependency: the edge keeps
// serving when Redis is away (in-process rate limits, database key lookups), so an outage must
// not take every replica out of the load balancer. It starts even when Redis is down at first.
func connectRedis(ctx context.Context, s *service.Service, url string) (*redis.Client, error) {
	rdb, err := redisx.Connect(ctx, url, redisx.WithLogger(s.Log))
	if err != nil {
		opt, perr := redis.ParseURL(url)
		if perr != nil {
			return nil, err
		}
		s.Log.Warn("Redis unreachable at start; serving with in-process limits until it answers", "error", err)
		rdb = redis.NewClient(opt)
	}
	s.OnStop("redis", func(context.Context) error { return rdb.Close() })
	return rdb, nil
}

// Assembly is the edge built from its connected dependencies. Run starts its Parts and the
// metering consumer; tests and benchmarks in this module use it directly.
type Assembly struct {
	Handler    http.Handler
	Tiers      tiers.Table
	Verifier   *keys.Verifier
	Limiter    *ratelimit.Limiter
	Ledger     *metering.CreditLedger
	Producer   *metering.Producer
	Usage      *usage.Store
	Aggregator *metering.Aggregator
	store      *usage.Store
	retention  time.Duration
	hourlyKeep time.Duration
	log        *slog.Logger
	// traceTrusted are the peers whose trace context is followed (EDGE_TRACE_TRUSTED_PROXIES).
	traceTrusted []netip.Prefix
}

// Assemble builds the edge over a database pool, Redis and a usage-event publisher.
func Assemble(cfg Config, s *service.Service, pool *pgxpool.Pool, rdb redis.UniversalClient, pub metering.Publisher) (*Assembly, error) {
	table, err := tiers.FromFile(cfg.TiersFile)
	if err != nil {
		return nil, err
	}
	trusted, err := config.ParseCIDRs(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	traceTrusted, err := config.ParseCIDRs(cfg.TraceTrustedProxies)
	if err != nil {
		return nil, err
	}
	meter := s.Tel.Meter()
	store := usage.NewStore(pool)
	a := &Assembly{Tiers: table, Usage: store, store: store, retention: cfg.UsageDedupRetention, hourlyKeep: cfg.UsageHourlyRetention, log: s.Log,
		traceTrusted: traceTrusted}
	a.Verifier = keys.NewVerifier(keys.NewStore(pool), keys.VerifierOptions{
		LocalTTL: cfg.KeyLocalTTL, RedisTTL: cfg.KeyCacheTTL, Redis: rdb, Log: s.Log})
	a.Limiter = ratelimit.New(rdb, ratelimit.Options{Timeout: cfg.LimiterTimeout, FallbackFor: cfg.LimiterFallback,
		LeaseTTL: cfg.LimiterLeaseTTL, MaxLease: cfg.LimiterMaxLease, Log: s.Log, MeterProvider: s.Tel.MeterProvider})
	a.Ledger = metering.NewCreditLedger(rdb, store, metering.LedgerOptions{Sync: cfg.CreditSync, Log: s.Log})
	a.Producer = metering.NewProducer(pub, metering.ProducerOptions{Queue: cfg.UsageQueue, Batch: cfg.UsageBatch,
		Log: s.Log, Meter: s.Tel.MeterProvider, Sent: a.Ledger.Sent, Unconfirmed: a.Ledger.Unconfirmed})
	a.Aggregator = &metering.Aggregator{
		Store: store, Ledger: a.Ledger, Log: s.Log,
		Included: func(tier string) int64 { t, _ := table.Get(tier); return t.IncludedCredits },
	}
	included := usage.NewIncludedCache(store, usage.IncludedOptions{TTL: cfg.CreditsIncludedTTL})
	analytics := edgehttp.Analytics{Usage: store, Tiers: table, Routes: routes.Table}
	shed := edgehttp.NewShedder(cfg.MaxInFlight, cfg.ShedWait, meter)
	names, err := attribution.New(cfg.OperatorName)
	if err != nil {
		return nil, err
	}
	ignored, err := edgehttp.IgnoredParameters(names.Outward)
	if err != nil {
		return nil, err
	}
	mws := []edgehttp.Middleware{
		edgehttp.TierAccess(table),
		edgehttp.RateLimits{Tiers: table, Limiter: a.Limiter, TrustedProxies: trusted,
			Public: ratelimit.Limit{Rate: cfg.PublicRate, Burst: cfg.PublicBurst}}.Middleware,
		// After the limits, before the metering and the slots: a body is read only for calls
		// let through, and a slow one holds neither a credit reservation nor an upstream slot.
		edgehttp.ReadBody(cfg.BodyReadTimeout),
		ignored, // after the limits: a query's names are read only for calls let through
		edgehttp.Metering{Tiers: table, Ledger: a.Ledger, Usage: a.Producer, Included: included}.Middleware,
		shed.Middleware,
	}
	own := map[string]http.Handler{
		"GET /analytics/credit-periods": analytics.CreditPeriods(),
		"GET /analytics/endpoint-calls": analytics.EndpointCalls(),
		"GET /subscription/intel-usage": analytics.IntelUsage(),
	}
	fails := &edgehttp.FailedKeys{Limiter: a.Limiter, Keys: a.Verifier, TrustedProxies: trusted,
		Limit: ratelimit.Limit{Rate: cfg.FailedKeyRate, Burst: cfg.FailedKeyBurst}, Lookups: semaphore.NewWeighted(int64(cfg.FailedKeyLookups))}
	a.Handler, err = Handler(cfg, s, a.Verifier, fails, own, mws...)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Parts are the background workers of the edge: key invalidations, the credit ledger's sync,
// the usage producer and the retention of usage event ids and hourly usage.
func (a *Assembly) Parts() []lifecycle.Part {
	return []lifecycle.Part{
		{Name: "key invalidations", Run: a.Verifier.Listen},
		{Name: "usage producer", Run: a.Producer.Run},
		{Name: "credit ledger", Run: a.Ledger.Run},
		{Name: "rate-limit leases", Run: a.Limiter.Run},
		{Name: "usage retention", Run: a.retainUsage},
	}
}

func (a *Assembly) retainUsage(ctx context.Context) error {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := a.store.ForgetEventsBefore(ctx, time.Now().Add(-a.retention)); err != nil && ctx.Err() == nil {
			a.log.Warn("forgetting old usage event ids failed", "error", err)
		} else if n > 0 {
			a.log.Info("forgot old usage event ids", "count", n)
		}
		if a.hourlyKeep > 0 {
			before := time.Now().Add(-a.hourlyKeep).UTC().Truncate(time.Hour)
			if n, err := a.store.PruneHourlyBefore(ctx, before, 10000); err != nil && ctx.Err() == nil {
				a.log.Warn("pruning old hourly usage failed", "error", err)
			} else if n > 0 {
				a.log.Info("pruned old hourly usage", "rows", n, "before", before)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Handler builds the public handler: the route table with the edge's own endpoints (own adds
// or replaces them by route key) and proxies to services, authentication, then mws in order.
func Handler(cfg Config, s *service.Service, verifier edgehttp.KeyVerifier, fails *edgehttp.FailedKeys, own map[string]http.Handler, mws ...edgehttp.Middleware) (http.Handler, error) {
	set, err := chains.NewSet(cfg.Chains)
	if err != nil {
		return nil, err
	}
	upstreams := map[routes.Service]http.Handler{}
	for name, target := range cfg.Upstreams() {
		o := proxy.Options{Service: name, Target: target, Signer: s.Signer, Timeout: cfg.UpstreamTimeout, Propagator: s.Tel.Propagator}
		if routes.Service(name) == routes.StreamFanout {
			o.KeyHash = true
			o.Streams = proxy.Streams{SocketBuffer: cfg.StreamSocketBuffer, CopyBuffer: cfg.StreamCopyBuffer}
		}
		p, err := proxy.New(o)
		if err != nil {
			return nil, err
		}
		upstreams[routes.Service(name)] = p
	}
	chainList, err := edgehttp.JSON(chains.Names(set.Chains()))
	if err != nil {
		return nil, err
	}
	names, err := attribution.New(cfg.OperatorName)
	if err != nil {
		return nil, err
	}
	doc, err := names.Document(openapi.Document)
	if err != nil {
		return nil, err
	}
	all := map[string]http.Handler{
		"GET /health":       edgehttp.Health(),
		"GET /chains":       chainList,
		"GET /openapi.json": edgehttp.Raw("application/json; charset=utf-8", doc),
	}
	for k, h := range own {
		all[k] = h
	}
	h, err := edgehttp.NewHandler(edgehttp.Options{
		Routes: routes.Table, Upstreams: upstreams, Own: all, Keys: verifier, Middlewares: mws, Log: s.Log, Failures: fails,
		Observer: edgehttp.NewObserver(s.Tel.Meter()), ClientWriteTimeout: cfg.ClientWriteTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("edge handler: %w", err)
	}
	return withCORS(cfg.CORSOrigins, names.Wrap(h)), nil
}

// withCORS answers browsers' CORS for the origins given (none: h unchanged). A preflight is
// answered here, before authentication (browsers send it without the API-Key header) and without
// a charge; an actual call carries Access-Control-Allow-Origin and exposes the rate-limit and
// credit headers. Credentials (cookies) are never allowed: the API authenticates by API-Key.
func withCORS(origins []string, h http.Handler) http.Handler {
	var list []string
	for _, o := range origins {
		if o = strings.TrimSpace(o); o != "" {
			list = append(list, o)
		}
	}
	if len(list) == 0 {
		return h
	}
	return cors.New(cors.Options{
		AllowedOrigins: list,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete},
		AllowedHeaders: []string{"API-Key", "Content-Type"},
		ExposedHeaders: []string{"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
			"X-Credits-Used", "X-Credits-Period-Used", "X-Credits-Period-Limit", edgehttp.HeaderIgnoredParameters},
		MaxAge: 600,
	}).Handler(h)
}

var _ metering.Publisher = (*eventbus.Publisher)(nil)
