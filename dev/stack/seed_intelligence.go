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

// seedIntelligence imports what an operator would know about the local world, as listed by
// intelligenceSeeds. The imports are idempotent, so a restart on the same database changes
// nothing.
func seedIntelligence(ctx context.Context, ic intelligence.Config, seeds []intelligenceSeed) error {
	for _, s := range seeds {
		if err := s.run(ctx, ic); err != nil {
			return fmt.Errorf("import %s: %w", s.name, err)
		}
	}
	return nil
}

// intelligenceSeed is one import of seedIntelligence.
type intelligenceSeed struct {
	name string
	run  func(ctx context.Context, ic intelligence.Config) error
}

// intelligenceSeeds lists the stack's imports: the simulator's curated.json (its exchanges with
// their hot wallets, DEX pools and routers, funds) when the stack's ingest simulates that world
// (simulated), and the GraphSense samples when ../shared is beside the repository. A stack
// indexing a node gets the real label packs only: the simulator's made-up entities ("Binance
// (simulated)" with its addresses) would stand beside the real ones.
func intelligenceSeeds(simulated bool, simChains []string) []intelligenceSeed {
	var out []intelligenceSeed
	if simulated {
		out = append(out, intelligenceSeed{"simulator curated data", func(ctx context.Context, ic intelligence.Config) error {
			var gc ingest.Config
			if err := config.Defaults(&gc); err != nil {
				return err
			}
			gc.Chains = simChains
			w, err := sim.New(ingest.SimConfig(gc, time.Now()))
			if err != nil {
				return fmt.Errorf("simulated world: %w", err)
			}
			_, err = intelligence.ImportCurated(ctx, ic, bytes.NewReader(w.Curated()))
			return err
		}})
	}
	if d := sharedtest.Dir(); d != "" {
		out = append(out, intelligenceSeed{"GraphSense samples", func(ctx context.Context, ic intelligence.Config) error {
			_, err := intelligence.ImportGraphSense(ctx, ic, filepath.Join(d, "data", "labels", "graphsense"))
			return err
		}})
	}
	return out
}

// intelligenceSeeds are the imports of this stack: the simulator's entities only when its
// ingest simulates.
func (p platform) intelligenceSeeds() []intelligenceSeed {
	return intelligenceSeeds(p.o.simulated(), p.o.Chains)
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
