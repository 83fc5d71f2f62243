package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// blockClockSkew is how far past the store's clock a block's time may be and still move the
// pruning of network blocks: a block claiming a later time is stored but cannot make its chain's
// retained blocks look old.
const blockClockSkew = 15 * time.Minute

// ApplyBlocks records block figures from chain.transactions.v1 (several stats of one block are
// merged first) and drops each chain's blocks more than two days older than its newest in the
// batch, of those not later than the clock plus blockClockSkew. Idempotent: a redelivered or
// partial block leaves its row as the fullest delivery made it.
func (s *Store) ApplyBlocks(ctx context.Context, bs []app.BlockStat) error {
	if len(bs) == 0 {
		return nil
	}
	type key struct{ chain, hash string }
	by := map[key]int{}
	var merged []app.BlockStat
	newest := map[string]time.Time{}
	latest := s.now().Add(blockClockSkew)
	for _, b := range bs {
		if b.Time.After(newest[b.Chain]) && !b.Time.After(latest) {
			newest[b.Chain] = b.Time
		}
		k := key{b.Chain, b.Hash}
		i, ok := by[k]
		if !ok {
			by[k] = len(merged)
			merged = append(merged, b)
			continue
		}
		m := &merged[i]
		m.Transactions = max(m.Transactions, b.Transactions)
		if b.MinGasPrice != nil && (m.MinGasPrice == nil || *b.MinGasPrice < *m.MinGasPrice) {
			m.MinGasPrice = b.MinGasPrice
		}
	}
	// In key order: the block and transaction consumers upsert the same rows at once, and rows
	// locked in each batch's own order could deadlock.
	slices.SortFunc(merged, func(a, b app.BlockStat) int {
		return cmp.Or(strings.Compare(a.Chain, b.Chain), strings.Compare(a.Hash, b.Hash))
	})
	n := len(merged)
	chains, hashes := make([]string, n), make([]string, n)
	nums, txs := make([]int64, n), make([]int32, n)
	times, gas := make([]time.Time, n), make([]*float64, n)
	for i, b := range merged {
		chains[i], hashes[i], nums[i], times[i], txs[i], gas[i] = b.Chain, b.Hash, int64(b.Number), b.Time, int32(b.Transactions), b.MinGasPrice
	}
	var pc []string
	var pt []time.Time
	for c, t := range newest {
		pc, pt = append(pc, c), append(pt, t)
	}
	return s.write(ctx, "apply network blocks", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, sqlNetworkBlocksUpsert, chains, hashes, nums, times, txs, gas); err != nil {
			return false, err
		}
		_, err := tx.Exec(ctx, sqlNetworkBlocksPrune, pc, pt)
		return false, err
	})
}

// NetworkFigures returns the figures of GET /networks/status for every chain (with its native
// pricing id, parallel) that has a block not orphaned, by chain name.
func (s *Store) NetworkFigures(ctx context.Context, chains, pricingIDs []string) ([]app.NetworkFigures, error) {
	rows, err := s.pool.Query(ctx, sqlNetworkStatus, chains, pricingIDs)
	if err != nil {
		return nil, fmt.Errorf("network status: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.NetworkFigures, error) {
		var f app.NetworkFigures
		var tip int64
		err := r.Scan(&f.Chain, &tip, &f.TipTime, &f.WindowTxs, &f.Oldest, &f.OldestTxs, &f.GasPrice, &f.GasTime,
			&f.Transfers, &f.TransfersHour, &f.Price, &f.PriceTime, &f.MarketCap, &f.Volume24h, &f.Price24hBefore)
		f.Tip = uint64(tip)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("network status: %w", err)
	}
	return out, nil
}
