package read

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
)

// Options configure a Reader (the store's Options say what each means).
type Options struct {
	ListSetMax       int
	LateralMax       int
	CountChunkDays   int
	PairJoinMax      int
	PairUIDs         bool
	PartitionRefresh time.Duration
}

// Reader serves every read of the API: /transfers through its planner (plans.go) and the other
// routes' reads. It is safe for concurrent use.
type Reader struct {
	db    *db.DB
	opt   Options
	attrs *attribution.Model // read beside a page (Page.Attributions)
	caps  capCache           // counts known to be at the cap

	// shortPages counts first pages of an entity that entityPairNewestPage read short and that were
	// read again hour by hour (ShortFirstPages).
	shortPages atomic.Int64

	mu        sync.Mutex
	parts     map[string]bool // transfers.transfers' partitions (attached), as of partsRead
	partsRead time.Time
}

// New returns a reader through d, reading attributions beside pages from attrs.
func New(d *db.DB, attrs *attribution.Model, o Options) *Reader {
	return &Reader{db: d, opt: o, attrs: attrs}
}

// The records and attributions the reads return.
type (
	TransferRow    = records.TransferRow
	TransactionRow = records.TransactionRow
	SwapRow        = records.SwapRow
	AddressKey     = attribution.AddressKey
	Attribution    = attribution.Attribution
)

// ShortFirstPages is how many first pages (and keyset page turns) of a live entity were read
// short from the pair rows that can hold them and read again hour by hour since the reader was
// made: a cost, not an error (their answers are the same).
func (s *Reader) ShortFirstPages() int64 { return s.shortPages.Load() }

// CappedCountHits is how many counts the reader answered from the counts it knows are capped.
func (s *Reader) CappedCountHits() int64 { return s.caps.hits.Load() }
