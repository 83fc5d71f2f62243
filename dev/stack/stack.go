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
	HTTPAddr     string    // edge address; default 127.0.0.1:8080
	DevAPIKey    string    // default: random
	DatabaseURL  string    // default postgres://postgres@127.0.0.1:5432/chainintel
	KafkaBrokers []string  // default: an embedded broker
	RedisURL     string    // default: an embedded Redis-protocol server
	LogLevel     string    // services' log level; default "warn"
	OTLPEndpoint string    // export traces and metrics of every service here; default off
	Chains       []string  // default: every chain
	LogOutput    io.Writer // services' JSON logs; default os.Stderr
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
}

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
		o.DevAPIKey = randomKey()
	}
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

	st.Brokers = o.KafkaBrokers
	if len(st.Brokers) == 0 {
		b, err := eventbus.StartEmbeddedBroker(0)
		if err != nil {
			return nil, err
		}
		st.cleanup = append(st.cleanup, b.Close)
		st.Brokers = b.Addrs()
		log.Info("embedded Kafka-protocol broker started", "addr", st.Brokers)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := eventbus.WaitForBroker(wctx, st.Brokers); err != nil {
		return nil, err
	}
	var specs []eventbus.TopicSpec
	for _, t := range eventsv1.Topics {
		specs = append(specs, eventbus.TopicSpec{Name: t.Name, Partitions: 4, Compacted: t.Compacted})
	}
	if err := eventbus.EnsureTopics(wctx, st.Brokers, 1, specs); err != nil {
		return nil, err
	}

	st.RedisURL = o.RedisURL
	if st.RedisURL == "" {
		r, err := redisx.StartEmbedded()
		if err != nil {
			return nil, err
		}
		st.cleanup = append(st.cleanup, r.Close)
		st.RedisURL = r.URL()
		log.Info("embedded Redis-protocol server started", "url", st.RedisURL)
	}

	// Listeners first, so every service knows every other's address before any starts.
	names := []string{"edge", "transfers", "intelligence", "user-labels", "balances", "token-analytics", "stream-fanout", "ingest"}
	httpLn := map[string]net.Listener{}
	opsLn := map[string]net.Listener{}
	for _, n := range names {
		addr := "127.0.0.1:0"
		if n == "edge" {
			addr = o.HTTPAddr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("%s: listen on %s: %w (set CHAININTEL_HTTP_ADDR to a free address)", n, addr, err)
		}
		httpLn[n] = ln
		ops, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		opsLn[n] = ops
		st.Services[n] = Endpoint{HTTP: "http://" + ln.Addr().String(), Ops: "http://" + ops.Addr().String()}
	}
	st.URL = st.Services["edge"].HTTP

	base := service.Base{LogLevel: o.LogLevel, ShutdownTimeout: 20 * time.Second, InternalSecret: randomKey(),
		Telemetry: telemetry.Config{OTLPEndpoint: o.OTLPEndpoint, SampleRatio: 1}}
	pg := service.Postgres{DatabaseURL: o.DatabaseURL, MaxConns: 8}
	kafka := service.Kafka{Brokers: st.Brokers, Partitions: 4, ReplicationFactor: 1}
	rds := service.Redis{URL: st.RedisURL}
	url := func(n string) string { return st.Services[n].HTTP }

	units, err := buildUnits(o, base, pg, kafka, rds, url)
	if err != nil {
		return nil, err
	}
	for _, u := range units {
		if err := u.migrate(ctx); err != nil {
			return nil, fmt.Errorf("migrate %s: %w", u.name, err)
		}
	}
	var ec edge.Config
	ec.Postgres = pg
	if err := edge.SeedDevKey(ctx, ec, o.DevAPIKey); err != nil {
		return nil, fmt.Errorf("seed dev API key: %w", err)
	}

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
		st.err = errors.Join(all...)
		st.runCleanup()
		close(st.done)
	}()
	if err := waitReady(ctx, st); err != nil {
		return nil, err
	}
	ok = true
	return st, nil
}

func (s *Stack) runCleanup() {
	s.closeOnce.Do(func() {
		for i := len(s.cleanup) - 1; i >= 0; i-- {
			s.cleanup[i]()
		}
	})
}

