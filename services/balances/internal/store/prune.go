package store

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// PruneResult is what one pruning pass did.
type PruneResult struct {
	Horizons map[string]time.Time // chain: observations before it are pruned
	Pages    int64                // pages of observations the pass walked
	Batches  int                  // statements (transactions) it ran, failed ones included
	Failed   int                  // of those, how many failed
	Pruned   int64                // observations deleted
	// Skipped is set when another session (another replica) held the pass: this one did nothing.
	Skipped bool
}

// PrunePass deletes the observations no rule can read any more (sql/prune_observations.sql):
// it moves each chain's horizon to its chain time less retention, then walks observations'
// pages in ranges of pages, one short statement each. It takes neither the writers' lock nor the
// appenders' lock: the rows it deletes are below the applier's mark (never read by the applier
// again) and before the horizon, where a reorg within the retention reads only the rows it keeps
// (docs/balances.md, Storage), so appends, the applier and reorgs never wait for it. One pass
// runs at a time in the database (a session advisory lock, prune_lock.sql): a pass that finds
// another running does nothing and says so (Skipped), since the running one walks the same
// pages. A range that fails does not stop the pass (a later range's rows are no less prunable):
// the pass goes on and returns the first failure with how many ranges failed.
func (s *Store) PrunePass(ctx context.Context, retention time.Duration, pages int64) (PruneResult, error) {
	res := PruneResult{Horizons: map[string]time.Time{}}
	if retention <= 0 || pages <= 0 {
		return res, fmt.Errorf("prune observations: retention %s and pages %d must be positive", retention, pages)
	}
	release, ok, err := s.claimPrune(ctx)
	if err != nil || !ok {
		res.Skipped = err == nil
		return res, err
	}
	defer release()
	if err := s.pruneHorizons(ctx, retention, res.Horizons); err != nil {
		return res, err
	}
	if err := s.pool.QueryRow(ctx, q("prune_pages")).Scan(&res.Pages); err != nil {
		return res, fmt.Errorf("prune pages: %w", err)
	}
	var first error
	for from := int64(0); from < res.Pages && ctx.Err() == nil; from += pages {
		n, err := s.PruneRange(ctx, from, from+pages)
		res.Batches++
		if err != nil {
			res.Failed++
			first = cmp.Or(first, err)
			continue
		}
		res.Pruned += n
	}
	if first != nil {
		return res, fmt.Errorf("%d of %d page ranges failed, the first: %w", res.Failed, res.Batches, first)
	}
	return res, ctx.Err()
}

// claimPrune takes the pruning pass's session advisory lock on a connection it holds until
// release (the pass's statements run on other connections of the pool). ok is false when
// another session holds it.
func (s *Store) claimPrune(ctx context.Context) (release func(), ok bool, err error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("prune lock: %w", err)
	}
	if err := c.QueryRow(ctx, q("prune_lock")).Scan(&ok); err != nil || !ok {
		if err != nil {
			// The lock may have been granted before the error: the session goes with it.
			_ = c.Conn().Close(context.WithoutCancel(ctx))
			err = fmt.Errorf("prune lock: %w", err)
		}
		c.Release()
		return nil, false, err
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var held bool
		if err := c.QueryRow(uctx, q("prune_unlock")).Scan(&held); err != nil || !held {
			// A session that may still hold the lock does not go back to the pool: closing it
			// ends the lock, and the pool opens another connection.
			_ = c.Conn().Close(uctx)
		}
		c.Release()
	}, true, nil
}

// pruneHorizons moves each chain's horizon (prune_horizon.sql) and reads them into horizons.
func (s *Store) pruneHorizons(ctx context.Context, retention time.Duration, horizons map[string]time.Time) error {
	rows, err := s.pool.Query(ctx, q("prune_horizon"), retention.Microseconds())
	if err != nil {
		return fmt.Errorf("prune horizon: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var chain string
		var h time.Time
		if err := rows.Scan(&chain, &h); err != nil {
			return fmt.Errorf("prune horizon: %w", err)
		}
		horizons[chain] = h
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("prune horizon: %w", err)
	}
	return nil
}

// PruneRange deletes the prunable observations on pages [from, to) against the stored horizons
// and returns how many it deleted.
func (s *Store) PruneRange(ctx context.Context, from, to int64) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("prune_settings")); err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("prune_observations"), tid(from), tid(to)).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("prune observations on pages %d..%d: %w", from, to, err)
	}
	return n, nil
}

// tid is the first tuple position of page p (offsets start at 1, so (p,0) precedes them all).
func tid(p int64) pgtype.TID {
	return pgtype.TID{BlockNumber: uint32(p), OffsetNumber: 0, Valid: true}
}
