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
		}, []string{`INGEST_EVM_CHAIN "solana"`, `INGEST_EVM_START_BLOCK "tomorrow"`, "INGEST_EVM_BATCH_BLOCKS"}},
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
