package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// PriceHistory returns id's price points of granularity g with from <= time <= to, oldest
// first, with market cap and volume (0 where the source gave none).
func (s *Store) PriceHistory(ctx context.Context, id string, g app.Granularity, from, to time.Time) ([]app.Quote, error) {
	return s.quotes(ctx, "read price history", sqlPriceHistory, id, int16(g), from, to)
}

// RecentPriceHistory returns the points of id with from < time <= to, of the finest granularity
// stored at each time (hourly where there is one, else daily), the newest limit of them, oldest
// first, with market cap and volume (0 where the source gave none).
func (s *Store) RecentPriceHistory(ctx context.Context, id string, from, to time.Time, limit int) ([]app.Quote, error) {
	return oldestFirst(s.quotes(ctx, "read recent price history", sqlPriceHistoryRecent, id, from, to, limit))
}

// NewestPriceHistory returns the newest limit points of granularity g of id, oldest first, with
// market cap and volume (0 where the source gave none).
func (s *Store) NewestPriceHistory(ctx context.Context, id string, g app.Granularity, limit int) ([]app.Quote, error) {
	return oldestFirst(s.quotes(ctx, "read price history", sqlPriceHistoryNewest, id, int16(g), limit))
}

// quotes runs a statement answering (time, price, market cap, volume) and returns its rows in
// its order, the one reader of every price history.
func (s *Store) quotes(ctx context.Context, what, sql string, args ...any) ([]app.Quote, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Quote, error) {
		var q app.Quote
		err := r.Scan(&q.Time, &q.USD, &q.MarketCap, &q.Volume24h)
		q.Time = q.Time.UTC()
		return q, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// oldestFirst reverses the quotes of a statement answering newest first (a backward scan that
// stops at its limit).
func oldestFirst(qs []app.Quote, err error) ([]app.Quote, error) {
	slices.Reverse(qs)
	return qs, err
}

// MarketPrices returns, in one round trip (a batch of two statements), the price in force at
// each of times (the newest point of any granularity at or before it) of id, in the order of
// times, nil where there is none (two index probes per time); and the highest and lowest
// stored point of id with from < time <= to, nil when there is none.
func (s *Store) MarketPrices(ctx context.Context, id string, times []time.Time, from, to time.Time) (ago []*float64, high, low *float64, err error) {
	b := &pgx.Batch{}
	b.Queue(sqlPriceInForceTimes, id, times).Query(func(rows pgx.Rows) error {
		var err error
		ago, err = pgx.CollectRows(rows, pgx.RowTo[*float64])
		return err
	})
	b.Queue(sqlPriceWindowExtremes, id, from, to).QueryRow(func(row pgx.Row) error { return row.Scan(&high, &low) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, nil, fmt.Errorf("market prices of %s: %w", id, err)
	}
	return ago, high, low, nil
}

// FirstPriceTime returns the time of id's oldest stored point (zero when it has none).
func (s *Store) FirstPriceTime(ctx context.Context, id string) (time.Time, error) {
	var t *time.Time
	if err := s.pool.QueryRow(ctx, sqlPriceFirstTime, id).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("first price of %s: %w", id, err)
	}
	if t == nil {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}
