package stack

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/services/intelligence"
	"github.com/chainintel/chainintel/sim"
)

// seedIntelligence imports what an operator would know about the local world: the simulator's
// curated.json (its exchanges with their hot wallets, DEX pools and routers, funds) for the
// world the stack's ingest simulates, and the GraphSense samples when ../shared is beside the
// repository. Both imports are idempotent, so a restart on the same database changes nothing.
func seedIntelligence(ctx context.Context, ic intelligence.Config, simChains []string) error {
	var gc ingest.Config
	if err := config.Defaults(&gc); err != nil {
		return err
	}
	gc.Chains = simChains
	w, err := sim.New(ingest.SimConfig(gc, time.Now()))
	if err != nil {
		return fmt.Errorf("simulated world: %w", err)
	}
	if _, err := intelligence.ImportCurated(ctx, ic, bytes.NewReader(w.Curated())); err != nil {
		return fmt.Errorf("import simulator curated data: %w", err)
	}
	if d := sharedtest.Dir(); d != "" {
		if _, err := intelligence.ImportGraphSense(ctx, ic, filepath.Join(d, "data", "labels", "graphsense")); err != nil {
			return fmt.Errorf("import GraphSense samples: %w", err)
		}
	}
	return nil
}

// republishAttributions publishes every stored attribution again when the broker is the
// embedded one: it keeps topics in memory, so after a restart on the same database
// intel.attributions.v1 is empty, and the services that read it whole at start (stream-fanout's
// matching, balances' entity membership) would see no entity until each address changes again.
// The seeding above publishes only what it changed, which on a restart is nothing. Consumers
// apply attributions idempotently, so on a fresh database the copies the relay also sends
// change nothing.
func (p platform) republishAttributions(ctx context.Context, ic intelligence.Config) error {
	if len(p.o.KafkaBrokers) > 0 {
		return nil
	}
	if _, err := intelligence.Republish(ctx, ic); err != nil {
		return fmt.Errorf("republish attributions to the embedded broker: %w", err)
	}
	return nil
}
