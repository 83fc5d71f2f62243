package config

import (
	"strings"
	"testing"
	"time"

	libconfig "github.com/chainintel/chainintel/libs/config"
)

func TestValidate(t *testing.T) {
	base := func() Config {
		var c Config
		if err := libconfig.Defaults(&c); err != nil {
			t.Fatal(err)
		}
		c.InternalSecret = "0123456789abcdef"
		return c
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string // substrings of the error; none means valid
	}{
		{"defaults", func(*Config) {}, nil},
		{"default retention is 72h", func(c *Config) {
			if c.ObservationRetention != 72*time.Hour || c.PruneInterval != time.Hour || c.PrunePages != 256 {
				t.Fatalf("defaults %s %s %d", c.ObservationRetention, c.PruneInterval, c.PrunePages)
			}
		}, nil},
		{"retention 0 keeps everything", func(c *Config) { c.ObservationRetention = 0 }, nil},
		{"retention shorter than a day", func(c *Config) { c.ObservationRetention = 23 * time.Hour },
			[]string{"BALANCES_OBSERVATION_RETENTION: must be 0 (keep every observation) or between 24h and 87600h", "got 23h0m0s"}},
		{"retention of a day", func(c *Config) { c.ObservationRetention = 24 * time.Hour }, nil},
		{"negative retention", func(c *Config) { c.ObservationRetention = -time.Hour }, []string{"BALANCES_OBSERVATION_RETENTION"}},
		{"retention over ten years", func(c *Config) { c.ObservationRetention = 87601 * time.Hour }, []string{"BALANCES_OBSERVATION_RETENTION"}},
		{"prune settings", func(c *Config) { c.PruneInterval, c.PrunePages = 0, 0 }, []string{"BALANCES_PRUNE_INTERVAL", "BALANCES_PRUNE_PAGES"}},
		{"prune settings unused without retention", func(c *Config) { c.ObservationRetention, c.PruneInterval, c.PrunePages = 0, 0, 0 }, nil},
		{"one connection with the pruner", func(c *Config) { c.MaxConns = 1 }, []string{"BALANCES_DATABASE_MAX_CONNS: must be at least 2"}},
		{"one connection without the pruner", func(c *Config) { c.MaxConns, c.ObservationRetention = 1, 0 }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			err := c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
