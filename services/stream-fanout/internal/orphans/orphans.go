// Package orphans holds the block hashes chain.reorgs.v1 says were orphaned, which every
// replica reads whole for itself (the reorg topic is small: one record per reorg): a transfer of
// such a block is neither delivered live once the replica has read its reorg nor replayed by a
// resume, and is not charged.
package orphans

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// block names a block on a chain; its hash in the canonical form the transfers are normalised
// to (render.Normalize).
type block struct{ chain, hash string }

// Set is the orphaned blocks a replica knows of, each with when it was orphaned or last had a
// transfer skipped; safe for concurrent use.
type Set struct {
	// keep is how long a mark outlives its reorg (or the last transfer of its block skipped):
	// a resume reads back no transfer older than the longest session window, and a transfer of
	// the block published late refreshes it.
	keep time.Duration
	now  func() time.Time

	mu     sync.RWMutex
	blocks map[block]time.Time

	// wait bounds Settle.
	wait time.Duration
	// fmu guards f, Follow's progress (nil before Follow).
	fmu sync.Mutex
	f   *follower
	// checks counts Settle's checks of the reorg topic's ends; unsettled the decisions it could
	// not make with the topic read up to its end.
	checks, unsettled atomic.Uint64
}

// New returns an empty set whose marks are kept for keep; now is the clock (nil: time.Now).
func New(keep time.Duration, now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	return &Set{keep: keep, now: now, blocks: map[block]time.Time{}, wait: settleWait}
}

// Apply applies a reorg the broker took at at: its orphaned blocks are marked, and the blocks
// it names canonical again (the chain went back to them; ingest names them before publishing
// their events again) are unmarked. Marks older than keep are dropped. It returns how many
// blocks it marked and unmarked.
func (s *Set) Apply(r *eventsv1.Reorg, at time.Time) (orphaned, restored int) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for b, t := range s.blocks {
		if now.Sub(t) > s.keep {
			delete(s.blocks, b)
		}
	}
	chain := r.GetChain()
	for _, b := range r.GetCanonical() {
		k := block{chain, address.CanonicalHash(b.GetHash())}
		if _, ok := s.blocks[k]; ok {
			delete(s.blocks, k)
			restored++
		}
	}
	if now.Sub(at) > s.keep {
		return 0, restored
	}
	for _, b := range r.GetOrphaned() {
		if b.GetHash() == "" {
			continue
		}
		s.blocks[block{chain, address.CanonicalHash(b.GetHash())}] = at
		orphaned++
	}
	return orphaned, restored
}

// Orphaned reports whether chain's block hash (canonical form) is marked orphaned.
func (s *Set) Orphaned(chain, hash string) bool {
	k := block{chain, hash}
	s.mu.RLock()
	_, ok := s.blocks[k]
	s.mu.RUnlock()
	return ok
}

// Skip reports whether a transfer of chain's block hash (canonical form), one of the records
// of chain.transfers.v1 below upTo (per partition: the offset after the last record
// concerned), is to be skipped, the block being orphaned. A marked block's mark is decided on
// only once the reorgs written to the broker before those records are applied (Settle, which
// may wait): a Reorg naming the block canonical again, which ingest publishes before the
// block's transfers, is read side by side with them and may not have been yet. A skip
// refreshes the mark, so that the transfers ingest publishes late are skipped for as long as
// the mark's own reorg's would be.
func (s *Set) Skip(chain, hash string, upTo map[int]int64) bool {
	if !s.Orphaned(chain, hash) {
		return false
	}
	if !s.Settle(context.Background(), upTo) {
		s.undecided()
	}
	k := block{chain, hash}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.blocks[k]; !ok {
		return false
	}
	s.blocks[k] = s.now()
	return true
}

// SkipRecord is Skip for the transfer at offset off of partition part of chain.transfers.v1.
func (s *Set) SkipRecord(chain, hash string, part int, off int64) bool {
	return s.Orphaned(chain, hash) && s.Skip(chain, hash, map[int]int64{part: off + 1})
}

// Len is how many blocks are marked.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.blocks)
}

// Follow applies chain.reorgs.v1 (t) from its start (what retention kept) until ctx ends;
// loaded is called once every partition has been read up to where it ended when Follow began,
// so a replica serves no resume or transfer before it knows every reorg published before it
// started. Settle waits on its progress, asking where transfers (chain.transfers.v1) and t
// end; it is called once per Set.
func (s *Set) Follow(ctx context.Context, t, transfers feed.Topic, log *slog.Logger, loaded func()) error {
	start, err := t.Offsets(ctx, false)
	if err != nil {
		return err
	}
	end, err := t.Offsets(ctx, true)
	if err != nil {
		return err
	}
	s.fmu.Lock()
	s.f = &follower{ctx: ctx, reorgs: t, transfers: transfers, log: log, read: maps.Clone(start), moved: make(chan struct{}),
		covered: map[int]int64{}, asked: map[int]bool{}}
	s.fmu.Unlock()
	ld := feed.NewLoaded(start, end, loaded)
	return t.Follow(ctx, start, func(m kafka.Message) {
		s.apply(m, log)
		s.advance(m.Partition, m.Offset+1)
		ld.Record(m.Partition, m.Offset)
	}, func(g feed.Gap) {
		s.advance(g.Partition, g.To)
		ld.Gap(g)
	})
}

// apply decodes and applies one reorg record.
func (s *Set) apply(m kafka.Message, log *slog.Logger) {
	if m.Value == nil {
		return
	}
	r := &eventsv1.Reorg{}
	if err := proto.Unmarshal(m.Value, r); err != nil || r.GetChain() == "" {
		log.Warn("skipping an undecodable reorg", "partition", m.Partition, "offset", m.Offset, "error", err)
		return
	}
	at := m.Time
	if at.IsZero() {
		// A record without a timestamp: when ingest detected the reorg, else now.
		at = s.now()
		if d := r.GetDetectedAtMs(); d > 0 {
			at = time.UnixMilli(d)
		}
	}
	orphaned, restored := s.Apply(r, at)
	if orphaned > 0 || restored > 0 {
		log.Info("reorg applied: transfers of its orphaned blocks are neither delivered nor replayed",
			"chain", r.GetChain(), "orphanedBlocks", orphaned, "canonicalAgain", restored, "marked", s.Len())
	}
}
