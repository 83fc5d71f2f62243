package read

import (
	"strings"
	"time"
)

// window is a time window (from, to inclusive; zero is open) cut into rollup buckets: whole
// days [dLo, dHi) from the daily rollups, the hours at its ends [hLo, dLo) and [dHi, hHi) from
// the hourly ones (all of [hLo, hHi) when it holds no whole day).
type window struct {
	from, to time.Time
	dLo, dHi time.Time
	hLo, hHi time.Time
	noDays   bool
}

func newWindow(from, to time.Time) window {
	w := window{from: from, to: to}
	const day = 24 * time.Hour
	if !from.IsZero() {
		from = from.UTC()
		w.hLo = from.Truncate(time.Hour)
		w.dLo = from.Truncate(day)
		if w.dLo.Before(from) {
			w.dLo = w.dLo.Add(day)
		}
	}
	if !to.IsZero() {
		end := to.UTC().Add(time.Microsecond) // exclusive
		w.dHi = end.Truncate(day)
		w.hHi = end.Truncate(time.Hour)
		if w.hHi.Before(end) {
			w.hHi = w.hHi.Add(time.Hour)
		}
	}
	w.noDays = !from.IsZero() && !to.IsZero() && !w.dLo.Before(w.dHi)
	return w
}

// dayConds are the conditions on a daily bucket column b; ok is false when no day is whole.
func (w window) dayConds(b *sqlb, col string) (c []string, ok bool) {
	if w.noDays {
		return nil, false
	}
	if !w.from.IsZero() {
		c = append(c, col+" >= "+b.arg(w.dLo))
	}
	if !w.to.IsZero() {
		c = append(c, col+" < "+b.arg(w.dHi))
	}
	return c, true
}

// hourCond is the condition on an hourly bucket column; ok is false when no hour is needed.
func (w window) hourCond(b *sqlb, col string) (string, bool) {
	if w.noDays {
		return col + " >= " + b.arg(w.hLo) + " AND " + col + " < " + b.arg(w.hHi), true
	}
	var or []string
	if !w.from.IsZero() && w.hLo.Before(w.dLo) {
		or = append(or, "("+col+" >= "+b.arg(w.hLo)+" AND "+col+" < "+b.arg(w.dLo)+")")
	}
	if !w.to.IsZero() && w.dHi.Before(w.hHi) {
		or = append(or, "("+col+" >= "+b.arg(w.dHi)+" AND "+col+" < "+b.arg(w.hHi)+")")
	}
	if len(or) == 0 {
		return "", false
	}
	return "(" + strings.Join(or, " OR ") + ")", true
}

// whole reports whether the hour bucket h lies inside the window.
func (w window) whole(h time.Time) bool {
	return (w.from.IsZero() || !h.Before(w.from)) && (w.to.IsZero() || !h.Add(time.Hour).After(w.to.Add(time.Microsecond)))
}

// partialHours returns the parts of the window that lie in hour buckets it does not hold
// whole (at most one at each end; inclusive bounds). ok is false when the window lies within
// one hour (nothing whole to take from the rollups) or has no bound at all.
func (w window) partialHours() (segs [][2]time.Time, ok bool) {
	if w.from.IsZero() && w.to.IsZero() {
		return nil, false
	}
	from, to := w.from.UTC(), w.to.UTC()
	if !w.from.IsZero() && !w.to.IsZero() && from.Truncate(time.Hour).Equal(to.Truncate(time.Hour)) {
		return nil, false
	}
	if !w.from.IsZero() && !from.Equal(from.Truncate(time.Hour)) {
		segs = append(segs, [2]time.Time{from, from.Truncate(time.Hour).Add(time.Hour - time.Microsecond)})
	}
	if !w.to.IsZero() {
		if h := to.Truncate(time.Hour); h.Add(time.Hour - time.Microsecond).After(to) {
			segs = append(segs, [2]time.Time{h, to})
		}
	}
	return segs, true
}

// cut is a time window (inclusive bounds; zero is open) split on bucket boundaries of a step:
// the whole buckets inside it, [wFrom, wTo] (wTo the last microsecond of the last bucket; zero
// where the window is open), when hasWhole, and the parts of the buckets it cuts (at most one at
// each end, inclusive bounds), which no rollup can answer.
type cut struct {
	wFrom, wTo time.Time
	hasWhole   bool
	parts      [][2]time.Time
}

// aligned reports whether the window holds whole buckets only (the rollups answer it alone).
func (c cut) aligned() bool { return len(c.parts) == 0 }

// cutWindow splits the window from..to on step's boundaries (UTC). Transfer times are stored to
// the millisecond, so a window ending at to holds the same transfers as one ending just before
// the next millisecond: timeLte=10:59:59.999 ends on the 11:00 boundary.
func cutWindow(from, to time.Time, step time.Duration) cut {
	var c cut
	lo, hi := from, time.Time{} // whole buckets [lo, hi); zero: open
	if !from.IsZero() {
		from = from.UTC()
		if lo = from.Truncate(step); lo.Before(from) {
			lo = lo.Add(step)
		}
	}
	if !to.IsZero() {
		to = to.UTC()
		hi = to.Truncate(time.Millisecond).Add(time.Millisecond).Truncate(step)
	}
	if !from.IsZero() && !to.IsZero() && !lo.Before(hi) {
		// No bucket lies wholly inside: the window's parts of the one or two buckets it touches.
		if mid := from.Truncate(step).Add(step); to.Before(mid) {
			c.parts = [][2]time.Time{{from, to}}
		} else {
			c.parts = [][2]time.Time{{from, mid.Add(-time.Microsecond)}, {mid, to}}
		}
		return c
	}
	c.hasWhole, c.wFrom = true, lo
	if !hi.IsZero() {
		c.wTo = hi.Add(-time.Microsecond)
	}
	if !from.IsZero() && from.Before(lo) {
		c.parts = append(c.parts, [2]time.Time{from, lo.Add(-time.Microsecond)})
	}
	if !to.IsZero() && !to.Before(hi) {
		c.parts = append(c.parts, [2]time.Time{hi, to})
	}
	return c
}
