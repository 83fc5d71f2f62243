package config

import (
	"strings"
	"testing"
	"time"
)

func TestFlowRetentionBounds(t *testing.T) {
	for d, bad := range map[time.Duration]bool{0: false, 9600 * time.Hour: false, 30 * 24 * time.Hour: true, 365 * 24 * time.Hour: true} {
		c := Config{FlowRetention: d, FlowPruneInterval: time.Hour}
		err := c.Validate()
		if got := err != nil && strings.Contains(err.Error(), "TOKENANALYTICS_FLOW_RETENTION: must be 0 (keep everything) or at least 8952h0m0s"); got != bad {
			t.Errorf("retention %s: %v", d, err)
		}
	}
}
