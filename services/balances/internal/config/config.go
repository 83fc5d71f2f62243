// Package config is the balances service's configuration, read from BALANCES_* environment
// variables.
package config

import (
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
)

// Prefix of every balances environment variable.
const Prefix = "BALANCES_"

// Config is the balances service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`
	// UserLabelsURL is the user-labels service's base URL; empty disables callers' own labels
	// and user entities.
	UserLabelsURL string `env:"USER_LABELS_URL" envDefault:"http://user-labels:8080" envEmpty:"off"`
	// ConsumerBatch is the most balance observations written in one transaction.
	ConsumerBatch int `env:"CONSUMER_BATCH" envDefault:"5000"`
	// ApplyBatch is the most appended observations the applier folds into the read models in one
	// transaction.
	ApplyBatch int `env:"APPLY_BATCH" envDefault:"20000"`
	// ApplyIdle is the applier's wait when no appended observation waits.
	ApplyIdle time.Duration `env:"APPLY_IDLE" envDefault:"50ms"`
	// ObservationRetention is how much chain time before each chain's newest block keeps every
	// observation; older ones are pruned down to what a rule can still read (each key's newest
	// surviving one before it). It must exceed the deepest reorg and block timestamps' skew (a
	// bitcoin or dogecoin block may be stamped hours before its parent), hence at least 24h; 0
	// keeps every observation.
	ObservationRetention time.Duration `env:"OBSERVATION_RETENTION" envDefault:"72h"`
	// PruneInterval is the pruner's wait between passes. A pass walks the whole table (what an
	// hour adds beside the retention's rows is little to keep a while longer).
	PruneInterval time.Duration `env:"PRUNE_INTERVAL" envDefault:"1h"`
	// PrunePages is how many pages of observations one pruning statement walks.
	PrunePages int64 `env:"PRUNE_PAGES" envDefault:"256"`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("BALANCES_CHAINS: %v", err)
	}
	if c.ConsumerBatch < 1 || c.ConsumerBatch > 50000 {
		p.Addf("BALANCES_CONSUMER_BATCH: must be between 1 and 50000, got %d", c.ConsumerBatch)
	}
	if c.ApplyBatch < 1 || c.ApplyBatch > 200000 {
		p.Addf("BALANCES_APPLY_BATCH: must be between 1 and 200000, got %d", c.ApplyBatch)
	}
	if c.ApplyIdle < time.Millisecond || c.ApplyIdle > time.Minute {
		p.Addf("BALANCES_APPLY_IDLE: must be between 1ms and 1m, got %s", c.ApplyIdle)
	}
	if r := c.ObservationRetention; r != 0 && (r < 24*time.Hour || r > 10*365*24*time.Hour) {
		p.Addf("BALANCES_OBSERVATION_RETENTION: must be 0 (keep every observation) or between 24h and 87600h (it must exceed the deepest reorg plus block timestamp skew), got %s", r)
	}
	if c.ObservationRetention > 0 { // the pruner's settings: unused without it
		if c.PruneInterval < time.Second || c.PruneInterval > 24*time.Hour {
			p.Addf("BALANCES_PRUNE_INTERVAL: must be between 1s and 24h, got %s", c.PruneInterval)
		}
		if c.PrunePages < 1 || c.PrunePages > 100000 {
			p.Addf("BALANCES_PRUNE_PAGES: must be between 1 and 100000, got %d", c.PrunePages)
		}
		// A pass holds one connection for its claim and runs its statements on another.
		if c.MaxConns > 0 && c.MaxConns < 2 {
			p.Addf("BALANCES_DATABASE_MAX_CONNS: must be at least 2 while the pruner runs (BALANCES_OBSERVATION_RETENTION > 0), got %d", c.MaxConns)
		}
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
