// Package stack runs the whole chainintel platform in one process for `make run` and the e2e
// suite: every service on its own loopback port, talking HTTP and the Kafka protocol exactly as
// in a cluster, with an embedded broker and Redis unless real ones are configured.
package stack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/telemetry"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/balances"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/services/intelligence"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	tokenanalytics "github.com/chainintel/chainintel/services/token-analytics"
	"github.com/chainintel/chainintel/services/transfers"
	userlabels "github.com/chainintel/chainintel/services/user-labels"
)

// Options configure the stack. Zero values take the documented defaults.
type Options struct {
	HTTPAddr     string   // edge address; default 127.0.0.1:8080
	DevAPIKey    string   // default: random, revoking the earlier starts' random keys
	DatabaseURL  string   // default postgres://postgres@127.0.0.1:5432/chainintel
	KafkaBrokers []string // default: an embedded broker
	// Kafka is the TLS and SASL of KafkaBrokers (its KAFKA_TLS* and KAFKA_SASL_* fields; the
	// rest is ignored); the embedded broker is plaintext.
	Kafka        service.Kafka
	RedisURL     string    // default: an embedded Redis-protocol server
	LogLevel     string    // services' log level; default "warn"
	OTLPEndpoint string    // export traces and metrics of every service here; default off
	Chains       []string  // default: every chain
	LogOutput    io.Writer // services' JSON logs; default os.Stderr
	// TiersFile is the tier table (docs/edge.md, Tiers) of both the edge and stream-fanout, which
	// must enforce the same one; default: their built-in table.
	TiersFile string
	// Ingest simulates a world unless EVMRPCURL is set, in which case it indexes EVMChain
	// (default "ethereum") from that JSON-RPC node, starting at EVMStartBlock ("head", the
	// default, or a block number). SimRate is simulated transactions per second (default 3).
	EVMRPCURL     string
	EVMChain      string
	EVMStartBlock string
	SimRate       float64
	// TokenLists and PriceCSVDir price real tokens when indexing a node: token lists in the
	// format of brave-coingecko.json and a directory of CoinGecko price exports, imported by
	// token-analytics (missing paths are skipped). The simulator serves its own market instead.
	TokenLists  []string
	PriceCSVDir string

	// randomDevKey: DevAPIKey was made up for this start (withDefaults), not given.
	randomDevKey bool
}

// simulated reports whether ingest simulates a world (no EVMRPCURL) rather than indexing a node.
func (o Options) simulated() bool { return o.EVMRPCURL == "" }

// Stack is a running platform.
type Stack struct {
	URL       string // the edge, e.g. http://127.0.0.1:8080
	APIKey    string
	Brokers   []string
	RedisURL  string
	DBURL     string
	Services  map[string]Endpoint
	done      chan struct{}
	err       error
	closeOnce sync.Once
	cleanup   []func()
	// stop cancels the services' context (the caller's ctx cancels it too).
	stop context.CancelFunc
}

// Endpoint is where a service listens.
type Endpoint struct{ HTTP, Ops string }

// Done is closed when every service has stopped.
func (s *Stack) Done() <-chan struct{} { return s.done }

// Err is why the stack stopped (nil after a requested stop); valid after Done.
func (s *Stack) Err() error { return s.err }

type unit struct {
	name    string
	migrate func(ctx context.Context) error
	run     func(ctx context.Context, deps service.Deps) error
}

