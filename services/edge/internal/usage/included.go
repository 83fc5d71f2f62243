package usage

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"
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
	r       IncludedReader
	timeout time.Duration
	ok      *expirable.LRU[periodKey, int64]
	failed  *expirable.LRU[periodKey, error]
	reads   singleflight.Group
}

// NewIncludedCache reads through r.
func NewIncludedCache(r IncludedReader, o IncludedOptions) *IncludedCache {
	o.TTL = cmp.Or(o.TTL, DefaultIncludedTTL)
	o.FailTTL = cmp.Or(o.FailTTL, DefaultIncludedFailTTL)
	o.Timeout = cmp.Or(o.Timeout, DefaultIncludedTimeout)
	return &IncludedCache{r: r, timeout: o.Timeout,
		ok:     expirable.NewLRU[periodKey, int64](100_000, nil, o.TTL),
		failed: expirable.NewLRU[periodKey, error](10_000, nil, o.FailTTL)}
}

// Cached is the figure kept for e's period starting at start, without reading.
func (c *IncludedCache) Cached(e Entity, start time.Time) (int64, bool) {
	return c.ok.Get(periodKey{e: e, start: start})
}

// Included is PeriodIncluded, cached. A caller whose context ends first stops waiting; the
// read goes on for the others, bounded by Timeout.
func (c *IncludedCache) Included(ctx context.Context, e Entity, start time.Time) (int64, error) {
	k := periodKey{e: e, start: start}
	if n, ok := c.ok.Get(k); ok {
		return n, nil
	}
	if err, ok := c.failed.Get(k); ok {
		return 0, err
	}
	sk := e.Type + "\x00" + e.ID + "\x00" + strconv.FormatInt(start.UnixNano(), 10)
	ch := c.reads.DoChan(sk, func() (any, error) {
		if n, ok := c.ok.Get(k); ok { // a read that ended just before this one started
			return n, nil
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
		defer cancel()
		n, err := c.r.PeriodIncluded(rctx, e, start)
		if err != nil {
			c.failed.Add(k, err)
			return int64(0), err
		}
		c.failed.Remove(k)
		c.ok.Add(k, n)
		return n, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return 0, res.Err
		}
		return res.Val.(int64), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
