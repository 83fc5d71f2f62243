package ws

import (
	"errors"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// errUnsaved is a session let go without a save (Redis failing).
var errUnsaved = errors.New("session not saved")

// delivered is what a connection delivered since its session was last saved. It is charged
// (metered, and added to the session's transfersUsed) only by a save that covers it: a
// session taken over on another replica resumes from its last save and sends again what was
// delivered since, and that new connection charges it; the old one must not as well.
type delivered struct {
	n     int64
	first time.Time     // when the first of them was delivered (zero while n is 0)
	hours []heldCredits // the quota credits they took, by the hour they were taken in
	// batches are the same deliveries as accounted, batch by batch, with when: a save refused
	// for a fresh take-over charges only those made before the fresh claim (split).
	batches []deliveredBatch
}

// deliveredBatch is a batch's deliveries of one hour's credits, and when they were accounted.
type deliveredBatch struct {
	at   time.Time
	hour time.Time
	n    int64
}

// add counts n deliveries accounted at, whose credits were taken in hour.
func (d *delivered) add(at, hour time.Time, n int64) {
	if d.n == 0 || at.Before(d.first) {
		d.first = at
	}
	d.n += n
	d.hours = addHour(d.hours, hour, n)
	d.batches = append(d.batches, deliveredBatch{at, hour, n})
}

// split parts d into the deliveries made before cut, a time in whole milliseconds, and those
// made after it; those of cut's own millisecond count as before. A d without batches (none
// recorded) is all before.
func (d delivered) split(cut time.Time) (before, after delivered) {
	if len(d.batches) == 0 || cut.IsZero() {
		return d, delivered{}
	}
	for _, b := range d.batches {
		if b.at.UnixMilli() <= cut.UnixMilli() {
			before.add(b.at, b.hour, b.n)
		} else {
			after.add(b.at, b.hour, b.n)
		}
	}
	return before, after
}

// merge adds o to d.
func (d *delivered) merge(o delivered) {
	if o.n == 0 {
		return
	}
	if d.n == 0 || o.first.Before(d.first) {
		d.first = o.first
	}
	d.n += o.n
	for _, h := range o.hours {
		d.hours = addHour(d.hours, h.hour, h.n)
	}
	d.batches = append(d.batches, o.batches...)
}

// addHour counts n credits of hour in hs.
func addHour(hs []heldCredits, hour time.Time, n int64) []heldCredits {
	for i := range hs {
		if hs[i].hour.Equal(hour) {
			hs[i].n += n
			return hs
		}
	}
	return append(hs, heldCredits{n, hour})
}

// account records a batch's deliveries (their credits by hour), to be charged by the save that
// covers them. hours is not kept.
func (c *conn) account(hours []heldCredits, at time.Time) {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.accountLocked(hours, at)
}

// accountLocked is account with c.dmu held.
func (c *conn) accountLocked(hours []heldCredits, at time.Time) {
	for _, h := range hours {
		if h.n != 0 {
			c.pend.add(at, h.hour, h.n)
		}
	}
}

// takeInflight takes what was delivered since the last save for a checkpoint's save, keeping it
// as inflight until the save settles it, with the count of releases so far (c.dmu held).
func (c *conn) takeInflight() (delivered, uint64) {
	d := c.pend
	c.pend, c.inflight = delivered{}, d
	return d, c.lets
}

// endInflight is a checkpoint's save, holding c.smu, taking back its deliveries from inflight
// to settle them itself; false when a release took them since (lets moved on), which settled
// them with its own save.
func (c *conn) endInflight(lets uint64) bool {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if c.lets != lets {
		return false
	}
	c.inflight = delivered{}
	return true
}

// takeReleased takes, for a release of the connection's session (c.smu held), what was
// delivered since the last save and what a checkpoint took and has not saved yet: the
// release's save, whose cursor is read after, covers both.
func (c *conn) takeReleased() delivered {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	return c.takeReleasedLocked()
}

// takeReleasedLocked is takeReleased with c.dmu held.
func (c *conn) takeReleasedLocked() delivered {
	d := c.pend
	d.merge(c.inflight)
	c.pend, c.inflight = delivered{}, delivered{}
	c.lets++
	return d
}

// settleCharge settles d, taken for a save of the connection's session that returned err.
// Charged when the save succeeded; when nobody can resume the session (Redis lost it and did
// not store it again: ErrSessionCap); when another connection took it over fresh (from the
// topic's end: nothing of d is sent again), but for what was delivered after the fresh claim,
// which the fresh connection delivers and charges too (its quota credits are given back); and
// when it was deleted (the client had d). Dropped,
// with its quota credits given back, when the session's next server resumes it from its last
// save and sends d again (taken over); when the save failed otherwise, kept for the next save if
// retry (a checkpoint), else dropped (the connection let the session go unsaved: its reconnect
// resumes from the last save, and charges what it sends again).
func (c *conn) settleCharge(d delivered, err error, retry bool) {
	if d.n == 0 {
		return
	}
	var fresh *store.TakenOverFreshError
	switch {
	case errors.As(err, &fresh):
		before, after := d.split(fresh.At)
		c.charge(before)
		c.uncharge(after)
	case err == nil || errors.Is(err, store.ErrSessionCap) || errors.Is(err, store.ErrTakenOverFresh) || errors.Is(err, store.ErrDeleted):
		c.charge(d)
	case retry && !errors.Is(err, store.ErrTakenOver):
		c.dmu.Lock()
		c.pend.merge(d)
		c.dmu.Unlock()
	default:
		c.uncharge(d)
	}
}

// charge meters d for the connection's key and route, each hour's deliveries in their hour (the
// first hour's at the first delivery): a save covering deliveries on both sides of an hour, or
// of a billing period, counts each in its own.
func (c *conn) charge(d delivered) {
	if c.h.o.Meter == nil {
		return
	}
	left := d.n
	for _, h := range d.hours {
		at := h.hour
		if d.first.After(at) && d.first.Before(at.Add(time.Hour)) {
			at = d.first
		}
		c.h.o.Meter.Add(c.id, c.route(), h.n, at)
		left -= h.n
	}
	if left > 0 {
		c.h.o.Meter.Add(c.id, c.route(), left, d.first)
	}
}

// uncharge gives back the quota credits d took: a connection resuming the session takes its
// own for what it sends again.
func (c *conn) uncharge(d delivered) {
	if c.kq == nil {
		return
	}
	for _, h := range d.hours {
		c.h.quotas.giveBack(c.kq, h.hour, h.n)
	}
}
