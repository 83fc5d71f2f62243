package usage

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/cache"
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

// IncludedReader reads a period's recorded included credits (Store.PeriodIncluded).
type IncludedReader interface {
	PeriodIncluded(ctx context.Context, e Entity, start time.Time) (int64, error)
}

// Defaults of IncludedOptions.
const (
	DefaultIncludedTTL     = 30 * time.Second
	DefaultIncludedFailTTL = 5 * time.Second
	DefaultIncludedTimeout = 300 * time.Millisecond
)

// IncludedOptions tunes an IncludedCache; a zero field takes its default.
type IncludedOptions struct {
	// TTL is how long a figure read is kept (DefaultIncludedTTL). A period's figure only grows,
	// and only when a key of a greater tier is first used in it, and the calling key's own tier
	// is always counted besides it, so an older figure errs towards the smaller allowance.
	TTL time.Duration
	// FailTTL is how long a failed read is remembered (DefaultIncludedFailTTL): calls meanwhile
	// get the failure at once (their key's own tier) instead of each waiting on PostgreSQL.
	FailTTL time.Duration
	// Timeout bounds one read (DefaultIncludedTimeout), whatever the caller's deadline: the
	// figure only ever adds to the key's own tier, so it is not worth holding a call or a
	// pooled connection for long.
	Timeout time.Duration
}

// IncludedCache remembers PeriodIncluded for a while, so the credit check of every call does
// not read PostgreSQL: one read per period and entity at a time, its answer kept for TTL and a
// failure for FailTTL.
type IncludedCache struct {
	r     IncludedReader
	reads *cache.Loader[periodKey, int64]
}

// NewIncludedCache reads through r.
func NewIncludedCache(r IncludedReader, o IncludedOptions) *IncludedCache {
	return &IncludedCache{r: r, reads: cache.New[periodKey, int64](flightName, cache.Options{
		TTL:     cmp.Or(o.TTL, DefaultIncludedTTL),
		FailTTL: cmp.Or(o.FailTTL, DefaultIncludedFailTTL),
		Timeout: cmp.Or(o.Timeout, DefaultIncludedTimeout),
		Abandon: true,
	})}
}

func flightName(k periodKey) string {
	return k.e.Type + "\x00" + k.e.ID + "\x00" + strconv.FormatInt(k.start.UnixNano(), 10)
}

// Cached is the figure kept for e's period starting at start, without reading.
func (c *IncludedCache) Cached(e Entity, start time.Time) (int64, bool) {
	return c.reads.Cached(periodKey{e: e, start: start})
}

// Included is PeriodIncluded, cached. A caller whose context ends first stops waiting; the
// read goes on for the others, bounded by Timeout.
func (c *IncludedCache) Included(ctx context.Context, e Entity, start time.Time) (int64, error) {
	return c.reads.Get(ctx, periodKey{e: e, start: start}, func(ctx context.Context) (int64, error) {
		return c.r.PeriodIncluded(ctx, e, start)
	})
}
