package stack

import (
	"slices"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/promscrape"
)

// The backlog column: every progress job but ingest's, with what is left and its ETA (unknown
// while nothing is applied), and the largest hour close lag over the chains.
func TestBacklogText(t *testing.T) {
	samples, err := promscrape.Parse(strings.NewReader(`
progress_remaining{task="balances.apply",unit="observations"} 1200
progress_eta_seconds{task="balances.apply",unit="observations"} 90
progress_remaining{task="transfers.rollups",unit="rows"} 5
progress_eta_seconds{task="transfers.rollups",unit="rows"} -1
progress_remaining{chain="ethereum",task="ingest",unit="blocks"} 40
token_analytics_close_lag_seconds{chain="base"} 1800
token_analytics_close_lag_seconds{chain="ethereum"} 4500.5
`))
	if err != nil {
		t.Fatal(err)
	}
	got := backlogText(samples)
	want := []string{
		"balances.apply 1200 left, eta 1m30s",
		"hour close lag 1h15m0s (ethereum, the largest of 2 chains)",
		"transfers.rollups 5 left, eta unknown",
	}
	if !slices.Equal(got, want) {
		t.Errorf("backlog %q, want %q", got, want)
	}
	if got := backlogText(nil); len(got) != 0 {
		t.Errorf("no metrics: %q", got)
	}
}

// A chain whose indexing rounds keep failing (its node unreachable) shows it instead of an ETA
// computed from the last good round's figures.
func TestChainTextFailing(t *testing.T) {
	got := chainText(map[string]ChainPosition{
		"ethereum": {Cursor: 700, Behind: 12, ETASeconds: 0, FailingRounds: 3},
		"base":     {Cursor: 50, Behind: 0, ETASeconds: 0},
	})
	want := "base block 50, 0 behind, eta 0s; ethereum block 700, 12 behind, FAILING (3 rounds in a row; see LAST ERROR)"
	if got != want {
		t.Errorf("chains %q, want %q", got, want)
	}
}