func buildUnits(o Options, base service.Base, pg service.Postgres, kafka service.Kafka, rds service.Redis, url func(string) string) ([]unit, error) {
	var units []unit
	add := func(name string, cfg any, migrate func(context.Context) error, run func(context.Context, service.Deps) error) error {
		if v, ok := cfg.(config.Validator); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("%s config: %w", name, err)
			}
		}
		units = append(units, unit{name: name, migrate: migrate, run: run})
		return nil
	}
	var errs []error

	var ec edge.Config
	errs = append(errs, config.Defaults(&ec))
	ec.Base, ec.Postgres, ec.Kafka, ec.Redis, ec.Chains = base, pg, kafka, rds, o.Chains
	ec.UpstreamTransfers, ec.UpstreamIntelligence, ec.UpstreamUserLabels = url("transfers"), url("intelligence"), url("user-labels")
	ec.UpstreamBalances, ec.UpstreamTokenAnalytics, ec.UpstreamStreamFanout = url("balances"), url("token-analytics"), url("stream-fanout")
	errs = append(errs, add("edge", ec,
		func(ctx context.Context) error { return edge.Migrate(ctx, ec, nil) },
		func(ctx context.Context, d service.Deps) error { return edge.Run(ctx, ec, d) }))

	var tc transfers.Config
	errs = append(errs, config.Defaults(&tc))
	tc.Base, tc.Postgres, tc.Kafka, tc.Chains = base, pg, kafka, o.Chains
	tc.UserLabelsURL = url("user-labels")
	errs = append(errs, add("transfers", tc,
		func(ctx context.Context) error { return transfers.Migrate(ctx, tc, nil) },
		func(ctx context.Context, d service.Deps) error { return transfers.Run(ctx, tc, d) }))

	var ic intelligence.Config
	errs = append(errs, config.Defaults(&ic))
	ic.Base, ic.Postgres, ic.Kafka, ic.Chains = base, pg, kafka, o.Chains
	ic.UserLabelsURL, ic.TransfersURL = url("user-labels"), url("transfers")
	ic.BalancesURL = url("balances")
	ic.TokenAnalyticsURL = url("token-analytics")
	ic.HeuristicsInterval = 10 * time.Second
	errs = append(errs, add("intelligence", ic,
		func(ctx context.Context) error {
			if err := intelligence.Migrate(ctx, ic, nil); err != nil {
				return err
			}
			return seedIntelligence(ctx, ic, o.Chains)
		},
		func(ctx context.Context, d service.Deps) error { return intelligence.Run(ctx, ic, d) }))

	var uc userlabels.Config
	errs = append(errs, config.Defaults(&uc))
	uc.Base, uc.Postgres, uc.Kafka, uc.Chains = base, pg, kafka, o.Chains
	errs = append(errs, add("user-labels", uc,
		func(ctx context.Context) error { return userlabels.Migrate(ctx, uc, nil) },
		func(ctx context.Context, d service.Deps) error { return userlabels.Run(ctx, uc, d) }))

	var bc balances.Config
	errs = append(errs, config.Defaults(&bc))
	bc.Base, bc.Postgres, bc.Kafka, bc.Chains = base, pg, kafka, o.Chains
	bc.UserLabelsURL = url("user-labels")
	errs = append(errs, add("balances", bc,
		func(ctx context.Context) error { return balances.Migrate(ctx, bc, nil) },
		func(ctx context.Context, d service.Deps) error { return balances.Run(ctx, bc, d) }))

	var tac tokenanalytics.Config
	errs = append(errs, config.Defaults(&tac))
	tac.Base, tac.Postgres, tac.Kafka, tac.Chains = base, pg, kafka, o.Chains
	tac.UserLabelsURL = url("user-labels")
	if o.EVMRPCURL == "" {
		// One pricing path: token-analytics polls the simulator's CoinGecko-compatible feed.
		tac.PriceAPIURL = url("ingest") + ingest.SimMarketPath
		tac.PricePollInterval, tac.PriceRequestsPerMinute, tac.PriceHistory = 10*time.Second, 6000, 92*24*time.Hour
	} else {
		tac.TokenLists, tac.PriceCSVs = existingPriceSources(o.TokenLists, o.PriceCSVDir)
	}
	errs = append(errs, add("token-analytics", tac,
		func(ctx context.Context) error { return tokenanalytics.Migrate(ctx, tac, nil) },
		func(ctx context.Context, d service.Deps) error { return tokenanalytics.Run(ctx, tac, d) }))

	var sc streamfanout.Config
	errs = append(errs, config.Defaults(&sc))
	sc.Base, sc.Kafka, sc.Redis, sc.Chains = base, kafka, rds, o.Chains
	sc.UserLabelsURL = url("user-labels")
	errs = append(errs, add("stream-fanout", sc,
		func(ctx context.Context) error { return streamfanout.Migrate(ctx, sc, nil) },
		func(ctx context.Context, d service.Deps) error { return streamfanout.Run(ctx, sc, d) }))

	var gc ingest.Config
	errs = append(errs, config.Defaults(&gc))
	gc.Base, gc.Postgres, gc.Kafka, gc.Chains = base, pg, kafka, o.Chains
	if o.EVMRPCURL != "" {
		gc.Mode, gc.EVMRPCURL = ingest.ModeEVM, o.EVMRPCURL
		if o.EVMChain != "" {
			gc.EVMChain = o.EVMChain
		}
		if o.EVMStartBlock != "" {
			gc.EVMStartBlock = o.EVMStartBlock
		}
	}
	if o.SimRate > 0 {
		gc.SimRate = o.SimRate
	}
	gc.SimMarketFeed = o.EVMRPCURL == ""
	errs = append(errs, add("ingest", gc,
		func(ctx context.Context) error { return ingest.Migrate(ctx, gc, nil) },
		func(ctx context.Context, d service.Deps) error { return ingest.Run(ctx, gc, d) }))

	return units, errors.Join(errs...)
}

// existingPriceSources keeps the token lists that exist and lists the price exports in dir.
func existingPriceSources(lists []string, dir string) (tokenLists, csvs []string) {
	for _, l := range lists {
		if _, err := os.Stat(l); err == nil {
			tokenLists = append(tokenLists, l)
		}
	}
	if dir != "" {
		csvs, _ = tokenanalytics.PriceCSVsIn(dir)
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
