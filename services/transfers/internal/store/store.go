// Package store is the transfers service's PostgreSQL layer: batched, idempotent writes of chain
// data with their rollups, reorg removal, the attribution read model, and every read the API
// serves. All SQL of the service lives in its packages, and Store puts them together:
//
//   - write: the write path, natural ids, reorgs, attribution changes and rollup upkeep;
//   - read: every read the API serves, /transfers through one planner (read/plans.go) that
//     chooses among named plans;
//   - attribution: the attribution read model and its cache;
//   - records: the rows the store holds and the names of attribution groups;
//   - db: connections with the store's session settings, shared by the others.
package store

import (
	"context"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/read"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/chainintel/chainintel/services/transfers/internal/store/write"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the write path, the reads and the attribution read model over one pool, configured
// by one Options. It is safe for concurrent use.
type Store struct {
	*write.Writer
	*read.Reader
	attrs *attribution.Model
}

// New returns a store over pool, whose schema is migrated, configured by o (DefaultOptions for
// the service's defaults).
func New(pool *pgxpool.Pool, o Options) *Store {
	d := db.New(pool)
	w := write.New(pool, d, write.Options{GroupMin: o.GroupMin, InlineRollups: o.InlineRollups, RollupLagMax: o.RollupLagMax,
		RollupBatch: o.RollupBatch, QueueLength: o.QueueLength})
	attrs := attribution.New(d, o.AttributionCache)
	r := read.New(d, attrs, read.Options{ListSetMax: o.ListSetMax, LateralMax: o.LateralMax, CountChunkDays: o.CountChunkDays,
		PairJoinMax: o.PairJoinMax, PairUIDs: o.PairUIDs, PartitionRefresh: o.PartitionRefresh})
	return &Store{Writer: w, Reader: r, attrs: attrs}
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

// The reads' types (package read).
type (
	AddrFilter         = read.AddrFilter
	AddrSet            = read.AddrSet
	TransferFilter     = read.TransferFilter
	SwapFilter         = read.SwapFilter
	Page               = read.Page
	TransferPage       = read.TransferPage
	Attributed         = read.Attributed
	Bucket             = read.Bucket
	FlowPoint          = read.FlowPoint
	CounterpartyFilter = read.CounterpartyFilter
	Counterparty       = read.Counterparty
	Activity           = read.Activity
	ExchangeVolume     = read.ExchangeVolume
)

// MaxCount caps the match count of list queries.
const MaxCount = read.MaxCount

// Granularity of a histogram.
const (
	Hour = read.Hour
	Day  = read.Day
)

// Addrs is a set of listed addresses.
func Addrs(a []string) AddrSet { return read.Addrs(a) }

// Attributions returns what the attribution read model knows of keys, by key (attribution.Model).
func (s *Store) Attributions(ctx context.Context, keys []AddressKey) (map[AddressKey]Attribution, error) {
	return s.attrs.Attributions(ctx, keys)
}
