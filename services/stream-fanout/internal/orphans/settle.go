package orphans

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
)

// settleWait bounds how long a decision to skip a transfer of a marked block waits for the
// reorg topic to be read up to its end: the engine's goroutine may be the one waiting, and
// every match of the replica waits with it.
const settleWait = 3 * time.Second

// follower is Follow's progress through chain.reorgs.v1, and the checks that it has read up
// to the topic's end (Set.fmu guards it).
type follower struct {
	ctx               context.Context
	reorgs, transfers feed.Topic
	log               *slog.Logger
	// read is, per partition followed, the next offset to apply: every record below it is
	// applied. moved is closed, and replaced, when read advances.
	read  map[int]int64
	moved chan struct{}
	// covered is, per partition of chain.transfers.v1, where it ended when the latest check
	// that succeeded read its end: every reorg written before a record below that is applied.
	// asked are the partitions Settle was asked about, which every check reads. gen counts the
	// transfer topic's resets (TransfersReset): a check begun before one records nothing.
	covered map[int]int64
	asked   map[int]bool
	gen     uint64
	// round is the check in flight (nil: none).
	round *round
	// failing is set when a check, or a wait for one, did not finish within the bound: until
	// a check succeeds again Settle decides at once, with the reorgs read so far. undecided
	// counts those decisions since failing was set.
	failing   bool
	undecided uint64
}

// round is one check of the topics' ends; stopped is set, before done closes, when Follow had
// ended.
type round struct {
	done    chan struct{}
	stopped bool
}

// advance records that partition part of the reorg topic is applied below next.
func (s *Set) advance(part int, next int64) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	f := s.f
	if f == nil {
		return
	}
	f.read[part] = next
	close(f.moved)
	f.moved = make(chan struct{})
}

// TransfersReset forgets what the checks found of partition part of chain.transfers.v1, whose
// log starts again (the topic was recreated): its offsets are a new log's.
func (s *Set) TransfersReset(part int) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if f := s.f; f != nil {
		delete(f.covered, part)
		f.gen++
	}
}

// Settle makes sure the reorgs written to the broker before the records of
// chain.transfers.v1 below upTo (per partition) are applied, before a transfer among them is
// decided on: it asks the broker where the transfer topic's partitions end, then where the
// reorg topic's end (a reorg written before a record below the former is below the latter),
// and waits until Follow has read up to there. A check covers every record below the ends it
// read, so a burst of transfers of one block costs one check (two ListOffsets calls). It
// waits at most the Set's bound (settleWait) and reports false when the reorg topic was not
// read up to its end by then, or, without waiting, while checks keep failing so (until one
// succeeds): the caller then decides with the reorgs read so far (Skip counts such decisions,
// Unsettled; the first failure of a row and the recovery are logged). Without Follow it
// reports true at once.
func (s *Set) Settle(ctx context.Context, upTo map[int]int64) bool {
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	for {
		r, failing := s.pending(upTo)
		if r == nil {
			return true
		}
		if failing {
			return false
		}
		select {
		case <-r.done:
			if r.stopped {
				return false
			}
		case <-timer.C:
			s.fmu.Lock()
			s.fail(s.f, nil)
			s.fmu.Unlock()
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// pending returns nil when the checks so far cover upTo; otherwise the check in flight
// (started when there is none) and whether checks are failing.
func (s *Set) pending(upTo map[int]int64) (*round, bool) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	f := s.f
	if f == nil {
		return nil, false
	}
	covered := true
	for p, off := range upTo {
		if off > f.covered[p] {
			covered = false
			f.asked[p] = true
		}
	}
	if covered {
		return nil, false
	}
	if f.round == nil {
		f.round = &round{done: make(chan struct{})}
		s.checks.Add(1)
		go s.check(f, f.round)
	}
	return f.round, f.failing
}

// check reads the topics' ends and waits, within the bound, until f has read the reorg topic
// up to its.
func (s *Set) check(f *follower, r *round) {
	ctx, cancel := context.WithTimeout(f.ctx, s.wait)
	defer cancel()
	s.fmu.Lock()
	tparts, rparts := slices.Collect(maps.Keys(f.asked)), slices.Collect(maps.Keys(f.read))
	gen := f.gen
	s.fmu.Unlock()
	// The transfer topic's first: its records below those ends were written before the reorg
	// topic's ends are asked, so every reorg ingest published before them is below these.
	tends, err := f.transfers.Ends(ctx, tparts)
	var rends map[int]int64
	if err == nil {
		rends, err = f.reorgs.Ends(ctx, rparts)
	}
	if err == nil && (len(tends) < len(tparts) || len(rends) < len(rparts)) {
		err = errors.New("a partition's end not answered")
	}
	caught := err == nil && s.reach(ctx, f, rends)
	s.fmu.Lock()
	defer s.fmu.Unlock()
	defer close(r.done)
	f.round = nil
	switch {
	case caught:
		if gen == f.gen {
			for p, end := range tends {
				f.covered[p] = max(f.covered[p], end)
			}
		}
		if f.failing {
			f.log.Info("the reorg topic is read up to its end again: transfers of orphaned blocks are decided once the reorgs before them are read",
				"decidedWithoutWaiting", f.undecided)
			f.failing, f.undecided = false, 0
		}
	case f.ctx.Err() != nil:
		r.stopped = true
	default:
		s.fail(f, err)
	}
}

// reach waits until f has read every partition of ends up to its end; false when ctx ends first.
func (s *Set) reach(ctx context.Context, f *follower, ends map[int]int64) bool {
	for {
		s.fmu.Lock()
		behind := false
		for p, end := range ends {
			if f.read[p] < end {
				behind = true
				break
			}
		}
		moved := f.moved
		s.fmu.Unlock()
		if !behind {
			return true
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		}
	}
}

// undecided counts a decision made without the reorg topic read up to its end.
func (s *Set) undecided() {
	s.unsettled.Add(1)
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if f := s.f; f != nil {
		f.undecided++
	}
}

// fail sets f failing, logging the first failure of a row (s.fmu held).
func (s *Set) fail(f *follower, err error) {
	if f.failing {
		return
	}
	f.failing = true
	f.log.Warn("the reorg topic was not read up to its end in time: transfers of orphaned blocks are decided with the reorgs read so far (one of a block named canonical again since is skipped) until it is",
		"bound", s.wait, "error", err)
}

// Checks is how many checks of the reorg topic's ends Settle made.
func (s *Set) Checks() uint64 { return s.checks.Load() }

// Unsettled is how many decisions on transfers of marked blocks were made without the reorg
// topic read up to its end (Skip's Settle reporting false).
func (s *Set) Unsettled() uint64 { return s.unsettled.Load() }
