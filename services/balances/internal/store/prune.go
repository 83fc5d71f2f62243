package store

import (
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
	Batches  int                  // statements (transactions) it ran
	Pruned   int64                // observations deleted
}

// PrunePass deletes the observations no rule can read any more (sql/prune_observations.sql):
// it moves each chain's horizon to its chain time less retention, then walks observations'
// pages in ranges of pages, one short statement each. It takes neither the writers' lock nor the
// appenders' lock: the rows it deletes are below the applier's mark (never read by the applier
// again) and before the horizon, where a reorg within the retention reads only the rows it keeps
// (docs/balances.md, Storage), so appends, the applier and reorgs never wait for it. Passes are
// idempotent, and two at once (two replicas) delete the same rows, each row once.
func (s *Store) PrunePass(ctx context.Context, retention time.Duration, pages int64) (PruneResult, error) {
	res := PruneResult{Horizons: map[string]time.Time{}}
	if retention <= 0 || pages <= 0 {
		return res, fmt.Errorf("prune observations: retention %s and pages %d must be positive", retention, pages)
	}
	rows, err := s.pool.Query(ctx, q("prune_horizon"), retention.Microseconds())
	if err != nil {
		return res, fmt.Errorf("prune horizon: %w", err)
	}
	for rows.Next() {
		var chain string
		var h time.Time
		if err := rows.Scan(&chain, &h); err != nil {
			rows.Close()
			return res, fmt.Errorf("prune horizon: %w", err)
		}
		res.Horizons[chain] = h
	}
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("prune horizon: %w", err)
	}
	if err := s.pool.QueryRow(ctx, q("prune_pages")).Scan(&res.Pages); err != nil {
		return res, fmt.Errorf("prune pages: %w", err)
	}
	for from := int64(0); from < res.Pages; from += pages {
		n, err := s.PruneRange(ctx, from, from+pages)
		if err != nil {
			return res, err
		}
		res.Batches++
		res.Pruned += n
	}
	return res, nil
}

// PruneRange deletes the prunable observations on pages [from, to) against the stored horizons
// and returns how many it deleted.
func (s *Store) PruneRange(ctx context.Context, from, to int64) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("prune_settings")); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, q("prune_observations"), tid(from), tid(to))
		n = tag.RowsAffected()
		return err
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
