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
	// PastPruned is set when the lowest block the reorg changes is at or below the newest block
	// the pruner deleted an observation of on the chain: the reorg reaches pruned history even
	// where the pruner left no row of its blocks to count in BeforeHorizon.
	PastPruned bool
}

// ApplyReorg voids the observations of the orphaned block hashes (remembered in
// orphaned_blocks), takes back those of blocks that are canonical again, and rebuilds every
// touched balance and snapshot from the newest surviving observations. from is the lowest block
// number the reorg changes (0: unknown), compared with what the pruner deleted. Applying the
// same reorg twice changes nothing the second time.
func (s *Store) ApplyReorg(ctx context.Context, chain string, from int64, orphaned, canonical []string) (ReorgResult, error) {
	var res ReorgResult
	err := s.write(ctx, "apply reorg", func(tx pgx.Tx) error {
		res = ReorgResult{}
		plans := map[Key]*plan{}
		var times []time.Time
		changedAny := false
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
			changedAny = true
			if err := addBlockKeys(ctx, tx, chain, changed, plans, step.n, &times); err != nil {
				return err
			}
		}
		// Read after the blocks' rows: a pruning statement that deleted some of them before
		// block_keys read them has raised pruned_block by now. A reorg applied before (nothing
		// changed) was counted then.
		if changedAny {
			if err := pastHorizon(ctx, tx, chain, from, times, &res); err != nil {
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
		for _, p := range plans {
			// A key left with no surviving observation loses its current row and every snapshot:
			// in a reorg deeper than the retention, the days before the touched ones may hold the
			// balance of a pruned row, which no current row would back any more.
			if p.top == nil {
				p.since = time.Time{}
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
// they touch, counts those observations in n and appends their block times to times.
func addBlockKeys(ctx context.Context, tx pgx.Tx, chain string, hashes []string, plans map[Key]*plan, n *int, times *[]time.Time) error {
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
		*times = append(*times, t)
		if p := plans[k]; p == nil {
			plans[k] = &plan{since: Day(t)}
		} else if Day(t).Before(p.since) {
			p.since = Day(t)
		}
	}
	return rows.Err()
}

// pastHorizon sets res.BeforeHorizon (the times before chain's pruning horizon) and
// res.PastPruned (from at or below the newest block pruned); a chain never pruned has neither.
func pastHorizon(ctx context.Context, tx pgx.Tx, chain string, from int64, times []time.Time, res *ReorgResult) error {
	var horizon time.Time
	var pruned int64
	if err := tx.QueryRow(ctx, q("read_prune_horizon"), chain).Scan(&horizon, &pruned); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	}
	for _, t := range times {
		if t.Before(horizon) {
			res.BeforeHorizon++
		}
	}
	res.PastPruned = from > 0 && from <= pruned
	return nil
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
