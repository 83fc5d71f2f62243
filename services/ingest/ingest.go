// Package ingest indexes EVM chains (or simulates a world) and publishes chain data on the chain.* topics.
//
// INGEST_MODE=simulate (the default) runs the simulator (package sim) at INGEST_SIM_RATE
// transactions per second; it also publishes the token registry and prices, or serves them as a
// CoinGecko-compatible API for token-analytics to poll (INGEST_SIM_MARKET_FEED). INGEST_MODE=evm
// follows one chain (INGEST_EVM_CHAIN) through a JSON-RPC node (INGEST_EVM_RPC_URL).
package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/config"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/indexer"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	"github.com/chainintel/chainintel/services/ingest/internal/store"
	"github.com/chainintel/chainintel/services/ingest/migrations"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	"github.com/chainintel/chainintel/sim"
	"github.com/gin-gonic/gin"
)

// Name is the service name.
const Name = "ingest"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// Modes of INGEST_MODE.
const (
	ModeSimulate = config.ModeSimulate
	ModeEVM      = config.ModeEVM
)

// LoadConfig reads the configuration from INGEST_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Topics are the topics ingest produces or consumes: `ingest migrate` creates those missing
// (service.EnsureTopics), so the service never depends on the brokers auto-creating them.
var Topics = []string{eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicSwaps, eventsv1.TopicBalances, eventsv1.TopicReorgs, eventsv1.TopicBlocks, eventsv1.TopicTokens, eventsv1.TopicContracts, eventsv1.TopicMarketTokens, eventsv1.TopicPrices}

// Migrate applies the ingest schema's migrations and creates the missing Topics.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log); err != nil {
		return err
	}
	return service.EnsureTopics(ctx, cfg.Kafka, log, eventsv1.IsCompacted, Topics...)
}

// SimConfig is the simulator configuration cfg describes, with the simulated clock starting
// SimHistory before now. Worlds built from the same cfg have the same entities and addresses
// whatever now is, so another process can rebuild the running world's curated data and ground
// truth with sim.New(ingest.SimConfig(cfg, time.Now())).
func SimConfig(cfg Config, now time.Time) sim.Config {
	return sim.Config{Seed: cfg.SimSeed, Chains: cfg.Chains, Start: now.Add(-cfg.SimHistory).Truncate(time.Minute)}
}

// Commands are the binary's extra subcommands: `sim-curated` prints the curated.json (operator
// format, docs/contracts.md) of the world the simulator runs with this configuration, for
// `intelligence import curated -` (the local stack imports it itself; docs/kubernetes.md pipes
// it from the simulator's pod into intelligence's on kind).
var Commands = map[string]service.Command[Config]{
	"sim-curated": func(_ context.Context, cfg Config, _ *slog.Logger, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("sim-curated takes no arguments, got %q", args)
		}
		return WriteSimCurated(os.Stdout, cfg)
	},
}

// WriteSimCurated writes the curated.json of the world cfg simulates (SimConfig: the same
// entities and addresses whenever it is built).
func WriteSimCurated(w io.Writer, cfg Config) error {
	world, err := sim.New(SimConfig(cfg, time.Now()))
	if err != nil {
		return fmt.Errorf("simulated world: %w", err)
	}
	_, err = w.Write(world.Curated())
	return err
}

// Run serves until ctx ends.
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
	// Many events per Publish call; a partition batch stays at 1,000 records so it fits under
	// the broker's default 1 MiB message.max.bytes (chain events are 300–600 bytes with headers).
	pub := s.Publisher(eventbus.PublisherOptions{BatchSize: 1000, BatchTimeout: 5 * time.Millisecond})

	var feed *sim.MarketFeed
	switch cfg.Mode {
	case ModeSimulate:
		w, rc, err := resumeSim(ctx, cfg, store.New(pool), s.Log)
		if err != nil {
			return err
		}
		if cfg.SimOutputDir != "" {
			if err := w.WriteFiles(cfg.SimOutputDir); err != nil {
				return err
			}
			s.Log.Info("simulator wrote curated.json and ground_truth.csv", "dir", cfg.SimOutputDir)
		}
		if cfg.SimMarketFeed {
			feed = sim.NewMarketFeed()
			rc.OnBatch, rc.NoMarketEvents = feed.Record, true
		}
		r := sim.NewRunner(w, pub, rc, s.Log)
		s.Add(lifecycle.Part{Name: "simulator", Run: r.Run})
		s.Log.Info("simulating", "chains", w.Chains(), "rate_tx_per_s", cfg.SimRate, "seed", cfg.SimSeed)
	case ModeEVM:
		if err := addIndexer(ctx, s, cfg, store.New(pool), pub); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown INGEST_MODE %q", cfg.Mode)
	}
	e := s.Engine()
	if feed != nil {
		e.GET(SimMarketPath+"/*path", gin.WrapH(http.StripPrefix(SimMarketPath, feed.Handler())))
	}
	return s.Run(ctx, e)
}

// SimMarketPath is where ingest serves the simulated market's CoinGecko-compatible API
// (INGEST_SIM_MARKET_FEED): a price source base URL is the ingest address plus this path.
const SimMarketPath = "/sim/coingecko/api/v3"

