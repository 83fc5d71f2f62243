package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// RepublishMaxPoints bounds the points of one granularity a republish sends per pricing id
// after its window's start (an hourly history has 48 in ingest's 48 h window).
const RepublishMaxPoints = 64

// Republished is what a republish enqueued.
type Republished struct {
	Skipped bool      // another replica republished after the SkipAfter asked for
	Last    time.Time // when Skipped: when that replica's republish ran
	Tokens  int       // market.tokens.v1 records
	Prices  int       // market.prices.v1 records
}

// Republish enqueues again, whatever was sent before, the market.tokens.v1 record of every
// registry entry and the market.prices.v1 records a consumer reading the topic from its start
// needs to price any time from since on (see sql/republish_prices.sql) for the pricing ids
// deployed on chains (all when empty). The broker may have lost what was sent (an in-memory
// broker restarted, a retention that expired); consumers apply records idempotently. One
// replica republishes at a time; with a non-zero skipAfter, nothing is done when a republish
// was recorded after it.
func (s *Store) Republish(ctx context.Context, since time.Time, chains []string, skipAfter, now time.Time) (Republished, error) {
	var r Republished
	err := s.write(ctx, "republish", func(tx pgx.Tx) (bool, error) {
		r = Republished{}
		if _, err := tx.Exec(ctx, sqlRepublishLock); err != nil {
			return false, err
		}
		var last time.Time
		err := tx.QueryRow(ctx, sqlRepublishedGet).Scan(&last)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return false, err
		}
		if !skipAfter.IsZero() && last.After(skipAfter) {
			r.Skipped, r.Last = true, last
			return false, nil
		}
		if _, err := tx.Exec(ctx, sqlRepublishedSet, now); err != nil {
			return false, err
		}
		if err := s.republishTokens(ctx, tx, &r); err != nil {
			return false, err
		}
		rows, err := tx.Query(ctx, sqlRepublishPrices, since, nullChains(chains), RepublishMaxPoints)
		if err != nil {
			return false, err
		}
		ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.PricePoint, error) {
			var p app.PricePoint
			var g int16
			err := r.Scan(&p.PricingID, &g, &p.Time, &p.Price, &p.MarketCap, &p.Volume)
			p.Granularity, p.Time = app.Granularity(g), p.Time.UTC()
			return p, err
		})
		if err != nil {
			return false, err
		}
		r.Prices = len(ps)
		return r.Tokens+r.Prices > 0, enqueuePrices(ctx, tx, ps)
	})
	if err != nil {
		return Republished{}, fmt.Errorf("republish: %w", err)
	}
	return r, nil
}

// republishTokens enqueues every registry entry's record, a page at a time.
func (s *Store) republishTokens(ctx context.Context, tx pgx.Tx, r *Republished) error {
	rows, err := tx.Query(ctx, sqlRepublishIDs)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	const page = 1000
	for len(ids) > 0 {
		n := min(page, len(ids))
		sent, err := s.enqueueTokens(ctx, tx, ids[:n], true)
		if err != nil {
			return err
		}
		r.Tokens += sent
		ids = ids[n:]
	}
	return nil
}
