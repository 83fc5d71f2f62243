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
	// The stack picks the mode by its options: a node URL means node mode.
	byOptions := func(o Options) []string {
		var out []string
		for _, s := range (platform{o: o}).intelligenceSeeds() {
			out = append(out, s.name)
		}
		return out
	}
	if got, want := byOptions(Options{EVMRPCURL: "http://node.example/rpc", Chains: []string{"ethereum"}}), []string{"GraphSense samples"}; !slices.Equal(got, want) {
		t.Errorf("a stack with EVMRPCURL imports %q, want %q", got, want)
	}
	if got, want := byOptions(Options{Chains: []string{"ethereum"}}), []string{"simulator curated data", "GraphSense samples"}; !slices.Equal(got, want) {
		t.Errorf("a stack without EVMRPCURL imports %q, want %q", got, want)
	}
}
