package config

import (
	"strings"
	"testing"

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
		{"defaults simulate", func(*Config) {}, nil},
		{"evm needs a node", func(c *Config) { c.Mode = ModeEVM }, []string{"INGEST_EVM_RPC_URL is required"}},
		{"evm ok", func(c *Config) { c.Mode, c.EVMRPCURL, c.EVMStartBlock = ModeEVM, "http://127.0.0.1:8545", "18000000" }, nil},
		{"every problem at once", func(c *Config) {
			c.Mode, c.EVMRPCURL, c.EVMChain, c.EVMStartBlock, c.EVMBatchBlocks = ModeEVM, "x", "solana", "tomorrow", 0
			c.EVMTraces = "yes"
		}, []string{`INGEST_EVM_CHAIN "solana"`, `INGEST_EVM_START_BLOCK "tomorrow"`, "INGEST_EVM_BATCH_BLOCKS", `INGEST_EVM_TRACES "yes"`}},
		{"unknown mode", func(c *Config) { c.Mode = "replay" }, []string{`INGEST_MODE "replay"`}},
		{"sim rate", func(c *Config) { c.SimRate = 0 }, []string{"INGEST_SIM_RATE"}},
		{"unknown chain", func(c *Config) { c.Chains = []string{"ethereum", "mars"} }, []string{"mars"}},
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

func TestStartBlock(t *testing.T) {
	c := Config{EVMStartBlock: "head"}
	if n, err := c.StartBlock(); n != nil || err != nil {
		t.Fatal(n, err)
	}
	c.EVMStartBlock = " 18000000 "
	if n, err := c.StartBlock(); err != nil || *n != 18_000_000 {
		t.Fatal(n, err)
	}
}

// INGEST_TOKEN_ANALYTICS_URL set to the empty string turns the price lookups off (what the
// chart's `ingest.env.TOKEN_ANALYTICS_URL: ""` renders); unset, the in-cluster default applies.
func TestTokenAnalyticsURLEmptyIsOff(t *testing.T) {
	env := map[string]string{"INGEST_INTERNAL_SECRET": "0123456789abcdef", "INGEST_DATABASE_URL": "postgres://x@h/db", "INGEST_KAFKA_BROKERS": "k:9092",
		"INGEST_TOKEN_ANALYTICS_URL": ""}
	var c Config
	if err := libconfig.LoadFrom(&c, "INGEST_", env); err != nil {
		t.Fatal(err)
	}
	if c.TokenAnalyticsURL != "" {
		t.Errorf("set empty: %q", c.TokenAnalyticsURL)
	}
	delete(env, "INGEST_TOKEN_ANALYTICS_URL")
	var d Config
	if err := libconfig.LoadFrom(&d, "INGEST_", env); err != nil {
		t.Fatal(err)
	}
	if d.TokenAnalyticsURL != "http://token-analytics:8080" {
		t.Errorf("unset: %q", d.TokenAnalyticsURL)
	}
}
