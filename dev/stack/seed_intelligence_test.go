package stack

import (
	"slices"
	"testing"
)

// A stack indexing a node (EVM_RPC_URL) imports the real label packs only, not the simulator's
// made-up entities; a simulating stack imports both.
func TestIntelligenceSeedsFollowTheMode(t *testing.T) {
	t.Setenv("CHAININTEL_SHARED", t.TempDir())
	names := func(simulated bool) []string {
		var out []string
		for _, s := range intelligenceSeeds(simulated, []string{"ethereum"}) {
			out = append(out, s.name)
		}
		return out
	}
	if got, want := names(false), []string{"GraphSense samples"}; !slices.Equal(got, want) {
		t.Errorf("node mode imports %q, want %q", got, want)
	}
	if got, want := names(true), []string{"simulator curated data", "GraphSense samples"}; !slices.Equal(got, want) {
		t.Errorf("simulated mode imports %q, want %q", got, want)
	}
}
