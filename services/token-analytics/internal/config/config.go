// Package config is the token-analytics service's configuration, read from TOKENANALYTICS_* environment
// variables.
package config

import (
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
)

// Prefix of every token-analytics environment variable.
const Prefix = "TOKENANALYTICS_"

// Config is the token-analytics service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("TOKENANALYTICS_CHAINS: %v", err)
	}
	return p.Err()
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