// Start brings the platform up and returns once every service is serving. Cancel ctx to stop
// it; Done closes when everything has stopped.
func Start(ctx context.Context, o Options, log *slog.Logger) (*Stack, error) {
	o = o.withDefaults()
	st := &Stack{APIKey: o.DevAPIKey, DBURL: o.DatabaseURL, Services: map[string]Endpoint{}, done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			st.runCleanup()
		}
	}()

	if err := pgstore.EnsureDatabase(ctx, o.DatabaseURL); err != nil {
		return nil, err
	}
	if err := st.startBroker(ctx, o, log); err != nil {
		return nil, err
	}
	if err := st.startRedis(o, log); err != nil {
		return nil, err
	}
	httpLn, opsLn, err := st.listen(o)
	if err != nil {
		return nil, err
	}

	p := platform{o: o,
		base: service.Base{LogLevel: o.LogLevel, ShutdownTimeout: 20 * time.Second, InternalSecret: randomKey(),
			Telemetry: telemetry.Config{OTLPEndpoint: o.OTLPEndpoint, SampleRatio: 1}},
		pg:    service.Postgres{DatabaseURL: o.DatabaseURL, MaxConns: 8},
		kafka: kafkaConfig(o, st.Brokers),
		rds:   service.Redis{URL: st.RedisURL},
		url:   func(n string) string { return st.Services[n].HTTP },
		log:   log,
	}
	units, err := buildUnits(p)
	if err != nil {
		return nil, err
	}
	for _, u := range units {
		if err := u.migrate(ctx); err != nil {
			return nil, fmt.Errorf("migrate %s: %w", u.name, err)
		}
	}
	var ec edge.Config
	ec.Postgres = p.pg
	// A key made up for this start replaces the earlier starts' ones; a fixed key is re-enabled.
	if err := edge.SeedDevKey(ctx, ec, o.DevAPIKey, o.randomDevKey); err != nil {
		return nil, fmt.Errorf("seed dev API key: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	st.stop = stop
	st.run(runCtx, o, units, httpLn, opsLn)
	if err := waitReady(ctx, st); err != nil {
		// Stop what started and wait for it (each service's graceful stop, then the cleanup
		// after the last): closing the broker and Redis first would pull them from under
		// services still stopping, and imports or writes in flight would be dropped mid-way.
		stop()
		<-st.done
		return nil, err
	}
	ok = true
	return st, nil
}

// withDefaults fills in the options left empty.
func (o Options) withDefaults() Options {
	if o.HTTPAddr == "" {
		o.HTTPAddr = "127.0.0.1:8080"
	}
	if o.DatabaseURL == "" {
		o.DatabaseURL = "postgres://postgres@127.0.0.1:5432/chainintel"
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	if o.LogOutput == nil {
		o.LogOutput = os.Stderr
	}
	if o.DevAPIKey == "" {
		o.DevAPIKey, o.randomDevKey = randomKey(), true
	}
	return o
}

// kafkaConfig is the services' Kafka configuration: brokers, with the TLS and SASL of the
// options when they name the brokers.
func kafkaConfig(o Options, brokers []string) service.Kafka {
	k := service.Kafka{Brokers: brokers, Partitions: 4, ReplicationFactor: 1}
	if len(o.KafkaBrokers) > 0 {
		sec := o.Kafka
		sec.Brokers, sec.Partitions, sec.ReplicationFactor = k.Brokers, k.Partitions, k.ReplicationFactor
		k = sec
	}
	return k
}

// startBroker starts an embedded broker unless the options name one, and creates every topic
// as the services' migrate steps do (service.EnsureTopics), with the local stack's sizes.
func (s *Stack) startBroker(ctx context.Context, o Options, log *slog.Logger) error {
	s.Brokers = o.KafkaBrokers
	if len(s.Brokers) == 0 {
		b, err := eventbus.StartEmbeddedBroker(0)
		if err != nil {
			return err
		}
		s.cleanup = append(s.cleanup, b.Close)
		s.Brokers = b.Addrs()
		log.Info("embedded Kafka-protocol broker started", "addr", s.Brokers)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := eventbus.WaitForBroker(wctx, s.Brokers); err != nil {
		return err
	}
	return service.EnsureTopics(wctx, kafkaConfig(o, s.Brokers), log, eventsv1.IsCompacted, eventsv1.TopicNames()...)
}

// startRedis starts an embedded Redis-protocol server unless the options name a Redis.
func (s *Stack) startRedis(o Options, log *slog.Logger) error {
	s.RedisURL = o.RedisURL
	if s.RedisURL == "" {
		r, err := redisx.StartEmbedded()
		if err != nil {
			return err
		}
		s.cleanup = append(s.cleanup, r.Close)
		s.RedisURL = r.URL()
		log.Info("embedded Redis-protocol server started", "url", s.RedisURL)
	}
	return nil
}

// listen opens every service's HTTP and ops listeners first, so every service knows every
// other's address before any starts.
func (s *Stack) listen(o Options) (httpLn, opsLn map[string]net.Listener, err error) {
	names := []string{"edge", "transfers", "intelligence", "user-labels", "balances", "token-analytics", "stream-fanout", "ingest"}
	httpLn, opsLn = map[string]net.Listener{}, map[string]net.Listener{}
	for _, n := range names {
		addr := "127.0.0.1:0"
		if n == "edge" {
			addr = o.HTTPAddr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: listen on %s: %w (set CHAININTEL_HTTP_ADDR to a free address)", n, addr, err)
		}
		httpLn[n] = ln
		ops, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		opsLn[n] = ops
		s.Services[n] = Endpoint{HTTP: "http://" + ln.Addr().String(), Ops: "http://" + ops.Addr().String()}
	}
	s.URL = s.Services["edge"].HTTP
	return httpLn, opsLn, nil
}

// run starts every unit; when all have stopped it records why, cleans up and closes Done.
func (s *Stack) run(ctx context.Context, o Options, units []unit, httpLn, opsLn map[string]net.Listener) {
	var wg sync.WaitGroup
	errs := make(chan error, len(units))
	for _, u := range units {
		wg.Add(1)
		l := telemetry.NewLogger(o.LogOutput, u.name, o.LogLevel)
		deps := service.Deps{Logger: l, HTTPListener: httpLn[u.name], OpsListener: opsLn[u.name]}
		go func(u unit) {
			defer wg.Done()
			if err := u.run(ctx, deps); err != nil && !errors.Is(err, context.Canceled) {
				errs <- fmt.Errorf("%s: %w", u.name, err)
			}
		}(u)
	}
	go func() {
		wg.Wait()
		close(errs)
		var all []error
		for e := range errs {
			all = append(all, e)
		}
		s.err = errors.Join(all...)
		s.runCleanup()
		close(s.done)
	}()
}

func (s *Stack) runCleanup() {
	s.closeOnce.Do(func() {
		for i := len(s.cleanup) - 1; i >= 0; i-- {
			s.cleanup[i]()
		}
	})
}

// platform is what every service's configuration is built from.
type platform struct {
	o     Options
	base  service.Base
	pg    service.Postgres
	kafka service.Kafka
	rds   service.Redis
	url   func(service string) string // a service's HTTP base URL
	log   *slog.Logger
}

// unitSet collects the units and every configuration problem, to report them all at once.
type unitSet struct {
	units []unit
	errs  []error
}

func (s *unitSet) defaults(cfg any) { s.errs = append(s.errs, config.Defaults(cfg)) }

func (s *unitSet) add(name string, cfg any, migrate func(context.Context) error, run func(context.Context, service.Deps) error) {
	if v, ok := cfg.(config.Validator); ok {
		if err := v.Validate(); err != nil {
			s.errs = append(s.errs, fmt.Errorf("%s config: %w", name, err))
			return
		}
	}
	s.units = append(s.units, unit{name: name, migrate: migrate, run: run})
}

func buildUnits(p platform) ([]unit, error) {
	var us unitSet
	p.addAPIs(&us)
	p.addPipelines(&us)
	return us.units, errors.Join(us.errs...)
}

// addAPIs configures the services that answer API requests: edge, transfers, intelligence and
// user-labels.
func (p platform) addAPIs(us *unitSet) {
	var ec edge.Config
	us.defaults(&ec)
	ec.Base, ec.Postgres, ec.Kafka, ec.Redis, ec.Chains = p.base, p.pg, p.kafka, p.rds, p.o.Chains
	ec.TiersFile = p.o.TiersFile
	ec.UpstreamTransfers, ec.UpstreamIntelligence, ec.UpstreamUserLabels = p.url("transfers"), p.url("intelligence"), p.url("user-labels")
	ec.UpstreamBalances, ec.UpstreamTokenAnalytics, ec.UpstreamStreamFanout = p.url("balances"), p.url("token-analytics"), p.url("stream-fanout")
	us.add("edge", ec,
		func(ctx context.Context) error { return edge.Migrate(ctx, ec, nil) },
		func(ctx context.Context, d service.Deps) error { return edge.Run(ctx, ec, d) })

	var tc transfers.Config
	us.defaults(&tc)
	tc.Base, tc.Postgres, tc.Kafka, tc.Chains = p.base, p.pg, p.kafka, p.o.Chains
	tc.UserLabelsURL, tc.IntelligenceURL, tc.TokenAnalyticsURL = p.url("user-labels"), p.url("intelligence"), p.url("token-analytics")
	us.add("transfers", tc,
		func(ctx context.Context) error { return transfers.Migrate(ctx, tc, nil) },
		func(ctx context.Context, d service.Deps) error { return transfers.Run(ctx, tc, d) })

	var ic intelligence.Config
	us.defaults(&ic)
	ic.Base, ic.Postgres, ic.Kafka, ic.Chains = p.base, p.pg, p.kafka, p.o.Chains
	ic.UserLabelsURL, ic.TransfersURL = p.url("user-labels"), p.url("transfers")
	ic.BalancesURL = p.url("balances")
	ic.TokenAnalyticsURL = p.url("token-analytics")
	ic.HeuristicsInterval = 10 * time.Second
	us.add("intelligence", ic,
		func(ctx context.Context) error {
			if err := intelligence.Migrate(ctx, ic, nil); err != nil {
				return err
			}
			if err := seedIntelligence(ctx, ic, p.intelligenceSeeds()); err != nil {
				return err
			}
			return p.republishAttributions(ctx, ic)
		},
		func(ctx context.Context, d service.Deps) error { return intelligence.Run(ctx, ic, d) })

	var uc userlabels.Config
	us.defaults(&uc)
	uc.Base, uc.Postgres, uc.Kafka, uc.Chains = p.base, p.pg, p.kafka, p.o.Chains
	// Local webhook receivers listen on plain http://, on this machine.
	uc.AlertWebhookAllowHTTP = true
	us.add("user-labels", uc,
		func(ctx context.Context) error { return userlabels.Migrate(ctx, uc, nil) },
		func(ctx context.Context, d service.Deps) error { return userlabels.Run(ctx, uc, d) })
}

// addPipelines configures balances, token-analytics, stream-fanout and ingest.
func (p platform) addPipelines(us *unitSet) {
	var bc balances.Config
	us.defaults(&bc)
	bc.Base, bc.Postgres, bc.Kafka, bc.Chains = p.base, p.pg, p.kafka, p.o.Chains
	bc.UserLabelsURL = p.url("user-labels")
	us.add("balances", bc,
		func(ctx context.Context) error { return balances.Migrate(ctx, bc, nil) },
		func(ctx context.Context, d service.Deps) error { return balances.Run(ctx, bc, d) })

	var tac tokenanalytics.Config
	us.defaults(&tac)
	tac.Base, tac.Postgres, tac.Kafka, tac.Chains = p.base, p.pg, p.kafka, p.o.Chains
	tac.UserLabelsURL = p.url("user-labels")
	// The local world starts empty and fills within a minute: /token/top's copy, kept for up to
	// two refresh intervals, follows it at this pace instead of the service's 5 minutes.
	tac.TopRefresh = 30 * time.Second
	if p.o.simulated() {
		// One pricing path: token-analytics polls the simulator's CoinGecko-compatible feed.
		tac.PriceAPIURL = p.url("ingest") + ingest.SimMarketPath
		tac.PricePollInterval, tac.PriceRequestsPerMinute, tac.PriceHistory = 10*time.Second, 6000, 92*24*time.Hour
		// The simulated world's operator runs an exchange: a few of its coins are listed, so
		// /token/service_exchange_tokens answers entries locally as it would for such an operator.
		tac.ExchangeSpotTokens = []string{"bitcoin", "ethereum", "solana", "usd-coin"}
		tac.ExchangePerpTokens = []string{"bitcoin", "ethereum", "solana"}
	} else {
		tac.TokenLists, tac.PriceCSVs = existingPriceSources(p.o.TokenLists, p.o.PriceCSVDir, p.log)
	}
	us.add("token-analytics", tac,
		func(ctx context.Context) error { return tokenanalytics.Migrate(ctx, tac, nil) },
		func(ctx context.Context, d service.Deps) error { return tokenanalytics.Run(ctx, tac, d) })

	var sc streamfanout.Config
	us.defaults(&sc)
	sc.Base, sc.Kafka, sc.Redis, sc.Chains = p.base, p.kafka, p.rds, p.o.Chains
	sc.UserLabelsURL, sc.TokenAnalyticsURL = p.url("user-labels"), p.url("token-analytics")
	sc.TiersFile = p.o.TiersFile // the edge's table: streams and REST enforce the same tiers
	// A local stack's webhooks are on this machine or its network (STREAM_ALERT_WEBHOOK_ALLOW_PRIVATE).
	sc.AlertWebhookAllowPrivate = true
	us.add("stream-fanout", sc,
		func(ctx context.Context) error { return streamfanout.Migrate(ctx, sc, nil) },
		func(ctx context.Context, d service.Deps) error { return streamfanout.Run(ctx, sc, d) })

	var gc ingest.Config
	us.defaults(&gc)
	gc.Base, gc.Postgres, gc.Kafka, gc.Chains = p.base, p.pg, p.kafka, p.o.Chains
	if !p.o.simulated() {
		gc.Mode, gc.EVMRPCURL = ingest.ModeEVM, p.o.EVMRPCURL
		gc.TokenAnalyticsURL = p.url("token-analytics") // the prices the broker no longer holds
		if p.o.EVMChain != "" {
			gc.EVMChain = p.o.EVMChain
		}
		if p.o.EVMStartBlock != "" {
			gc.EVMStartBlock = p.o.EVMStartBlock
		}
	}
	if p.o.SimRate > 0 {
		gc.SimRate = p.o.SimRate
	}
	gc.SimMarketFeed = p.o.simulated()
	us.add("ingest", gc,
		func(ctx context.Context) error { return ingest.Migrate(ctx, gc, nil) },
		func(ctx context.Context, d service.Deps) error { return ingest.Run(ctx, gc, d) })
}

// existingPriceSources keeps the token lists that exist and lists the price exports in dir,
// warning of each configured source that cannot be read: without them a node's transfers and
// balances carry no USD values, and the warning says why.
func existingPriceSources(lists []string, dir string, log *slog.Logger) (tokenLists, csvs []string) {
	for _, l := range lists {
		if _, err := os.Stat(l); err != nil {
			log.Warn("token list not found: tokens it lists get no pricing id (CHAININTEL_TOKEN_LISTS)", "path", l, "error", err)
			continue
		}
		tokenLists = append(tokenLists, l)
	}
	if dir != "" {
		var err error
		if csvs, err = tokenanalytics.PriceCSVsIn(dir); err != nil || len(csvs) == 0 {
			log.Warn("no daily price exports read: nothing is priced from them (CHAININTEL_PRICE_CSV_DIR)", "dir", dir, "error", err)
		}
	}
	return tokenLists, csvs
}

// waitReady polls every service's readiness probe.
func waitReady(ctx context.Context, st *Stack) error {
	deadline := time.Now().Add(60 * time.Second)
	for name, ep := range st.Services {
		for {
			err := probe(ctx, ep.Ops+"/readyz")
			if err == nil {
				break
			}
			select {
			case <-st.done:
				return fmt.Errorf("stack stopped while starting: %w", st.err)
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not ready after 60s: %w", name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func randomKey() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "ci_dev_" + base64.RawURLEncoding.EncodeToString(b[:])
}
