package sim

import (
	"slices"
	"testing"

	"github.com/chainintel/chainintel/libs/evmcode"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// The bootstrap publishes one contract per EVM token, with code whose dispatcher holds the
// ERC-20 selectors (read back by ingest's own scanner), a deployer and a deployment of its own,
// the same for the same seed; non-EVM tokens have none.
func TestBootstrapTokenContracts(t *testing.T) {
	w := world(t, Config{Seed: 5, Chains: []string{"ethereum", "solana"}})
	boot := w.Bootstrap()
	want := []string{"0x06fdde03", "0x095ea7b3", "0x18160ddd", "0x23b872dd", "0x313ce567", "0x70a08231", "0x95d89b41", "0xa9059cbb", "0xdd62ed3e"}
	tokens := map[string]bool{}
	for _, tk := range boot.Tokens {
		if tk.Chain == "ethereum" {
			tokens[tk.Address] = true
		}
	}
	if len(boot.Contracts) != len(tokens) || len(tokens) == 0 {
		t.Fatalf("%d contracts for %d ethereum tokens", len(boot.Contracts), len(tokens))
	}
	deployers := map[string]bool{}
	for _, c := range boot.Contracts {
		code, err := hexutil.Decode(c.Bytecode)
		if !tokens[c.Address] || c.Chain != "ethereum" || err != nil || !slices.Equal(evmcode.FunctionSighashes(code), want) ||
			!slices.Equal(c.FunctionSighashes, want) || len(c.Deployer) != 42 || len(c.DeployTxHash) != 66 || c.BlockHash == "" || c.ProxyImplementation != "" {
			t.Errorf("contract %v", c)
		}
		deployers[c.Deployer] = true
	}
	if len(deployers) != len(boot.Contracts) {
		t.Errorf("%d deployers for %d contracts", len(deployers), len(boot.Contracts))
	}
	again := world(t, Config{Seed: 5, Chains: []string{"ethereum", "solana"}}).Bootstrap()
	for i, c := range again.Contracts {
		if c.Deployer != boot.Contracts[i].Deployer || c.DeployTxHash != boot.Contracts[i].DeployTxHash {
			t.Fatalf("contract %d differs for the same seed", i)
		}
	}
	// Published again (a restarted simulator bootstraps again), each contract has the id it had,
	// the indexer's scheme "contract:<chain>:<address>:<blockHash>".
	againIDs := map[string]string{}
	for _, e := range again.Events() {
		againIDs[e.Topic+" "+e.Key] = e.ID
	}
	n := 0
	for _, e := range boot.Events() {
		c, ok := e.Msg.(*eventsv1.Contract)
		if !ok {
			continue
		}
		n++
		if want := "contract:ethereum:" + c.Address + ":" + c.BlockHash; e.ID != want || againIDs[e.Topic+" "+e.Key] != want {
			t.Errorf("contract %s: ids %q and %q; want %q", c.Address, e.ID, againIDs[e.Topic+" "+e.Key], want)
		}
	}
	if n != len(boot.Contracts) {
		t.Errorf("%d contract events for %d contracts", n, len(boot.Contracts))
	}
}
