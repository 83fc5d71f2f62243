package ws

import (
	"maps"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// boundReplay renders what a connection leaving session id had not sent (raw: messages of an
// earlier replay buffer; items: deliveries, in the order they were owed) into the messages its
// replay buffer stores, at most Options.ReplayMaxBytes of them, and returns them with the
// position to save (cursor, where the session was served up to).
//
// The buffer keeps the first transfer's deliveries, then the longest run of those after them
// that fits. Those past it are
// not lost: the returned position of each partition they are of is the smallest offset among
// them, so the resume's catch-up reads them again from the transfer topic and delivers them
// then (charged once, when sent). A delivery of the kept run at or past that offset (another
// filter's match of a transfer cut, or one owed out of offset order) is dropped from the
// buffer too, as the catch-up delivers it again. raw, of a buffer bounded when it was saved,
// is kept whole: where its messages were read from is not known.
//
// With no position to save (nil cursor), nothing is cut: the stored position stays, and
// deliveries past it could not be read again.
func (c *conn) boundReplay(id string, raw [][]byte, items []engine.Item, cursor map[int]int64) ([][]byte, map[int]int64) {
	rendered := c.renderUnsent(nil, items)
	budget := c.h.o.ReplayMaxBytes
	for _, r := range raw {
		budget -= len(r)
	}
	// The first transfer's deliveries may have been sent in part (a batch cut short, or a
	// transfer matching more filters than the writer's batch): a catch-up from it would
	// deliver that part twice, so they are all kept whatever their size.
	keep := 0
	for keep < len(items) && (keep == 0 || sameRecord(items[keep], items[0])) {
		budget -= len(rendered[keep])
		keep++
	}
	for keep < len(rendered) && len(rendered[keep]) <= budget {
		budget -= len(rendered[keep])
		keep++
	}
	if keep == len(items) || cursor == nil {
		return append(raw, rendered...), cursor
	}
	back := map[int]int64{}
	for _, it := range items[keep:] {
		if off, ok := back[it.R.Part]; !ok || it.R.Off < off {
			back[it.R.Part] = it.R.Off
		}
	}
	out := raw
	for i, it := range items[:keep] {
		if off, ok := back[it.R.Part]; ok && it.R.Off >= off {
			continue
		}
		out = append(out, rendered[i])
	}
	pos := maps.Clone(cursor)
	for p, off := range back {
		if cur, ok := pos[p]; !ok || off < cur {
			pos[p] = off
		}
	}
	c.h.o.Log.Info("a dropped connection's session owes more than its replay buffer holds (STREAM_REPLAY_MAX_BYTES); the rest is read again from the transfer topic at its resume",
		"session", id, "stored", len(out)-len(raw), "fromTopic", len(items)-(len(out)-len(raw)), "position", pos)
	return out, pos
}

// sameRecord reports whether a and b are deliveries of one transfer record.
func sameRecord(a, b engine.Item) bool { return a.R.Part == b.R.Part && a.R.Off == b.R.Off }
