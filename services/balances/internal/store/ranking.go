package store

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// RankingQuery selects the rows of the entity balance ranking. A nil filter is not applied;
// an empty non-nil one matches nothing.
type RankingQuery struct {
	Chains []string  // chains counted (required)
	Day    time.Time // the UTC day whose end the previous balances are taken at
	// EntityIDs, Types, Tags (any of), NegatedTags (none of) and PricingIDs filter the rows.
	EntityIDs, Types, Tags, NegatedTags, PricingIDs []string
	// Natives maps each chain to its native coin's pricing id (the catalogue's), for tokens the
	// registry and the observations leave without one (as the app names tokens).
	Natives map[string]string
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
// the entities' addresses. The read runs under the store's ranking timeout; past it the error is
// a *TimeoutError.
func (s *Store) EntityRanking(ctx context.Context, rq RankingQuery) ([]EntityTokenBalance, error) {
	ncs, nids := nativeArrays(rq.Natives)
	var out []EntityTokenBalance
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("ranking_timeout"), fmt.Sprintf("%dms", s.rankingTimeout.Milliseconds())); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q("read_entity_ranking"), rq.Chains, rq.Day.Format(dateFmt), rq.EntityIDs, rq.Types, rq.Tags,
			rq.NegatedTags, rq.PricingIDs, ncs, nids)
		if err != nil {
			return err
		}
		out, err = scanRanking(rows)
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "57014" && ctx.Err() == nil { // query_canceled: the statement_timeout, not the caller
		return nil, &TimeoutError{What: "the entity balance ranking", Limit: s.rankingTimeout}
	}
	return out, err
}

// TimeoutError is a read stopped by its statement_timeout (the caller's context still live).
type TimeoutError struct {
	What  string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s took longer than its limit of %s", e.What, e.Limit)
}

func scanRanking(rows pgx.Rows) ([]EntityTokenBalance, error) {
	defer rows.Close()
	var out []EntityTokenBalance
	for rows.Next() {
		var r EntityTokenBalance
		var cur, prev string
		if err := rows.Scan(&r.Entity, &r.Chain, &r.Token, &cur, &prev); err != nil {
			return nil, err
		}
		var err error
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
