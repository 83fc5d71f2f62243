// Package config is the intelligence service's configuration, read from INTEL_* environment
// variables.
package config

import (
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
)

// Prefix of every intelligence environment variable.
const Prefix = "INTEL_"

// Config is the intelligence service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`

	// UserLabelsURL and TransfersURL are the internal APIs asked for callers' labels and for
	// user-entity activity.
	UserLabelsURL string `env:"USER_LABELS_URL" envDefault:"http://user-labels:8080" envEmpty:"off"`
	TransfersURL  string `env:"TRANSFERS_URL" envDefault:"http://transfers:8080"`
	// BalancesURL is the internal API asked for the USD balances of entity summaries and
	// predictions; empty leaves them unpriced (0 in summaries, the service's own kept balances
	// for predictions).
	BalancesURL string `env:"BALANCES_URL" envDefault:"http://balances:8080" envEmpty:"off"`
	// TokenAnalyticsURL is the internal API of the token registry and prices' owner, asked for
	// /intelligence/token; empty answers from the local copy of market.tokens.v1 and prices.
	TokenAnalyticsURL string `env:"TOKEN_ANALYTICS_URL" envDefault:"http://token-analytics:8080" envEmpty:"off"`

	// CacheRefresh is how often the in-memory attribution cache picks up changes;
	// PublishInterval how often the outbox relay publishes them.
	CacheRefresh    time.Duration `env:"CACHE_REFRESH" envDefault:"250ms"`
	PublishInterval time.Duration `env:"PUBLISH_INTERVAL" envDefault:"250ms"`

	// Heuristics (docs/intelligence.md).
	HeuristicsInterval time.Duration `env:"HEURISTICS_INTERVAL" envDefault:"30s"`
	ExchangeTypes      []string      `env:"EXCHANGE_TYPES" envSeparator:"," envDefault:"cex"`
	DepositMinSenders  int           `env:"DEPOSIT_MIN_SENDERS" envDefault:"1"`
	DepositSweepShare  float64       `env:"DEPOSIT_SWEEP_SHARE" envDefault:"0.8"`
	EdgeRetention      time.Duration `env:"EDGE_RETENTION" envDefault:"0s"`

	// ClusterSummaryMaxMembers is the most members /cluster/{id}/summary covers; a larger
	// cluster's summary is a 400 (docs/intelligence.md).
	ClusterSummaryMaxMembers int `env:"CLUSTER_SUMMARY_MAX_MEMBERS" envDefault:"10000"`

	// RiskParallel is how many addresses one risk call (an entity's, a batch's) scores at once,
	// each a graph search of a few statements on its own connection.
	RiskParallel int `env:"RISK_PARALLEL" envDefault:"4"`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("INTEL_CHAINS: %v", err)
	}
	if c.CacheRefresh <= 0 || c.PublishInterval <= 0 || c.HeuristicsInterval <= 0 {
		p.Addf("INTEL_CACHE_REFRESH, INTEL_PUBLISH_INTERVAL and INTEL_HEURISTICS_INTERVAL must be positive")
	}
	if c.DepositMinSenders < 1 {
		p.Addf("INTEL_DEPOSIT_MIN_SENDERS must be at least 1")
	}
	if !(c.DepositSweepShare > 0 && c.DepositSweepShare <= 1) {
		p.Addf("INTEL_DEPOSIT_SWEEP_SHARE must be in (0, 1]")
	}
	if c.ClusterSummaryMaxMembers < 1 {
		p.Addf("INTEL_CLUSTER_SUMMARY_MAX_MEMBERS must be at least 1")
	}
	if c.RiskParallel < 1 {
		p.Addf("INTEL_RISK_PARALLEL must be at least 1")
	}
	if len(c.ExchangeTypes) == 0 {
		p.Addf("INTEL_EXCHANGE_TYPES must name at least one entity type")
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
