package config_test

import (
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/config"
)

// TestRemovedVariablesRefused: a variable the tier table replaced fails validation naming
// STREAM_TIERS_FILE, instead of being ignored while the deployment believes its limits apply.
func TestRemovedVariablesRefused(t *testing.T) {
	t.Setenv("STREAM_INTERNAL_SECRET", "config-test-secret-0123456789abcdef")
	t.Setenv("STREAM_KAFKA_BROKERS", "127.0.0.1:9092")
	t.Setenv("STREAM_REDIS_URL", "redis://127.0.0.1:6379/0")
	c, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, name := range []string{"STREAM_QUOTAS", "STREAM_CREDIT_LIMITS", "STREAM_CREDIT_LEDGER_PREFIX"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "free=1/2")
			c, err := config.Load()
			if err == nil {
				err = c.Validate()
			}
			want := name + " is no longer read: stream quotas and credit limits come from the tier table of STREAM_TIERS_FILE (the edge's EDGE_TIERS_FILE) and the credit ledger's keys from the edge's layout; unset it"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s set: %v, want %q", name, err, want)
			}
		})
	}
}

// The shared Kafka TLS and SASL settings are checked with the service's prefix.
func TestKafkaSecurityCheckedWithPrefix(t *testing.T) {
	t.Setenv("STREAM_INTERNAL_SECRET", "config-test-secret-0123456789abcdef")
	t.Setenv("STREAM_KAFKA_BROKERS", "127.0.0.1:9092")
	t.Setenv("STREAM_REDIS_URL", "redis://127.0.0.1:6379/0")
	t.Setenv("STREAM_KAFKA_SASL_MECHANISM", "scram-sha-512")
	t.Setenv("STREAM_KAFKA_SASL_USERNAME", "fanout")
	_, err := config.Load()
	if err == nil || !strings.Contains(err.Error(), "STREAM_KAFKA_SASL_PASSWORD: required with STREAM_KAFKA_SASL_MECHANISM=scram-sha-512") {
		t.Fatalf("error %v; want STREAM_KAFKA_SASL_PASSWORD named", err)
	}
	t.Setenv("STREAM_KAFKA_SASL_PASSWORD", "pw")
	if _, err := config.Load(); err != nil {
		t.Fatal(err)
	}
}
