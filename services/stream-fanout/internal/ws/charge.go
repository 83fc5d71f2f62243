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
		if h.n == 0 {
			continue
		}
		if c.pend.n == 0 {
			c.pend.first = at
		}
		c.pend.n += h.n
		c.pend.hours = addHour(c.pend.hours, h.hour, h.n)
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
	d := c.pend
	d.merge(c.inflight)
	c.pend, c.inflight = delivered{}, delivered{}
	c.lets++
	return d
}

// settleCharge settles d, taken for a save of the connection's session that returned err: d
// is charged, whatever the save's answer, but for a checkpoint's save that failed and will be
// tried again (retry), which keeps d for the next. The client had d. A connection that resumes
// the session from a save older than d (a take-over, a reconnect after a save given up) sends
// d again and charges it again: at most what was delivered since the last save (a checkpoint,
// STREAM_CHECKPOINT) is charged twice; nothing delivered is free. Telling which of d the next
// connection sends again takes the client's word (a fresh claim, a deletion, filters changed,
// nothing resumed at all), which a client can give to stream for nothing.
func (c *conn) settleCharge(d delivered, err error, retry bool) {
	if d.n == 0 {
		return
	}
	if err != nil && retry && !errors.Is(err, store.ErrTakenOver) && !errors.Is(err, store.ErrDeleted) && !errors.Is(err, store.ErrSessionCap) {
		c.dmu.Lock()
		c.pend.merge(d)
		c.dmu.Unlock()
		return
	}
	c.charge(d)
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
