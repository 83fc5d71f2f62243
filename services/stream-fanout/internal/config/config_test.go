package config_test

import (
	"os"
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

// TestGuardLimitsChecked: the session filter bound and the message limit load with their
// defaults, and a deployment setting one to zero, negative or (the rate) infinite is refused
// rather than run without the limit it believes it set.
func TestGuardLimitsChecked(t *testing.T) {
	t.Setenv("STREAM_INTERNAL_SECRET", "config-test-secret-0123456789abcdef")
	t.Setenv("STREAM_KAFKA_BROKERS", "127.0.0.1:9092")
	t.Setenv("STREAM_REDIS_URL", "redis://127.0.0.1:6379/0")
	c, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxSessionFilterBytes != 65536 || c.MessageRate != 10 || c.MessageBurst != 50 {
		t.Fatalf("defaults: %d bytes, %v a second, burst %d; want 65536, 10, 50", c.MaxSessionFilterBytes, c.MessageRate, c.MessageBurst)
	}
	for _, set := range [][2]string{{"STREAM_MAX_SESSION_FILTER_BYTES", "0"}, {"STREAM_MESSAGE_RATE", "-1"}, {"STREAM_MESSAGE_RATE", "+Inf"}, {"STREAM_MESSAGE_BURST", "0"}} {
		t.Run(set[0]+"="+set[1], func(t *testing.T) {
			t.Setenv(set[0], set[1])
			c, err := config.Load()
			if err == nil {
				err = c.Validate()
			}
			want := "STREAM_MAX_SESSION_FILTER_BYTES, STREAM_MESSAGE_BURST and STREAM_MESSAGE_RATE must be positive (STREAM_MESSAGE_RATE finite)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s=%s: %v, want %q", set[0], set[1], err, want)
			}
		})
	}
}

// TestAlertsSwitch: the alerts run by default (user-labels' URL has one), not with that URL
// set empty or with STREAM_ALERTS=off; a value other than on or off, and on without
// user-labels, are refused.
func TestAlertsSwitch(t *testing.T) {
	t.Setenv("STREAM_INTERNAL_SECRET", "config-test-secret-0123456789abcdef")
	t.Setenv("STREAM_KAFKA_BROKERS", "127.0.0.1:9092")
	t.Setenv("STREAM_REDIS_URL", "redis://127.0.0.1:6379/0")
	const unset = "(unset)"
	for _, c := range []struct {
		alerts, labels string
		on             bool
		refused        string
	}{
		{unset, unset, true, ""},
		{unset, "", false, ""},
		{"off", unset, false, ""},
		{"on", "", false, "STREAM_ALERTS=on needs STREAM_USER_LABELS_URL"},
		{"yes", unset, false, `STREAM_ALERTS must be on, off or empty (on when STREAM_USER_LABELS_URL is set), not "yes"`},
	} {
		t.Run(c.alerts+"/"+c.labels, func(t *testing.T) {
			for name, v := range map[string]string{"STREAM_ALERTS": c.alerts, "STREAM_USER_LABELS_URL": c.labels} {
				t.Setenv(name, v)
				if v == unset {
					_ = os.Unsetenv(name) // t.Setenv restores it after the test
				}
			}
			cfg, err := config.Load()
			if err == nil {
				err = cfg.Validate()
			}
			if c.refused != "" {
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("error %v, want %q", err, c.refused)
				}
				return
			}
			if err != nil || cfg.AlertsOn() != c.on || cfg.AlertsGroup != "stream-fanout-alerts" {
				t.Fatalf("on %v (want %v), group %q, error %v", cfg.AlertsOn(), c.on, cfg.AlertsGroup, err)
			}
		})
	}
}

// TestCatchUpParallelChecked: a replica reads the topic back for 2 resumes at once by default,
// each at most 2,000,000 records, and a deployment setting either to 0 (no catch-up would ever
// run, or read anything) or less is refused.
func TestCatchUpParallelChecked(t *testing.T) {
	t.Setenv("STREAM_INTERNAL_SECRET", "config-test-secret-0123456789abcdef")
	t.Setenv("STREAM_KAFKA_BROKERS", "127.0.0.1:9092")
	t.Setenv("STREAM_REDIS_URL", "redis://127.0.0.1:6379/0")
	c, err := config.Load()
	if err != nil || c.CatchUpParallel != 2 {
		t.Fatalf("default: %d, %v; want 2", c.CatchUpParallel, err)
	}
	t.Setenv("STREAM_CATCHUP_PARALLEL", "0")
	c, err = config.Load()
	if err == nil {
		err = c.Validate()
	}
	want := "STREAM_MAX_SESSIONS_PER_KEY, STREAM_CATCHUP_PARALLEL and STREAM_MAX_CATCHUP must be positive"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("STREAM_CATCHUP_PARALLEL=0: %v, want %q", err, want)
	}
	t.Setenv("STREAM_CATCHUP_PARALLEL", "2")
	if c, err = config.Load(); err != nil || c.MaxCatchUp != 2_000_000 {
		t.Fatalf("default STREAM_MAX_CATCHUP: %d, %v; want 2000000", c.MaxCatchUp, err)
	}
	t.Setenv("STREAM_MAX_CATCHUP", "0")
	c, err = config.Load()
	if err == nil {
		err = c.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("STREAM_MAX_CATCHUP=0: %v, want %q", err, want)
	}
}
