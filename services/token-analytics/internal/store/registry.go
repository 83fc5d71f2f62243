package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
)

// UpsertTokens merges registry updates and enqueues the market.tokens.v1 record of every entry
// whose record changed (including an entry that lost a deployment to another pricing id).
func (s *Store) UpsertTokens(ctx context.Context, us []app.TokenUpdate) error {
	if len(us) == 0 {
		return nil
	}
	// In pricing-id order (the order price writers quote in), so two writers of the same entries
	// lock their registry rows in one order and cannot deadlock.
	us = slices.Clone(us)
	slices.SortStableFunc(us, func(a, b app.TokenUpdate) int { return strings.Compare(a.PricingID, b.PricingID) })
	return s.write(ctx, "upsert tokens", func(tx pgx.Tx) (bool, error) {
		// Shared with price writers, taken alone by a republish: a change committed while a
		// republish reads is enqueued after the republished copy of its entry, never before it.
		if _, err := tx.Exec(ctx, sqlPricesLock); err != nil {
			return false, err
		}
		touched := map[string]bool{}
		b := &pgx.Batch{}
		for _, u := range us {
			touched[u.PricingID] = true
			b.Queue(sqlTokenUpsert, u.PricingID, u.Name, u.Symbol, u.TVTicker, u.Stablecoin, u.CirculatingSupply,
				u.TotalSupply, u.MarketCap, u.AllTimeHigh, u.AllTimeLow, u.Volume24h, u.Wrapped)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return false, err
		}
		b = &pgx.Batch{}
		for _, u := range us {
			for _, d := range u.Deployments {
				b.Queue(sqlDeploymentUpsert, d.Chain, d.Address, u.PricingID, d.Decimals).QueryRow(func(row pgx.Row) error {
					var old *string
					if err := row.Scan(&old); err != nil {
						return err
					}
					if old != nil {
						touched[*old] = true
					}
					return nil
				})
			}
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return false, err
		}
		ids := make([]string, 0, len(touched))
		for id := range touched {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return s.publishTokens(ctx, tx, ids)
	})
}

// publishTokens enqueues the registry records of ids that differ from the last enqueued.
func (s *Store) publishTokens(ctx context.Context, tx pgx.Tx, ids []string) (bool, error) {
	n, err := s.enqueueTokens(ctx, tx, ids, false)
	return n > 0, err
}

// enqueueTokens enqueues the registry records of ids, all of them or (!all) those that differ
// from the last enqueued, and returns how many it enqueued.
func (s *Store) enqueueTokens(ctx context.Context, tx pgx.Tx, ids []string, all bool) (int, error) {
	toks, published, err := tokens(ctx, tx, ids, nil)
	if err != nil {
		return 0, err
	}
	var keys []string
	var payloads [][]byte
	b := &pgx.Batch{}
	for i, t := range toks {
		p, err := proto.MarshalOptions{Deterministic: true}.Marshal(MarketToken(t))
		if err != nil {
			return 0, fmt.Errorf("encode market token: %w", err)
		}
		same := bytes.Equal(p, published[i])
		if same && !all {
			continue
		}
		keys, payloads = append(keys, t.PricingID), append(payloads, p)
		if !same {
			b.Queue(sqlTokenPublished, t.PricingID, p)
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, sqlOutboxInsert, eventsv1.TopicMarketTokens, keys, payloads); err != nil {
		return 0, fmt.Errorf("write outbox: %w", err)
	}
	return len(keys), nil
}

// MarketToken is the market.tokens.v1 record of a registry entry.
func MarketToken(t app.Token) *eventsv1.MarketToken {
	m := &eventsv1.MarketToken{PricingId: t.PricingID, Name: t.Name, Symbol: t.Symbol, Stablecoin: t.Stablecoin,
		TvTicker: t.TVTicker, CirculatingSupply: t.CirculatingSupply, MarketCap: t.MarketCap, AllTimeHigh: t.AllTimeHigh,
		AllTimeLow: t.AllTimeLow}
	for _, d := range t.Deployments {
		m.Deployments = append(m.Deployments, &eventsv1.MarketToken_Deployment{Chain: d.Chain, Address: d.Address, Decimals: d.Decimals})
	}
	return m
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// tokens reads registry entries (deployments on chains, all when empty) and their last
// published records.
func tokens(ctx context.Context, q querier, ids, chains []string) ([]app.Token, [][]byte, error) {
	rows, err := q.Query(ctx, sqlTokensGet, ids, nullChains(chains))
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []app.Token
	var pubs [][]byte
	for rows.Next() {
		var t app.Token
		var pt *time.Time
		var pub, deps []byte
		if err := rows.Scan(&t.PricingID, &t.Name, &t.Symbol, &t.TVTicker, &t.Stablecoin, &t.CirculatingSupply, &t.TotalSupply,
			&t.MarketCap, &t.AllTimeHigh, &t.AllTimeLow, &t.Price, &pt, &t.Volume24h, &pub, &deps); err != nil {
			return nil, nil, err
		}
		if pt != nil {
			t.PriceTime = pt.UTC()
		}
		if err := json.Unmarshal(deps, &t.Deployments); err != nil {
			return nil, nil, err
		}
		slices.SortStableFunc(t.Deployments, func(a, b app.Deployment) int { return chainOrder(a.Chain) - chainOrder(b.Chain) })
		out = append(out, t)
		pubs = append(pubs, pub)
	}
	return out, pubs, rows.Err()
}

// Tokens returns the registry entries of ids (unknown ids are left out), with their
// deployments on chains (all when empty).
func (s *Store) Tokens(ctx context.Context, ids, chains []string) ([]app.Token, error) {
	ts, _, err := tokens(ctx, s.pool, ids, chains)
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	return ts, nil
}

// KnownIDs returns the pricing ids among ids the registry holds, sorted.
func (s *Store) KnownIDs(ctx context.Context, ids []string) ([]string, error) {
	rows, err := s.pool.Query(ctx, sqlTokensKnown, ids)
	if err != nil {
		return nil, fmt.Errorf("read known tokens: %w", err)
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read known tokens: %w", err)
	}
	return known, nil
}

// PricingIDOf returns the pricing id of a deployment, or app.ErrNotFound.
func (s *Store) PricingIDOf(ctx context.Context, chain, address string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, sqlDeploymentGet, chain, address).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", app.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read deployment: %w", err)
	}
	return id, nil
}

// PollIDs returns up to limit pricing ids deployed on chains (all when empty), largest market
// cap first.
func (s *Store) PollIDs(ctx context.Context, chains []string, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx, sqlPollIDs, nullChains(chains), limit)
	if err != nil {
		return nil, fmt.Errorf("read poll ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read poll ids: %w", err)
	}
	return ids, nil
}

// chainOrder is a chain's place in the platform's list of chains (unknown ones last), the order
// a registry entry lists its deployments in.
func chainOrder(name string) int {
	for i, c := range chains.All {
		if c.Name == name {
			return i
		}
	}
	return len(chains.All)
}
