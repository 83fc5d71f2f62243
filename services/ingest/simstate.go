package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/ingest/internal/store"
	"github.com/chainintel/chainintel/sim"
)

// simWorld names a simulated world in ingest.sim_state: its seed and chains, which decide its
// entities, addresses and transactions.
func simWorld(cfg Config) string {
	return fmt.Sprintf("seed=%d chains=%s", cfg.SimSeed, strings.Join(cfg.Chains, ","))
}

// resumeSim builds the simulated world and its runner's configuration. A world this database
// saw before is resumed (docs/ingest.md, "Simulate"): built with the start it had, its runner
// replays what was published and goes on, so a restart publishes no transaction hash again
// with other content; its runner saves its state to st before each publish.
func resumeSim(ctx context.Context, cfg Config, st *store.Store, log *slog.Logger) (*sim.World, sim.RunnerConfig, error) {
	world := simWorld(cfg)
	rc := sim.RunnerConfig{Rate: cfg.SimRate, BackfillTxs: cfg.SimHistoryTxs, ChunkTxs: cfg.SimPublishBatch,
		Save: func(ctx context.Context, state sim.State) error {
			b, err := json.Marshal(state)
			if err != nil {
				return err
			}
			return st.SaveSimState(ctx, world, b)
		}}
	wc := SimConfig(cfg, time.Now())
	b, ok, err := st.SimState(ctx, world)
	if err != nil {
		return nil, rc, err
	}
	if ok {
		var state sim.State
		if err := json.Unmarshal(b, &state); err != nil {
			return nil, rc, fmt.Errorf("saved state of simulated world %s: %w", world, err)
		}
		rc.Resume, wc.Start = &state, state.Timeline.Start
		log.Info("resuming the simulated world", "world", world, "start", state.Timeline.Start, "published", state.Published)
	}
	w, err := sim.New(wc)
	if err != nil {
		return nil, rc, err
	}
	return w, rc, nil
}
