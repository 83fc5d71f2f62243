package engine

import (
	"hash/maphash"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// copies remembers, per partition, the last size transfers read and the offset each was first
// read at, so a transfer published again (ingest republishes a round, with the same event
// ids, after a publish that failed part way) is matched once. A transfer is its chain, id and
// block hash: the same transfer in another block after a reorg is another delivery. A record
// read again at the offset it was first read at (a replay, a catch-up) is not a copy.
//
// Transfers are remembered by a 64-bit hash of that identity: each costs about 40 bytes (the
// map entry and its place in the ring), so the default of 65,536 is about 2.5 MB a partition.
// A transfer whose hash is one of the window's (about one in 10^14 at the default) would be
// skipped.
type copies struct {
	size  int
	seed  maphash.Seed
	parts map[int]*copyWindow
}

// copyWindow is one partition's remembered transfers: first offsets by identity, and the
// identities in the order they were first read, the oldest forgotten first.
type copyWindow struct {
	first map[uint64]int64
	ring  []uint64
	next  int
}

func newCopies(size int) copies {
	return copies{size: size, seed: maphash.MakeSeed(), parts: map[int]*copyWindow{}}
}

// key is m's identity.
func (cs *copies) key(m *eventsv1.Transfer) uint64 {
	var h maphash.Hash
	h.SetSeed(cs.seed)
	_, _ = h.WriteString(m.GetChain())
	_ = h.WriteByte(0)
	_, _ = h.WriteString(m.GetId())
	_ = h.WriteByte(0)
	_, _ = h.WriteString(m.GetBlockHash())
	return h.Sum64()
}

// repeat reports whether r is a copy of a transfer read before at a lower offset of its
// partition, and remembers r when it is not.
func (cs *copies) repeat(r *Record) bool {
	if cs.size <= 0 || r.Msg == nil {
		return false
	}
	k := cs.key(r.Msg)
	w := cs.parts[r.Part]
	if w == nil {
		w = &copyWindow{first: map[uint64]int64{}}
		cs.parts[r.Part] = w
	}
	if off, ok := w.first[k]; ok {
		if off < r.Off {
			return true
		}
		w.first[k] = r.Off
		return false
	}
	if len(w.ring) < cs.size {
		w.ring = append(w.ring, k)
	} else {
		delete(w.first, w.ring[w.next])
		w.ring[w.next] = k
		w.next = (w.next + 1) % cs.size
	}
	w.first[k] = r.Off
	return false
}

// readBefore reports whether the transfer k of partition part was read live at an offset below
// off (no record is remembered).
func (cs *copies) readBefore(part int, k uint64, off int64) bool {
	w := cs.parts[part]
	if w == nil {
		return false
	}
	first, ok := w.first[k]
	return ok && first < off
}

// reset forgets partition part: its log starts again (ResetPartition), and the new log's
// offsets say nothing of the old one's.
func (cs *copies) reset(part int) { delete(cs.parts, part) }

// Seen is what a catch-up has matched so far: the first offset of each transfer among its
// records, so a copy of one among its later records is skipped, as the live feed skips copies.
// A catch-up reads records the live feed may have read too, or not (they may predate this
// replica): they are looked up in the live feed's window, and remembered apart from it, so a
// catch-up does not push the live feed's out. Seen{} is ready; nil remembers nothing.
type Seen map[seenKey]int64

type seenKey struct {
	part int
	k    uint64
}

// caughtRepeat reports whether r, read by a catch-up, is a copy of a transfer read before it:
// at a lower offset of its partition by the live feed or the same catch-up (seen).
func (cs *copies) caughtRepeat(r *Record, seen Seen) bool {
	if cs.size <= 0 || r.Msg == nil {
		return false
	}
	k := cs.key(r.Msg)
	if cs.readBefore(r.Part, k, r.Off) {
		return true
	}
	if seen == nil {
		return false
	}
	sk := seenKey{r.Part, k}
	if off, ok := seen[sk]; ok && off < r.Off {
		return true
	} else if !ok || r.Off < off {
		seen[sk] = r.Off
	}
	return false
}
