// Package config is the ingest service's configuration, read from INGEST_* environment
// variables.
package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
)

// Prefix of every ingest environment variable.
const Prefix = "INGEST_"

// Modes.
const (
	ModeSimulate = "simulate"
	ModeEVM      = "evm"
)

// Config is the ingest service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all. In simulate mode these
	// are the simulated chains (empty: the simulator's default set).
	Chains []string `env:"CHAINS" envSeparator:","`

	// Mode is "simulate" (a synthetic world) or "evm" (a JSON-RPC node).
	Mode string `env:"MODE" envDefault:"simulate"`

	// Simulator.
	SimSeed int64 `env:"SIM_SEED" envDefault:"1"`
	// SimRate is simulated transactions per second (about 1.2 transfers each).
	SimRate float64 `env:"SIM_RATE" envDefault:"3"`
	// SimHistory is how far back the simulated clock starts; SimHistoryTxs transactions are
	// spread over it at start, before live generation.
	SimHistory    time.Duration `env:"SIM_HISTORY" envDefault:"72h"`
	SimHistoryTxs int           `env:"SIM_HISTORY_TXS" envDefault:"3000"`
	// SimOutputDir, when set, receives curated.json and ground_truth.csv.
	SimOutputDir string `env:"SIM_OUTPUT_DIR"`
	// SimPublishBatch is the most events per Publish call.
	SimPublishBatch int `env:"SIM_PUBLISH_BATCH" envDefault:"2000"`
	// SimMarketFeed serves the simulated market as a CoinGecko-compatible API under
	// SimMarketPath on the HTTP port instead of publishing market.tokens.v1 and market.prices.v1,
	// for token-analytics to poll (one pricing path for simulated and real markets).
	SimMarketFeed bool `env:"SIM_MARKET_FEED" envDefault:"false"`

	// EVM indexer (one chain per deployment).
	EVMChain  string `env:"EVM_CHAIN" envDefault:"ethereum"`
	EVMRPCURL string `env:"EVM_RPC_URL" secret:"true"` // often carries an API key in its path
	// EVMStartBlock is "head" (start at the confirmed head) or a block number; it only applies
	// while the chain has no cursor.
	EVMStartBlock    string        `env:"EVM_START_BLOCK" envDefault:"head"`
	EVMConfirmations uint64        `env:"EVM_CONFIRMATIONS" envDefault:"12"`
	EVMBatchBlocks   int           `env:"EVM_BATCH_BLOCKS" envDefault:"10"`
	EVMPollInterval  time.Duration `env:"EVM_POLL_INTERVAL" envDefault:"2s"`
	EVMReorgWindow   uint64        `env:"EVM_REORG_WINDOW" envDefault:"128"`
	EVMRPCBatch      int           `env:"EVM_RPC_BATCH" envDefault:"100"`
	EVMRPCTimeout    time.Duration `env:"EVM_RPC_TIMEOUT" envDefault:"30s"`
	EVMBalances      bool          `env:"EVM_BALANCES" envDefault:"true"`
	EVMContractFlags bool          `env:"EVM_CONTRACT_FLAGS" envDefault:"true"`
	// EVMTraces reads call traces for internal transfers (native value moved by contract
	// calls) and their parties' balances: "on" (the node must serve debug_traceBlockByHash
	// with the callTracer, or the service does not start), "off", or "auto" (on when the node
	// serves it at start).
	EVMTraces string `env:"EVM_TRACES" envDefault:"auto"`
	// EVMCodeRecheck is how long, in chain time, an address found without code keeps that answer
	// before a transfer naming it has it read again (code can appear at an address already paid).
	EVMCodeRecheck time.Duration `env:"EVM_CODE_RECHECK" envDefault:"3m"`
	// EVMMarketWait is how long the indexer waits at start for the token registry and prices
	// to arrive before ingesting (blocks ingested without them carry no USD values).
	EVMMarketWait time.Duration `env:"EVM_MARKET_WAIT" envDefault:"5s"`
	// TokenAnalyticsURL is the internal API of the price history's owner (token-analytics),
	// asked in evm mode for the prices a block needs that the market book, filled from
	// market.prices.v1, lacks (POST /internal/prices/window); blocks wait while it cannot
	// answer or is still importing. Empty: only the book prices blocks.
	TokenAnalyticsURL string `env:"TOKEN_ANALYTICS_URL" envDefault:"http://token-analytics:8080" envEmpty:"off"`
	// EVMProgressInterval is how often the indexer logs its progress (blocks/s, transfers/s,
	// blocks behind the head, ETA) and updates the progress_* gauges.
	EVMProgressInterval time.Duration `env:"EVM_PROGRESS_INTERVAL" envDefault:"10s"`
}

// StartBlock parses EVMStartBlock: nil for "head".
func (c Config) StartBlock() (*uint64, error) {
	s := strings.TrimSpace(c.EVMStartBlock)
	if s == "" || strings.EqualFold(s, "head") {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("INGEST_CHAINS: %v", err)
	}
	switch c.Mode {
	case ModeSimulate:
		if c.SimRate <= 0 {
			p.Addf("INGEST_SIM_RATE must be positive (transactions per second)")
		}
		if c.SimHistory < 0 || c.SimHistoryTxs < 0 {
			p.Addf("INGEST_SIM_HISTORY and INGEST_SIM_HISTORY_TXS must not be negative")
		}
		if c.SimPublishBatch <= 0 {
			p.Addf("INGEST_SIM_PUBLISH_BATCH must be positive")
		}
	case ModeEVM:
		if c.EVMRPCURL == "" {
			p.Addf("INGEST_EVM_RPC_URL is required in evm mode")
		}
		if ch, ok := chains.Lookup(c.EVMChain); !ok || ch.Type != chains.TypeEVM {
			p.Addf("INGEST_EVM_CHAIN %q is not an EVM chain of the catalogue", c.EVMChain)
		}
		if _, err := c.StartBlock(); err != nil {
			p.Addf("INGEST_EVM_START_BLOCK %q: want \"head\" or a block number", c.EVMStartBlock)
		}
		if c.EVMBatchBlocks <= 0 || c.EVMBatchBlocks > 1000 {
			p.Addf("INGEST_EVM_BATCH_BLOCKS must be between 1 and 1000")
		}
		if c.EVMReorgWindow < 2 {
			p.Addf("INGEST_EVM_REORG_WINDOW must be at least 2")
		}
		if c.EVMPollInterval <= 0 {
			p.Addf("INGEST_EVM_POLL_INTERVAL must be positive")
		}
		if c.EVMCodeRecheck <= 0 {
			p.Addf("INGEST_EVM_CODE_RECHECK must be positive")
		}
		if c.EVMTraces != "auto" && c.EVMTraces != "on" && c.EVMTraces != "off" { // indexer.TracesMode
			p.Addf("INGEST_EVM_TRACES %q: want auto, on or off", c.EVMTraces)
		}
		if c.EVMRPCBatch <= 0 {
			p.Addf("INGEST_EVM_RPC_BATCH must be positive")
		}
	default:
		p.Addf("INGEST_MODE %q: want %q or %q", c.Mode, ModeSimulate, ModeEVM)
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
