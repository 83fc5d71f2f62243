// Package config is the user-labels service's configuration, read from USERLABELS_* environment
// variables.
package config

import (
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
)

// Prefix of every user-labels environment variable.
const Prefix = "USERLABELS_"

// Config is the user-labels service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all. Labels and entity
	// addresses are accepted for the chain types of these chains.
	Chains []string `env:"CHAINS" envSeparator:","`

	// OutboxPollInterval is how often the relay looks for unsent change events besides the
	// nudge it gets after each change (which covers events left by another replica or a crash).
	OutboxPollInterval time.Duration `env:"OUTBOX_POLL_INTERVAL" envDefault:"1s"`
	// LabelCacheBytes bounds the memory holding encoded label lists for GET /user/labels (served
	// only while the stored label set is unchanged); 0 turns the cache off.
	LabelCacheBytes int64 `env:"LABEL_CACHE_BYTES" envDefault:"67108864"`
	// LookupCacheBytes bounds the memory holding per-user lookup indexes for POST
	// /internal/lookup (served only while the user's labels and entities are unchanged); 0
	// turns the cache off.
	LookupCacheBytes int64 `env:"LOOKUP_CACHE_BYTES" envDefault:"67108864"`
	// MaxLabelsPerUser and MaxEntitiesPerUser cap what one user may store: every per-user cost
	// that grows with the stored set (the label list, a search, a lookup index) stays bounded.
	MaxLabelsPerUser   int `env:"MAX_LABELS_PER_USER" envDefault:"100000"`
	MaxEntitiesPerUser int `env:"MAX_ENTITIES_PER_USER" envDefault:"10000"`
	// OutboxRetention is how long sent change events stay in the outbox table.
	OutboxRetention time.Duration `env:"OUTBOX_RETENTION" envDefault:"24h"`
	// MaxAlerts caps the alerts (/user/alerts) one user may keep: each is matched against every
	// transfer by the deliverer.
	MaxAlerts int `env:"MAX_ALERTS" envDefault:"100"`
	// AlertWebhookAllowHTTP accepts plain http:// webhook URLs besides https:// (a local stack's
	// receivers); off in production.
	AlertWebhookAllowHTTP bool `env:"ALERT_WEBHOOK_ALLOW_HTTP" envDefault:"false"`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("USERLABELS_CHAINS: %v", err)
	}
	if c.OutboxPollInterval <= 0 {
		p.Addf("USERLABELS_OUTBOX_POLL_INTERVAL must be positive")
	}
	if c.LabelCacheBytes < 0 {
		p.Addf("USERLABELS_LABEL_CACHE_BYTES must not be negative")
	}
	if c.LookupCacheBytes < 0 {
		p.Addf("USERLABELS_LOOKUP_CACHE_BYTES must not be negative")
	}
	if c.MaxLabelsPerUser <= 0 {
		p.Addf("USERLABELS_MAX_LABELS_PER_USER must be positive")
	}
	if c.MaxEntitiesPerUser <= 0 {
		p.Addf("USERLABELS_MAX_ENTITIES_PER_USER must be positive")
	}
	if c.MaxAlerts <= 0 {
		p.Addf("USERLABELS_MAX_ALERTS must be positive")
	}
	if c.OutboxRetention <= 0 {
		p.Addf("USERLABELS_OUTBOX_RETENTION must be positive")
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