func addIndexer(ctx context.Context, s *service.Service, cfg Config, st *store.Store, pub *eventbus.Publisher) error {
	chain, _ := chains.Lookup(cfg.EVMChain)
	start, err := cfg.StartBlock()
	if err != nil {
		return fmt.Errorf("INGEST_EVM_START_BLOCK: %w", err)
	}
	client, err := evm.Dial(ctx, cfg.EVMRPCURL, evm.ClientOptions{MaxBatch: cfg.EVMRPCBatch, Timeout: cfg.EVMRPCTimeout, Logger: s.Log})
	if err != nil {
		return err
	}
	s.OnStop("json-rpc client", func(context.Context) error { client.Close(); return nil })
	// The registry and prices are read whole at every start: a group of its own per process.
	mk := market.New()
	if cfg.TokenAnalyticsURL != "" {
		tc, err := taclient.New(cfg.TokenAnalyticsURL, s.Signer, s.Tel.TracerProvider)
		if err != nil {
			return fmt.Errorf("INGEST_TOKEN_ANALYTICS_URL: %w", err)
		}
		mk.SetSource(tc)
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	group := func(topic string) func(*eventbus.ConsumerOptions) {
		return func(o *eventbus.ConsumerOptions) {
			o.Group = fmt.Sprintf("%s.%s.%s.%s", Name, chain.Name, topic, hex.EncodeToString(nonce[:]))
			o.MaxBatch = 5000
		}
	}
	service.Consume(s, eventsv1.TopicMarketTokens, func() *eventsv1.MarketToken { return &eventsv1.MarketToken{} }, mk.HandleTokens, group(eventsv1.TopicMarketTokens))
	service.Consume(s, eventsv1.TopicPrices, func() *eventsv1.Price { return &eventsv1.Price{} }, mk.HandlePrices, group(eventsv1.TopicPrices))
	idx := indexer.New(indexer.Config{
		Chain: chain, Confirmations: cfg.EVMConfirmations, StartBlock: start, BatchBlocks: cfg.EVMBatchBlocks,
		PollInterval: cfg.EVMPollInterval, ReorgWindow: cfg.EVMReorgWindow, Balances: cfg.EVMBalances, ContractFlags: cfg.EVMContractFlags,
		Traces: indexer.TracesMode(cfg.EVMTraces), CodeRecheck: cfg.EVMCodeRecheck, Meter: s.Tel.MeterProvider.Meter("chainintel/ingest"), ProgressInterval: cfg.EVMProgressInterval,
	}, client, st, mk, pub, s.Log)
	s.Add(lifecycle.Part{Name: "evm indexer", Run: func(ctx context.Context) error {
		if !waitPriceOwner(ctx, mk, s.Log, idx.RecordFailing) {
			return nil
		}
		select {
		case <-mk.Received():
			// Let the rest of what is already on the topics arrive.
			select {
			case <-time.After(min(time.Second, cfg.EVMMarketWait)):
			case <-ctx.Done():
			}
		case <-time.After(cfg.EVMMarketWait):
			s.Log.Warn("no token registry or prices yet; transfers carry no USD values until they arrive", "waited", cfg.EVMMarketWait)
		case <-ctx.Done():
			return nil
		}
		if id, err := client.ChainID(ctx); err == nil && chain.EVMChainID != 0 && int64(id) != chain.EVMChainID {
			s.Log.Warn("the node's chain id differs from the configured chain's", "node_chain_id", id, "chain", chain.Name, "want", chain.EVMChainID)
		}
		s.Log.Info("indexing", "chain", chain.Name, "start", cfg.EVMStartBlock, "confirmations", cfg.EVMConfirmations)
		return idx.Run(ctx)
	}})
	return nil
}

// waitPriceOwner waits, with backoff, until the price history's owner answers (its imports at
// start done): the registry those imports bring is on market.tokens.v1 by then, so the first
// blocks find their tokens' pricing ids. It reports false when ctx ended first. Each try that
// finds it not answering is recorded as a failed round (record: ingest_failing_rounds), so the
// alert on failing rounds fires while nothing is indexed, and past a minute the wait is logged
// at error level, so /status lastError and `chainintel status` show why.
func waitPriceOwner(ctx context.Context, mk *market.Model, log *slog.Logger, record func(context.Context, int64)) bool {
	start, wait := time.Now(), time.Second
	for tries := int64(1); ; tries++ {
		err := mk.Ready(ctx)
		if err == nil {
			record(ctx, 0)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		record(ctx, tries)
		level := slog.LevelWarn
		if time.Since(start) > time.Minute {
			level = slog.LevelError
		}
		log.Log(ctx, level, "token-analytics does not answer prices yet; indexing waits (INGEST_TOKEN_ANALYTICS_URL empty indexes without it)",
			"error", err, "waited", time.Since(start).Round(time.Second), "retry_in", wait)
		if !lifecycle.Sleep(ctx, wait) {
			return false
		}
		wait = min(wait*2, 30*time.Second)
	}
}
