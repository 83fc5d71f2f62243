package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jackc/pgx/v5"
)

// PeriodIncluded returns the included credits recorded for the period of e starting at start: the
// greatest of the tiers of e's keys that made calls in it (0 when none was recorded yet).
func (s *Store) PeriodIncluded(ctx context.Context, e Entity, start time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT credits_included FROM edge.credit_periods
		WHERE entity_type = $1 AND entity_id = $2 AND period_start = $3`, e.Type, e.ID, start).Scan(&n)
	if err == pgx.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("included credits of %s %s: %w", e.Type, e.ID, err)
	}
	return n, nil
}

// IncludedCache remembers PeriodIncluded for a while, so the credit check of every call does
// not read PostgreSQL: a period's included credits only grow, and only when a key of a greater
// tier is first used in it, so a figure a little old errs towards the smaller allowance.
type IncludedCache struct {
	store *Store
	cache *expirable.LRU[periodKey, int64]
}

// NewIncludedCache reads through s, keeping each answer for ttl.
func NewIncludedCache(s *Store, ttl time.Duration) *IncludedCache {
	return &IncludedCache{store: s, cache: expirable.NewLRU[periodKey, int64](100_000, nil, ttl)}
}

// Included is PeriodIncluded, cached.
func (c *IncludedCache) Included(ctx context.Context, e Entity, start time.Time) (int64, error) {
	k := periodKey{e: e, start: start}
	if n, ok := c.cache.Get(k); ok {
		return n, nil
	}
	n, err := c.store.PeriodIncluded(ctx, e, start)
	if err != nil {
		return 0, err
	}
	c.cache.Add(k, n)
	return n, nil
}
