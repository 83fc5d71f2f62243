package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReorgResult counts what a reorg changed.
type ReorgResult struct {
	Voided, Restored int // observations
	Keys             int // balances recomputed
	// BeforeHorizon counts the observations of the reorged blocks older than the chain's pruning
	// horizon: the reorg reaches history the pruner has thinned, so its fallback and rebuilt
	// snapshots see only the observations kept there (each key's base), not the ones deleted.
	// The retention (BALANCES_OBSERVATION_RETENTION) must exceed the deepest reorg.
	BeforeHorizon int
}

// ApplyReorg voids the observations of the orphaned block hashes (remembered in
// orphaned_blocks), takes back those of blocks that are canonical again, and rebuilds every
// touched balance and snapshot from the newest surviving observations. Applying the same reorg twice changes nothing the second time.
func (s *Store) ApplyReorg(ctx context.Context, chain string, orphaned, canonical []string) (ReorgResult, error) {
	var res ReorgResult
	err := s.write(ctx, "apply reorg", func(tx pgx.Tx) error {
		res = ReorgResult{}
		plans := map[Key]*plan{}
		var horizon time.Time
		if err := tx.QueryRow(ctx, q("read_prune_horizon"), chain).Scan(&horizon); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		for _, step := range []struct {
			stmt   string
			hashes []string
			n      *int
		}{{"orphan_blocks", orphaned, &res.Voided}, {"restore_blocks", canonical, &res.Restored}} {
			if len(step.hashes) == 0 {
				continue
			}
			changed, err := blockHashes(ctx, tx, step.stmt, chain, step.hashes)
			if err != nil {
				return err
			}
			if len(changed) == 0 {
				continue
			}
			if err := addBlockKeys(ctx, tx, chain, changed, plans, step.n, horizon, &res.BeforeHorizon); err != nil {
				return err
			}
		}
		res.Keys = len(plans)
		if len(plans) == 0 {
			return nil
		}
		keys := sortedKeys(plans)
		cs, as, ts := keyArrays(keys)
		rows, err := tx.Query(ctx, q("surviving_current"), cs, as, ts)
		if err != nil {
			return err
		}
		tops, err := scanCurrent(rows)
		if err != nil {
			return err
		}
		for i := range tops {
			p := plans[tops[i].Key]
			p.top = &tops[i]
			// The current row is its day's snapshot: the rebuild covers the day of the new one.
			if d := Day(p.top.BlockTime); d.Before(p.since) {
				p.since = d
			}
		}
		rebuilt, err := s.loadDaily(ctx, tx, "surviving_daily", keys, plans)
		if err != nil {
			return err
		}
		for _, k := range keys {
			plans[k].cands = rebuilt[k]
		}
		if err := s.apply(ctx, tx, plans, true); err != nil {
			return err
		}
		return keepTop(ctx, tx, planTokens(keys))
	})
	return res, err
}

// blockHashes runs orphan_blocks or restore_blocks and returns the hashes whose state changed.
func blockHashes(ctx context.Context, tx pgx.Tx, stmt, chain string, hashes []string) ([]string, error) {
	rows, err := tx.Query(ctx, q(stmt), chain, hashes)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// addBlockKeys adds to plans the keys the observations of blocks touch, from the oldest day
// they touch, counts those observations in n and those older than horizon (zero: none) in before.
func addBlockKeys(ctx context.Context, tx pgx.Tx, chain string, hashes []string, plans map[Key]*plan, n *int, horizon time.Time, before *int) error {
	rows, err := tx.Query(ctx, q("block_keys"), chain, hashes)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k Key
		var t time.Time
		if err := rows.Scan(&k.Address, &k.Token, &t); err != nil {
			return err
		}
		k.Chain = chain
		*n++
		if t.Before(horizon) {
			*before++
		}
		if p := plans[k]; p == nil {
			plans[k] = &plan{since: Day(t)}
		} else if Day(t).Before(p.since) {
			p.since = Day(t)
		}
	}
	return rows.Err()
}

// planTokens is the (chain, token) of keys, each once.
func planTokens(keys []Key) [][2]string {
	seen := map[[2]string]bool{}
	var out [][2]string
	for _, k := range keys {
		if t := [2]string{k.Chain, k.Token}; !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
