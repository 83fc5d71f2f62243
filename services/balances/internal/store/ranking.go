package store

import (
	"context"
	"math/big"
	"time"
)

// RankingQuery selects the rows of the entity balance ranking. A nil filter is not applied;
// an empty non-nil one matches nothing.
type RankingQuery struct {
	Chains []string  // chains counted (required)
	Day    time.Time // the UTC day whose end the previous balances are taken at
	// EntityIDs, Types, Tags (any of), NegatedTags (none of) and PricingIDs filter the rows.
	EntityIDs, Types, Tags, NegatedTags, PricingIDs []string
	// NativeChains and NativePricingIDs name each chain's native coin's pricing id, for tokens
	// the registry and the observations leave without one (as the app names tokens).
	NativeChains, NativePricingIDs []string
}

// EntityTokenBalance is an operator entity's balance of a (chain, token) now and at the end of
// the query's day.
type EntityTokenBalance struct {
	Entity, Chain, Token string
	Now, Prev            *big.Int
}

// EntityRanking returns, for every operator entity the query selects, its balances of each
// (chain, token) now and at the end of q.Day that are not both zero, ordered by entity, chain
// and token (read_entity_ranking.sql). It reads the maintained per-entity totals and the
// changes of the days after q.Day: O(selected entity tokens × days after q.Day) rows, none of
// the entities' addresses.
func (s *Store) EntityRanking(ctx context.Context, rq RankingQuery) ([]EntityTokenBalance, error) {
	rows, err := s.pool.Query(ctx, q("read_entity_ranking"), rq.Chains, rq.Day.Format(dateFmt), rq.EntityIDs, rq.Types, rq.Tags,
		rq.NegatedTags, rq.PricingIDs, rq.NativeChains, rq.NativePricingIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EntityTokenBalance
	for rows.Next() {
		var r EntityTokenBalance
		var cur, prev string
		if err := rows.Scan(&r.Entity, &r.Chain, &r.Token, &cur, &prev); err != nil {
			return nil, err
		}
		if r.Now, err = parseInt(cur); err != nil {
			return nil, err
		}
		if r.Prev, err = parseInt(prev); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
