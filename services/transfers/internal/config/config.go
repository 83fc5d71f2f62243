// Package config is the transfers service's configuration, read from TRANSFERS_* environment
// variables.
package config

import (
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// Prefix of every transfers environment variable.
const Prefix = "TRANSFERS_"

// Config is the transfers service's configuration. The store's settings (GroupRollupsAbove,
// Rollups, RollupLagMax, AttributionCache) default to store.DefaultOptions' values
// (TestStoreDefaults keeps the two equal), so the service, its benches and tests run the store
// alike; StoreOptions turns them into the store's Options.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`

	// UserLabelsURL is the user-labels service's base URL; empty disables callers' own labels
	// and user entities.
	UserLabelsURL string `env:"USER_LABELS_URL" envDefault:"http://user-labels:8080" envEmpty:"off"`
	// UserLabelsCacheTTL is how long a caller's labels of an address are reused at most: changes
	// (user.changes.v1) drop them at once, this bounds staleness while those events are late.
	UserLabelsCacheTTL time.Duration `env:"USER_LABELS_CACHE_TTL" envDefault:"60s"`
	// IntelligenceURL is the intelligence service's base URL, asked for the tags of
	// counterparties (/counterparties' tags filter); empty makes that filter a 400.
	IntelligenceURL string `env:"INTELLIGENCE_URL" envDefault:"http://intelligence:8080" envEmpty:"off"`
	// TokenAnalyticsURL is the token registry's (token-analytics) base URL, asked whether the
	// tokens filter's pricing ids exist (an unknown one is a 404); empty, or the registry
	// unavailable, takes every pricing id (app.TokenOptions).
	TokenAnalyticsURL string `env:"TOKEN_ANALYTICS_URL" envDefault:"http://token-analytics:8080" envEmpty:"off"`
	// ConsumerBatch is the most chain records written in one transaction.
	ConsumerBatch int `env:"CONSUMER_BATCH" envDefault:"2000"`
	// GroupRollupsAbove is the number of addresses above which an attribution group (an entity,
	// its deposit addresses, an entity type) keeps its own rollups; smaller groups are summed
	// over their addresses at query time. `migrate` builds groups that grew past a lowered value.
	GroupRollupsAbove int `env:"GROUP_ROLLUPS_ABOVE" envDefault:"64"`
	// Rollups is "queued" (a write stores its rows and queues them; each replica's rollup
	// worker applies the queue in the background) or "inline" (a write applies the queue before
	// its offsets are committed: slower, but a read after a write sees it in every rollup).
	Rollups string `env:"ROLLUPS" envDefault:"queued"`
	// RollupLagMax bounds the queue: a write that finds more rows queued than this applies as
	// many as it wrote itself, so ingest slows to what the rollups keep up with. 0: no bound.
	RollupLagMax int64 `env:"ROLLUP_LAG_MAX" envDefault:"500000"`
	// RollupPoll is how often the rollup worker looks for rows other replicas queued (or, inline,
	// rows a write queued but failed to apply).
	RollupPoll time.Duration `env:"ROLLUP_POLL" envDefault:"1s"`
	// AttributionCache is how many addresses' attributions each replica keeps in process for
	// rendering (about 300 bytes each); a change log keeps them exact. 0 keeps none.
	AttributionCache int `env:"ATTRIBUTION_CACHE" envDefault:"200000"`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if c.UserLabelsCacheTTL < 0 {
		p.Addf("TRANSFERS_USER_LABELS_CACHE_TTL must not be negative")
	}
	if c.ConsumerBatch < 1 || c.ConsumerBatch > 50000 {
		p.Addf("TRANSFERS_CONSUMER_BATCH must be between 1 and 50000")
	}
	if c.AttributionCache < 0 || c.AttributionCache > 50_000_000 {
		p.Addf("TRANSFERS_ATTRIBUTION_CACHE must be between 0 and 50000000")
	}
	if c.Rollups != "queued" && c.Rollups != "inline" {
		p.Addf("TRANSFERS_ROLLUPS must be queued or inline, not %q", c.Rollups)
	}
	if c.RollupLagMax < 0 {
		p.Addf("TRANSFERS_ROLLUP_LAG_MAX must not be negative")
	}
	if c.RollupPoll <= 0 {
		p.Addf("TRANSFERS_ROLLUP_POLL must be positive")
	}
	if c.GroupRollupsAbove < 0 {
		p.Addf("TRANSFERS_GROUP_ROLLUPS_ABOVE must not be negative")
	}
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("TRANSFERS_CHAINS: %v", err)
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}

// StoreOptions are the store's options under this configuration.
func (c Config) StoreOptions() store.Options {
	o := store.DefaultOptions()
	o.GroupMin = c.GroupRollupsAbove
	o.AttributionCache = c.AttributionCache
	o.InlineRollups = c.Rollups == "inline"
	o.RollupLagMax = c.RollupLagMax
	return o
}
