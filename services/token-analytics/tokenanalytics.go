// Package tokenanalytics owns the token registry and prices and serves token rankings, flows,
// volumes and market data.
package tokenanalytics

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/config"
	"github.com/chainintel/chainintel/services/token-analytics/internal/events"
	svchttp "github.com/chainintel/chainintel/services/token-analytics/internal/http"
	"github.com/chainintel/chainintel/services/token-analytics/internal/source"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Name is the service name.
const Name = "token-analytics"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from TOKENANALYTICS_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics token-analytics produces or consumes: `token-analytics migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicSwaps, eventsv1.TopicBalances, eventsv1.TopicReorgs, eventsv1.TopicBlocks, eventsv1.TopicTokens, eventsv1.TopicMarketTokens, eventsv1.TopicPrices, eventsv1.TopicAttributions}

// Migrate applies the market schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// Commands are the binary's extra subcommands: `import-tokens <list.json>...` and
// `import-prices <pricingId>=<file.csv>...` import into the registry and price history (the
// service, when running, publishes what they wrote).
var Commands = map[string]service.Command[Config]{
	"import-tokens": func(ctx context.Context, cfg Config, log *slog.Logger, args []string) error {
		cfg.TokenLists, cfg.PriceCSVs = args, nil
		return importOffline(ctx, cfg, log)
	},
	"import-prices": func(ctx context.Context, cfg Config, log *slog.Logger, args []string) error {
		for _, a := range args {
			if id, path, ok := strings.Cut(a, "="); !ok || id == "" || path == "" {
				return fmt.Errorf("import-prices: %q is not <pricingId>=<file.csv>", a)
			}
		}
		cfg.TokenLists, cfg.PriceCSVs = nil, args
		return importOffline(ctx, cfg, log)
	},
}

func importOffline(ctx context.Context, cfg Config, log *slog.Logger) error {
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: Name + "-import"})
	if err != nil {
		return err
	}
	defer pool.Close()
	set, err := chains.NewSet(cfg.Chains)
	if err != nil {
		return err
	}
	return Import(ctx, store.New(pool), cfg, set, log)
}

// Import writes the native coins of the configured chains, cfg's token lists and price CSVs
// into the registry and price history. It is idempotent.
func Import(ctx context.Context, st *store.Store, cfg Config, set *chains.Set, log *slog.Logger) error {
	if err := st.UpsertTokens(ctx, source.NativeCoins(set, cfg.Stablecoins)); err != nil {
		return err
	}
	for _, path := range cfg.TokenLists {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("token list: %w", err)
		}
		err = importList(ctx, st, f, set, cfg.Stablecoins)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		log.Info("token list imported", "path", path)
	}
	if len(cfg.TokenLists) > 0 {
		if err := importList(ctx, st, bytes.NewReader(source.WellKnown), set, cfg.Stablecoins); err != nil {
			return fmt.Errorf("well-known tokens: %w", err)
		}
	}
	for _, e := range cfg.PriceCSVs {
		id, path, _ := strings.Cut(e, "=")
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("price csv: %w", err)
		}
		ps, err := source.ParsePriceCSV(f, id)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		n, err := st.AddPrices(ctx, ps)
		if err != nil {
			return err
		}
		log.Info("price history imported", "path", path, "pricing_id", id, "points", len(ps), "new_or_changed", n)
	}
	return nil
}

func importList(ctx context.Context, st *store.Store, r io.Reader, set *chains.Set, stablecoins []string) error {
	us, err := source.ParseTokenList(r, set, stablecoins)
	if err != nil {
		return err
	}
	return st.UpsertTokens(ctx, us)
}

// PriceCSVsIn lists the CoinGecko price exports in dir whose coin is known by its file name, as
// TOKENANALYTICS_PRICE_CSVS entries.
func PriceCSVsIn(dir string) ([]string, error) { return source.PriceCSVsIn(dir) }

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
	keepMin := store.DefaultTopFlowMinAddresses
	if cfg.TopFlowKeep <= 0 {
		keepMin = 0 // keep none
	}
	st := store.New(pool, store.OnOutbox(func() { relay.Kick() }), store.Retention(cfg.FlowRetention, time.Now),
		store.KeepTopFlows(keepMin, cfg.TopFlowKeep), store.TopFlowRebuildInterval(cfg.FlowCloseInterval))
	// Deposit addresses stored before their deposit services' types were kept, or classified by
	// a previous release during a roll, are classified before the consumers start.
	if err := st.ClassifyDepositAddresses(ctx); err != nil {
		return fmt.Errorf("classify deposit addresses: %w", err)
	}
	relay = events.NewRelay(st, pub, outbox.Options{Logger: s.Log, Meter: s.Tel.Meter()})
	s.Add(relay.Part())
	var svc *app.Service // built below, before the parts run
	s.Add(lifecycle.Part{Name: "registry import", Run: func(ctx context.Context) error {
		if err := Import(ctx, st, cfg, set, s.Log); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("import: %w", err)
		}
		// POST /internal/prices/window answers from here on: before, a point the imports bring
		// could be missing, and ingest would publish its transfers without USD values.
		svc.MarkImported()
		republishLoop(ctx, st, cfg, s.Log)
		return nil
	}})
	addConsumers(s, cfg, st, set)
	if cfg.FlowRetention > 0 {
		s.Add(pruneLoop(st, cfg.FlowPruneInterval, s.Log))
	}
	s.Add(classifyLoop(st, ClassifyInterval, s.Log))
	mx, err := newMetrics(ctx, s.Tel.Meter(), time.Now, cfg.PriceAPIURL != "")
	if err != nil {
		return err
	}
	s.Add(closeLoop(st, cfg.FlowCloseInterval, s.Log, mx))
	s.Add(topFlowsLoop(st, cfg.FlowCloseInterval, s.Log))
	if cfg.PriceAPIURL != "" {
		s.Add(pricePoller(cfg, st, s.Log, mx))
	}
	o := app.Options{Chains: cfg.Chains, Native: native(cfg), Exchange: exchange(cfg), TopRefresh: cfg.TopRefresh, Logger: s.Log}
	if cfg.UserLabelsURL != "" {
		c, err := ulclient.New(cfg.UserLabelsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("TOKENANALYTICS_USER_LABELS_URL: %w", err)
		}
		o.UserLabels = c
	}
	svc = app.New(st, o)
	s.Add(lifecycle.Part{Name: "top tokens refresh", Run: svc.RefreshTopLoop})
	e := s.Engine()
	svchttp.Register(e, svc, set)
	return s.Run(ctx, e)
}

// pricePoller polls the price API while this replica holds the poller's lease.
func pricePoller(cfg Config, st *store.Store, log *slog.Logger, mx *metrics) lifecycle.Part {
	holder := holderID()
	log = log.With("lease_holder", holder)
	api := source.NewClient(source.ClientOptions{BaseURL: cfg.PriceAPIURL, APIKey: cfg.PriceAPIKey, KeyHeader: cfg.PriceAPIKeyHeader,
		RequestsPerMinute: cfg.PriceRequestsPerMinute, Logger: log, HTTP: httpxClient(), Throttled: mx.throttledOnce})
	p := source.NewPoller(api, st, source.PollerOptions{Interval: cfg.PricePollInterval, History: cfg.PriceHistory,
		MaxIDs: cfg.PriceMaxIDs, Chains: cfg.Chains, Stablecoins: cfg.Stablecoins, WrappedCategories: wrappedCategories(cfg.WrappedCategories), Logger: log,
		Polled: mx.polled, Quoted: mx.quoted, Holding: mx.holding,
		Lease: st.Lease(PollerLease, holder, PollerLeaseIntervals*cfg.PricePollInterval, nil)})
	return lifecycle.Part{Name: "price poller", Run: p.Run}
}

// PollerLease is the market.leases row of the price poller: one replica of a deployment polls
// the price API at a time, so TOKENANALYTICS_PRICE_REQUESTS_PER_MINUTE is the deployment's
// budget, not each replica's.
const PollerLease = "price-poller"

// PollerLeaseIntervals is the price poller lease's ttl in poll intervals: the holder renews it
// each cycle and before each request, and a replica that died is replaced once it expires.
const PollerLeaseIntervals = 3

// holderID is this process's lease holder id: the host name (the pod's) for the logs, and
// random bytes, so two processes never share it.
func holderID() string {
	host, _ := os.Hostname()
	return host + "-" + rand.Text()[:10]
}

// RepublishWindow is how far before now the republished prices reach: ingest's price-age
// window (its market.MaxAge), the oldest price it uses for a block's time.
const RepublishWindow = 48 * time.Hour

// republishLoop publishes the registry and the prices in force over the last RepublishWindow
// again at once and then every cfg.PriceRepublishInterval (unless another replica did within
// it: then an interval after that replica's run), until ctx ends; a failed run is retried a
// minute later.
func republishLoop(ctx context.Context, st *store.Store, cfg Config, log *slog.Logger) {
	every := cfg.PriceRepublishInterval
	started := false // the run at start always republishes
	for {
		now := time.Now()
		var skipAfter time.Time
		if started {
			skipAfter = now.Add(-every)
		}
		r, err := st.Republish(ctx, now.Add(-RepublishWindow), cfg.Chains, skipAfter, now)
		wait := every
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			log.WarnContext(ctx, "republishing the registry and prices failed", "error", err)
			wait = time.Minute
		case r.Skipped:
			wait = republishWait(r, now, every)
		default:
			started = true
			log.InfoContext(ctx, "registry and recent prices republished", "tokens", r.Tokens, "prices", r.Prices)
		}
		if every <= 0 && started {
			<-ctx.Done()
			return
		}
		if !lifecycle.Sleep(ctx, wait) {
			return
		}
	}
}

// republishWait is how long a replica that skipped a republish (r) at now waits for the next:
// an interval after the run that made it skip. Waiting a whole interval from the skip would
// leave up to two intervals between runs when the replica that ran stops.
func republishWait(r store.Republished, now time.Time, every time.Duration) time.Duration {
	return max(r.Last.Add(every).Sub(now), time.Second)
}

// pruneLoop deletes flows older than the store's horizon every interval (at start too).
func pruneLoop(st *store.Store, every time.Duration, log *slog.Logger) lifecycle.Part {
	return lifecycle.Part{Name: "flow pruning", Run: func(ctx context.Context) error {
		for {
			n, err := st.PruneFlows(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "flow pruning failed", "error", err)
			case err == nil:
				log.DebugContext(ctx, "flows pruned", "before", st.FlowHorizon(), "copies", n.Copies,
					"address_hours", n.AddressHours, "hours", n.Hours, "days", n.Days)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(every):
			}
		}
	}}
}

// ClassifyInterval is how often a running replica looks again for addresses classified by an
// entity type other than the stored one (ClassifyDepositAddresses): replicas of a previous
// release may go on writing such classes after this replica's start, until the roll ends.
const ClassifyInterval = 10 * time.Minute

// classifyLoop runs ClassifyDepositAddresses every interval after the run at start, so what
// replicas of a previous release classified during a roll is put right without another restart.
func classifyLoop(st *store.Store, every time.Duration, log *slog.Logger) lifecycle.Part {
	return lifecycle.Part{Name: "address classes check", Run: func(ctx context.Context) error {
		return lifecycle.Every(ctx, every, func(ctx context.Context) {
			if err := st.ClassifyDepositAddresses(ctx); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "classifying stale addresses failed", "error", err)
			}
		})
	}}
}

// closeLoop closes the flow hours no transfer is expected in any more every interval (at start
// too), so top_flow and class changes read per transfer only the hours still open, and records
// each run and the closed hours' ends in mx.
func closeLoop(st *store.Store, every time.Duration, log *slog.Logger, mx *metrics) lifecycle.Part {
	return lifecycle.Part{Name: "flow hour close", Run: func(ctx context.Context) error {
		for {
			start := time.Now()
			c, err := st.CloseHours(ctx)
			if ctx.Err() == nil {
				mx.closed(ctx, c, err, time.Since(start))
				// The closed hours' ends, for the lag gauge (a failed read keeps the last ones).
				if until, err := st.ClosedUntil(ctx); err == nil {
					mx.closedUntil(until)
				}
			}
			switch {
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "closing flow hours failed", "error", err)
			case err == nil && c.Chains > 0:
				log.DebugContext(ctx, "flow hours closed", "chains", c.Chains, "rows", c.Rows, "transfers", c.Transfers)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(every):
			}
		}
	}}
}

// topFlowsLoop keeps top_flow's kept sums current (store.RefreshTopFlows): every interval (the
// close's, which moves their closed hours' end) and whenever a request found none of its window
// or found them behind; the store reads each set and window at most once per interval and
// backs off one that failed.
func topFlowsLoop(st *store.Store, every time.Duration, log *slog.Logger) lifecycle.Part {
	return lifecycle.Part{Name: "top_flow kept sums", Run: func(ctx context.Context) error {
		for {
			r, err := st.RefreshTopFlows(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "refreshing top_flow's kept sums failed", "error", err, "failed", r.Failed, "built", r.Built)
			case err == nil && r.Built > 0:
				log.DebugContext(ctx, "top_flow sums read", "built", r.Built, "kept", r.Kept, "addresses", r.Addresses)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-st.TopFlowsWake():
			case <-time.After(every):
			}
		}
	}}
}

func httpxClient() *http.Client {
	return &http.Client{Transport: httpx.NewTransport(), Timeout: 30 * time.Second}
}

// exchange is the operator's exchange's token lists, trimmed.
func exchange(cfg Config) app.Exchange {
	trim := func(ids []string) []string {
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			out = append(out, strings.TrimSpace(id))
		}
		return out
	}
	return app.Exchange{Spot: trim(cfg.ExchangeSpotTokens), Perp: trim(cfg.ExchangePerpTokens)}
}

func native(cfg Config) app.Native {
	n := app.Native{Chain: cfg.NativeChain, Decimals: cfg.NativeDecimals, TotalSupply: cfg.NativeTotalSupply}
	if cfg.NativeChain == "" {
		return n
	}
	n.Token = events.Normalize(cfg.NativeChain, cfg.NativeToken)
	for _, a := range cfg.NativeReserves {
		n.Reserves = append(n.Reserves, events.Normalize(cfg.NativeChain, strings.TrimSpace(a)))
	}
	return n
}

func addConsumers(s *service.Service, cfg Config, st *store.Store, set *chains.Set) {
	n := native(cfg)
	h := events.Handlers{Store: st, Chains: set, Reserves: map[string]bool{}, Reserve: n.Chain + ":" + n.Token}
	for _, a := range n.Reserves {
		h.Reserves[n.Chain+":"+a] = true
	}
	big := func(o *eventbus.ConsumerOptions) { o.MaxBatch = 5000 }
	service.Consume(s, eventsv1.TopicTransfers, func() *eventsv1.Transfer { return new(eventsv1.Transfer) }, h.Transfers, big)
	service.Consume(s, eventsv1.TopicSwaps, func() *eventsv1.Swap { return new(eventsv1.Swap) }, h.Swaps, big)
	service.Consume(s, eventsv1.TopicTransactions, func() *eventsv1.Transaction { return new(eventsv1.Transaction) }, h.Transactions, big)
	service.Consume(s, eventsv1.TopicBlocks, func() *eventsv1.Block { return new(eventsv1.Block) }, h.Blocks, big)
	service.Consume(s, eventsv1.TopicReorgs, func() *eventsv1.Reorg { return new(eventsv1.Reorg) }, h.Reorgs)
	service.Consume(s, eventsv1.TopicAttributions, func() *eventsv1.Attribution { return new(eventsv1.Attribution) }, h.Attributions, big)
	service.Consume(s, eventsv1.TopicTokens, func() *eventsv1.Token { return new(eventsv1.Token) }, h.Tokens)
	if len(n.Reserves) > 0 {
		service.Consume(s, eventsv1.TopicBalances, func() *eventsv1.BalanceObservation { return new(eventsv1.BalanceObservation) }, h.Balances, big)
	}
}

// wrappedCategories is the configured wrapped-token categories, none for "none" (an empty
// variable takes the default, so "none" is how a deployment turns the flags off).
func wrappedCategories(cs []string) []string {
	if len(cs) == 1 && cs[0] == "none" {
		return nil
	}
	return cs
}
