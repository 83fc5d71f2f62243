// Package intelligence owns attribution: entities, labels, tags, clusters, predictions and contracts, and publishes intel.attributions.v1.
package intelligence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/progress"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	balclient "github.com/chainintel/chainintel/services/balances/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/config"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/heuristics"
	svchttp "github.com/chainintel/chainintel/services/intelligence/internal/http"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/internal/transfersclient"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"go.opentelemetry.io/otel/metric"
)

// Name is the service name.
const Name = "intelligence"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from INTEL_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics intelligence produces or consumes: `intelligence migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicAttributions, eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicBalances, eventsv1.TopicReorgs, eventsv1.TopicTokens, eventsv1.TopicContracts, eventsv1.TopicMarketTokens, eventsv1.TopicPrices}

// Migrate applies the intel schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
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
	set, err := chains.NewSet(cfg.Chains)
	if err != nil {
		return err
	}
	pool, err := s.Postgres(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	tagFailures, err := s.Tel.Meter().Int64Counter("intelligence.entity_tags.failures",
		metric.WithDescription("entities whose populated tags refresh failed and was backed off (each attempt counts; the log names the entity)"))
	if err != nil {
		return err
	}
	tagFailures.Add(ctx, 0) // exported before the first failure
	st := store.New(pool, store.OnTagsFailure(func(f store.TagsFailure) {
		logTagsFailure(s.Log, f)
		tagFailures.Add(ctx, 1)
	}))
	cache := attribution.NewCache(st)
	if err := cache.Refresh(ctx); err != nil {
		return fmt.Errorf("load attributions: %w", err)
	}
	s.Log.Info("attribution cache loaded", "addresses", cache.Len())
	s.Add(lifecycle.Part{Name: "attribution cache", Run: func(ctx context.Context) error {
		return cache.Run(ctx, cfg.CacheRefresh, s.Log)
	}})
	pub := s.Publisher()
	s.Add(lifecycle.Part{Name: "attribution relay", Run: func(ctx context.Context) error {
		return publish.Relay(ctx, st, pub, cfg.PublishInterval, s.Log, outbox.NewMetrics(s.Tel.Meter(), publish.OutboxName))
	}})
	s.Add(lifecycle.Part{Name: "entity tags", Run: func(ctx context.Context) error {
		return publish.TagLoop(ctx, st, cfg.PublishInterval, s.Log)
	}})
	s.Add(lifecycle.Part{Name: "heuristics", Run: func(ctx context.Context) error {
		return heuristics.Loop(ctx, st, st, heuristicParams(cfg), heuristics.Runner(), cfg.HeuristicsInterval, s.Log)
	}})

	consume(s, events.Handlers{Store: st})

	ul, err := ulclient.New(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
	if err != nil {
		return fmt.Errorf("INTEL_USER_LABELS_URL: %w", err)
	}
	tc, err := transfersclient.New(cfg.TransfersURL, s.Signer, s.Tel.TracerProvider)
	if err != nil {
		return fmt.Errorf("INTEL_TRANSFERS_URL: %w", err)
	}
	a := &app.Service{Chains: set, Cache: cache, Store: st, UserLabels: ul, Transfers: tc, Log: s.Log,
		ClusterMaxMembers: cfg.ClusterSummaryMaxMembers, RiskParallel: cfg.RiskParallel}
	if cfg.BalancesURL != "" {
		bc, err := balclient.New(cfg.BalancesURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("INTEL_BALANCES_URL: %w", err)
		}
		a.Balances = bc
	}
	if cfg.TokenAnalyticsURL != "" {
		mc, err := taclient.New(cfg.TokenAnalyticsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("INTEL_TOKEN_ANALYTICS_URL: %w", err)
		}
		a.Market = marketData{mc}
	}
	e := s.Engine()
	svchttp.Register(e, a)
	return s.Run(ctx, e)
}

// consume adds the service's consumers, one per topic it reads.
func consume(s *service.Service, h events.Handlers) {
	service.Consume(s, eventsv1.TopicTransfers, func() *eventsv1.Transfer { return new(eventsv1.Transfer) }, h.Transfers)
	service.Consume(s, eventsv1.TopicReorgs, func() *eventsv1.Reorg { return new(eventsv1.Reorg) }, h.Reorgs)
	service.Consume(s, eventsv1.TopicTransactions, func() *eventsv1.Transaction { return new(eventsv1.Transaction) }, h.Transactions)
	service.Consume(s, eventsv1.TopicContracts, func() *eventsv1.Contract { return new(eventsv1.Contract) }, h.Contracts)
	service.Consume(s, eventsv1.TopicTokens, func() *eventsv1.Token { return new(eventsv1.Token) }, h.Tokens)
	service.Consume(s, eventsv1.TopicBalances, func() *eventsv1.BalanceObservation { return new(eventsv1.BalanceObservation) }, h.Balances)
	service.Consume(s, eventsv1.TopicMarketTokens, func() *eventsv1.MarketToken { return new(eventsv1.MarketToken) }, h.MarketTokens)
	service.Consume(s, eventsv1.TopicPrices, func() *eventsv1.Price { return new(eventsv1.Price) }, h.Prices)
}

// logTagsFailure logs an entity the tags refresher backed off.
func logTagsFailure(log *slog.Logger, f store.TagsFailure) {
	log.Warn("entity tags refresh failed; retrying the entity later", "entity", f.EntityID, "failures", f.Failures,
		"retryIn", f.Backoff.String(), "error", f.Err)
}

// marketData answers app.MarketData from token-analytics.
type marketData struct{ c *taclient.Client }

func (m marketData) TokenMarket(ctx context.Context, id, chain, address string) (app.TokenInfo, bool, error) {
	var mk taclient.Market
	var err error
	if id != "" {
		mk, err = m.c.Market(ctx, id)
	} else {
		mk, err = m.c.MarketByContract(ctx, chain, address)
	}
	// An id or contract token-analytics refuses (too long, malformed) is the caller's input, not
	// an outage: like an unknown token, the local registry answers (an unknown id there too),
	// without the warning that token-analytics is unavailable.
	if errors.Is(err, taclient.ErrNotFound) || errors.Is(err, taclient.ErrRefused) {
		return app.TokenInfo{}, false, nil
	}
	if err != nil {
		return app.TokenInfo{}, false, err
	}
	info := app.TokenInfo{Identifier: app.TokenIdentifier{PricingID: render.NullString(mk.Identifier.PricingID), Chain: mk.Identifier.Chain,
		Address: mk.Identifier.Address}, Name: mk.Name, Symbol: mk.Symbol, Price: mk.Price, Price24hAgo: mk.Price24hAgo,
		Deployments: []app.TokenDeployment{}}
	for _, d := range mk.Deployments {
		info.Deployments = append(info.Deployments, app.TokenDeployment{Chain: d.Chain, Address: d.Address, Decimals: int(d.Decimals)})
	}
	return info, true, nil
}

func heuristicParams(cfg Config) heuristics.Params {
	return heuristics.Params{ExchangeTypes: cfg.ExchangeTypes, MinSenders: cfg.DepositMinSenders,
		MinSweepShare: cfg.DepositSweepShare, EdgeRetention: cfg.EdgeRetention}
}

// Conflict is an address two entities claim, and which one won by confidence.
type Conflict = importer.Conflict

// Report says what an import did.
type Report struct {
	Sources          []string   `json:"sources"`
	Entities         int        `json:"entitiesChanged"`
	Tags             int        `json:"tags"`
	Claims           int        `json:"claims"`
	AddressesChanged int        `json:"addressesChanged"`
	Published        int        `json:"published"`
	Skipped          []string   `json:"skipped,omitempty"`
	Conflicts        []Conflict `json:"conflicts,omitempty"`
}

func (r *Report) add(source string, res store.ApplyResult, b importer.Batch) {
	r.Sources = append(r.Sources, source)
	r.Entities += res.EntitiesChanged
	r.Tags += res.TagsUpserted
	r.Claims += res.Claims
	r.AddressesChanged += res.AddressesChanged
	r.Skipped = append(r.Skipped, b.Skipped...)
	r.Conflicts = append(r.Conflicts, res.Conflicts...)
}

// withStore connects to cfg's database for a command and, when brokers are configured,
// publishes the changes it made before returning.
func withStore(ctx context.Context, cfg Config, fn func(*store.Store) (Report, error)) (Report, error) {
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 4, AppName: Name + "-import"})
	if err != nil {
		return Report{}, err
	}
	defer pool.Close()
	st := store.New(pool, store.OnTagsFailure(func(f store.TagsFailure) { logTagsFailure(slog.Default(), f) }))
	rep, err := fn(st)
	if err != nil {
		return rep, err
	}
	if len(cfg.Brokers) > 0 {
		// The entities whose tags the import changed are published with it, not at a running
		// service's next refresh.
		if _, err := publish.RefreshTags(ctx, st); err != nil {
			return rep, fmt.Errorf("the changes are stored, but refreshing entity tags failed (a running service refreshes them): %w", err)
		}
		sec, err := cfg.Kafka.Security()
		if err != nil {
			return rep, fmt.Errorf("the changes are stored, but not published (a running service publishes them): %w", err)
		}
		defer sec.Close()
		pub := eventbus.NewPublisher(cfg.Brokers, eventbus.PublisherOptions{Security: sec})
		defer pub.Close()
		n, err := publish.Drain(ctx, st, pub)
		rep.Published = n
		if err != nil {
			return rep, fmt.Errorf("the changes are stored, but publishing them failed (a running service publishes them): %w", err)
		}
	}
	return rep, nil
}

// ImportCurated imports the operator's curated data (JSON or CSV, docs/contracts.md) from r as
// source "curated", then publishes the resulting attribution changes when cfg names brokers (a
// running service publishes them otherwise). A file with any problem changes nothing.
// Re-importing the same file changes nothing.
func ImportCurated(ctx context.Context, cfg Config, r io.Reader) (Report, error) {
	return ImportCuratedAs(ctx, cfg, "curated", r)
}

// ImportCuratedAs is ImportCurated with an explicit source name: a source's claims replace its
// own earlier claims on the same addresses and compete by confidence with other sources'.
func ImportCuratedAs(ctx context.Context, cfg Config, source string, r io.Reader) (Report, error) {
	b, err := importer.ParseCurated(r, source)
	if err != nil {
		return Report{}, err
	}
	return withStore(ctx, cfg, func(st *store.Store) (Report, error) {
		defined := map[string]bool{}
		for _, e := range b.Entities {
			defined[e.ID] = true
		}
		var refs []string
		for _, c := range b.Claims {
			if c.EntityID != "" && !defined[c.EntityID] {
				refs = append(refs, c.EntityID)
				defined[c.EntityID] = true
			}
		}
		missing, err := st.MissingEntities(ctx, refs)
		if err != nil {
			return Report{}, err
		}
		if len(missing) > 0 {
			return Report{}, fmt.Errorf("curated: addresses name entities that are neither in the file nor known: %s", strings.Join(missing, ", "))
		}
		res, err := st.ApplyBatch(ctx, b)
		if err != nil {
			return Report{}, err
		}
		var rep Report
		rep.add(source, res, b)
		return rep, nil
	})
}

// ImportGraphSense imports GraphSense packs: each path is a YAML file or a directory whose
// *.yaml files are read. Actor packs (*.actorpack.yaml) become entities; each tag pack becomes
// the source "graphsense:<file name>". Actors that tag packs name but no actor pack defines are
// created with their id as name. Re-importing changes nothing.
func ImportGraphSense(ctx context.Context, cfg Config, paths ...string) (Report, error) {
	files, err := yamlFiles(paths)
	if err != nil {
		return Report{}, err
	}
	if len(files) == 0 {
		return Report{}, fmt.Errorf("no .yaml files in %s", strings.Join(paths, ", "))
	}
	batches, err := parseGraphSense(files)
	if err != nil {
		return Report{}, err
	}
	prog := progress.New(progress.Options{Job: "intel.import", Unit: "records", Terminal: os.Stderr})
	var total int64
	for _, b := range batches {
		total += int64(len(b.Entities) + len(b.Claims))
	}
	prog.SetTotal(total)
	stop := prog.Start(ctx)
	defer stop()
	return withStore(ctx, cfg, func(st *store.Store) (Report, error) {
		return applyGraphSense(ctx, st, batches, prog)
	})
}

// parseGraphSense reads the actor packs first, then the tag packs, one batch each.
func parseGraphSense(files []string) ([]importer.Batch, error) {
	var actorFiles, packFiles []string
	for _, f := range files {
		if strings.HasSuffix(f, ".actorpack.yaml") {
			actorFiles = append(actorFiles, f)
		} else {
			packFiles = append(packFiles, f)
		}
	}
	var batches []importer.Batch
	for _, f := range actorFiles {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		es, skipped, err := importer.ParseGraphSenseActors(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		batches = append(batches, importer.Batch{Source: "graphsense:actors", Entities: es, Skipped: skipped})
	}
	for _, f := range packFiles {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		b, err := importer.ParseGraphSenseTagPack(fh, name)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		batches = append(batches, b)
	}
	return batches, nil
}

// applyGraphSense applies the batches in order, creating first the actors that tag packs name
// but no actor pack (nor the store) defines.
func applyGraphSense(ctx context.Context, st *store.Store, batches []importer.Batch, prog *progress.Reporter) (Report, error) {
	var rep Report
	defined := map[string]bool{}
	for _, b := range batches {
		for _, e := range b.Entities {
			defined[e.ID] = true
		}
	}
	for _, b := range batches {
		var refs []string
		for _, c := range b.Claims {
			if c.EntityID != "" && !defined[c.EntityID] {
				refs = append(refs, c.EntityID)
				defined[c.EntityID] = true
			}
		}
		missing, err := st.MissingEntities(ctx, refs)
		if err != nil {
			return rep, err
		}
		for _, id := range missing {
			b.Entities = append(b.Entities, attribution.Entity{ID: id, Name: id})
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: actor %q is in no actor pack; created with its id as name", b.Source, id))
		}
		res, err := st.ApplyBatch(ctx, b)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", b.Source, err)
		}
		rep.add(b.Source, res, b)
		prog.Add(int64(len(b.Entities) + len(b.Claims)))
	}
	return rep, nil
}

func yamlFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// Republish publishes the current attribution of every known address on
// intel.attributions.v1, for consumers building their read model from scratch.
func Republish(ctx context.Context, cfg Config) (int, error) {
	if len(cfg.Brokers) == 0 {
		return 0, fmt.Errorf("INTEL_KAFKA_BROKERS: required to republish")
	}
	sec, err := cfg.Kafka.Security()
	if err != nil {
		return 0, err
	}
	defer sec.Close()
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: Name + "-republish"})
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	pub := eventbus.NewPublisher(cfg.Brokers, eventbus.PublisherOptions{Security: sec})
	defer pub.Close()
	prog := progress.New(progress.Options{Job: "intel.republish", Unit: "attributions", Terminal: os.Stderr})
	stop := prog.Start(ctx)
	defer stop()
	return publish.Republish(ctx, store.New(pool), countingBus{pub, prog})
}

// countingBus counts published events on a progress reporter.
type countingBus struct {
	publish.Bus
	prog *progress.Reporter
}

func (b countingBus) Publish(ctx context.Context, events ...eventbus.Event) error {
	if err := b.Bus.Publish(ctx, events...); err != nil {
		return err
	}
	b.prog.Add(int64(len(events)))
	return nil
}

// HeuristicsSummary is what one heuristics pass concluded.
type HeuristicsSummary struct {
	Candidates int `json:"candidates"`
	Deposits   int `json:"deposits"`
	Clusters   int `json:"clusters"`
	Clustered  int `json:"clusteredAddresses"`
	Changed    int `json:"changed"`
	// Skipped: another session (a running replica) was making a pass, which concludes the same.
	Skipped bool `json:"skipped,omitempty"`
}

// RunHeuristics makes one heuristics pass over the stored transfer data with cfg's parameters
// (the service does this every INTEL_HEURISTICS_INTERVAL), unless a replica is making one.
func RunHeuristics(ctx context.Context, cfg Config) (HeuristicsSummary, error) {
	// Two connections: one holds the heuristics lock, the pass uses the other.
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: Name + "-heuristics"})
	if err != nil {
		return HeuristicsSummary{}, err
	}
	defer pool.Close()
	st := store.New(pool)
	// Whenever no pass is being made, however recent the last: the operator asked for one. Its
	// record makes the replicas' next rounds within the interval skip.
	sum, ran, err := heuristics.RunExclusive(ctx, st, st, heuristicParams(cfg), "intelligence heuristics "+heuristics.Runner(), 0)
	return HeuristicsSummary{Candidates: sum.Candidates, Deposits: len(sum.Deposits), Clusters: sum.Clusters,
		Clustered: sum.Clustered, Changed: sum.Changed, Skipped: err == nil && !ran}, err
}
