// Package store is the transfers service's PostgreSQL layer: batched, idempotent writes of chain
// data with their rollups, reorg removal, the attribution read model, and every read the API
// serves. All SQL of the service lives here and in its packages: write (the write path, natural
// ids, reorgs and rollup upkeep), attribution (the attribution read model and its cache), records
// (the rows it holds) and db (connections with the store's session settings). The reads and
// their query planner (plans.go) are this package's own.
package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/chainintel/chainintel/services/transfers/internal/store/write"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	db   *db.DB // the pool with the store's session settings
	opt  Options

	*write.Writer // the write path and rollup upkeep

	attrs *attribution.Model
	caps  capCache // counts known to be at the cap

	// shortPages counts first pages of an entity that edgeNewestPage read short and that were
	// read again hour by hour (ShortFirstPages).
	shortPages atomic.Int64

	mu        sync.Mutex
	parts     map[string]bool // transfers.transfers' partitions (attached), as of partsRead
	partsRead time.Time
}

// ShortFirstPages is how many first pages (and keyset page turns) of a live entity were read
// short from the pair rows that can hold them and read again hour by hour since the store was
// made: a cost, not an error (their answers are the same).
func (s *Store) ShortFirstPages() int64 { return s.shortPages.Load() }

// New returns a store over pool, whose schema is migrated, configured by o (DefaultOptions for
// the service's defaults).
func New(pool *pgxpool.Pool, o Options) *Store {
	d := db.New(pool)
	w := write.New(pool, d, write.Options{GroupMin: o.GroupMin, InlineRollups: o.InlineRollups, RollupLagMax: o.RollupLagMax,
		RollupBatch: o.RollupBatch, QueueLength: o.QueueLength})
	return &Store{pool: pool, db: d, opt: o, Writer: w, attrs: attribution.New(d, o.AttributionCache)}
}

// Chain records (package records).
type (
	TransferRow    = records.TransferRow
	TransactionRow = records.TransactionRow
	SwapRow        = records.SwapRow
)

// The write path's types (package write).
type (
	Block       = write.Block
	ReorgResult = write.ReorgResult
)

// ParkedRetention is write.ParkedRetention.
const ParkedRetention = write.ParkedRetention

// TransferUID is write.TransferUID.
func TransferUID(txHash, chain, id, blockHash string) [16]byte {
	return write.TransferUID(txHash, chain, id, blockHash)
}

// NaturalID is write.NaturalID.
func NaturalID(txHash, chain, id string) [16]byte { return write.NaturalID(txHash, chain, id) }

// Attributions returns what the attribution read model knows of keys, by key (attribution.Model).
func (s *Store) Attributions(ctx context.Context, keys []AddressKey) (map[AddressKey]Attribution, error) {
	return s.attrs.Attributions(ctx, keys)
}
