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

func TestExchangeTokenLists(t *testing.T) {
	many := make([]string, 2001)
	for i := range many {
		many[i] = "t"
	}
	for _, tc := range []struct {
		spot, perp []string
		want       string // "" for no problem with the lists
	}{
		{spot: []string{"bitcoin", " ethereum "}, perp: []string{"bitcoin"}},
		{spot: []string{"bit coin"}, want: `TOKENANALYTICS_EXCHANGE_SPOT_TOKENS: "bit coin" is not a pricing id such as bitcoin`},
		{perp: []string{"bitcoin", ""}, want: `TOKENANALYTICS_EXCHANGE_PERP_TOKENS: "" is not a pricing id such as bitcoin`},
		{spot: many, want: "TOKENANALYTICS_EXCHANGE_SPOT_TOKENS: at most 2000 pricing ids, got 2001"},
	} {
		err := Config{FlowPruneInterval: time.Hour, ExchangeSpotTokens: tc.spot, ExchangePerpTokens: tc.perp}.Validate()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if tc.want == "" && strings.Contains(msg, "EXCHANGE") || tc.want != "" && !strings.Contains(msg, tc.want) {
			t.Errorf("spot %q perp %q: %v, want %q", tc.spot, tc.perp, err, tc.want)
		}
	}
}
