// Package store is the transfers service's PostgreSQL layer: batched, idempotent writes of chain
// data with their rollups, reorg removal, the attribution read model, and every read the API
// serves. All SQL of the service lives here.
package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	db   *db.DB // the pool with the store's session settings
	opt  Options

	memb  membCache
	attrs *attribution.Model
	rq    rollupQueue
	caps  capCache // counts known to be at the cap

	// shortPages counts first pages of an entity that edgeNewestPage read short and that were
	// read again hour by hour (ShortFirstPages).
	shortPages atomic.Int64

	mu         sync.Mutex
	partitions map[string]bool // "<table>:<YYYYMM>" known to exist
	parts      map[string]bool // transfers.transfers' partitions (attached), as of partsRead
	partsRead  time.Time
}

// ShortFirstPages is how many first pages (and keyset page turns) of a live entity were read
// short from the pair rows that can hold them and read again hour by hour since the store was
// made: a cost, not an error (their answers are the same).
func (s *Store) ShortFirstPages() int64 { return s.shortPages.Load() }

// New returns a store over pool, whose schema is migrated, configured by o (DefaultOptions for
// the service's defaults).
func New(pool *pgxpool.Pool, o Options) *Store {
	d := db.New(pool)
	return &Store{pool: pool, db: d, opt: o, attrs: attribution.New(d, o.AttributionCache), partitions: map[string]bool{},
		rq: rollupQueue{queued: !o.InlineRollups, lagMax: o.RollupLagMax, batch: o.RollupBatch, lengthFn: o.QueueLength, wake: make(chan struct{}, 1)}}
}

// ensurePartitions creates the monthly partitions of table that times fall in.
func (s *Store) ensurePartitions(ctx context.Context, table string, times []time.Time) error {
	var missing []time.Time
	seen := map[string]bool{}
	s.mu.Lock()
	for _, t := range times {
		k := table + ":" + t.UTC().Format("200601")
		if !s.partitions[k] && !seen[k] {
			seen[k] = true
			missing = append(missing, t)
		}
	}
	s.mu.Unlock()
	for _, t := range missing {
		if _, err := s.pool.Exec(ctx, `SELECT transfers.ensure_partition($1, $2)`, table, t); err != nil {
			return fmt.Errorf("create %s partition for %s: %w", table, t.UTC().Format("2006-01"), err)
		}
		s.mu.Lock()
		s.partitions[table+":"+t.UTC().Format("200601")] = true
		s.mu.Unlock()
	}
	return nil
}

// Attributions returns what the attribution read model knows of keys, by key (attribution.Model).
func (s *Store) Attributions(ctx context.Context, keys []AddressKey) (map[AddressKey]Attribution, error) {
	return s.attrs.Attributions(ctx, keys)
}
