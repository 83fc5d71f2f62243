package ws

import (
	"time"
)

// delivered is what a connection delivered since its session was last saved, charged (metered,
// and added to the session's transfersUsed) by the next save: a checkpoint, or the release at
// the connection's end. A replica's crash loses it with the session's position, so the
// reconnect that sends it again is the only one to charge it.
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

// settleCheckpoint settles d, taken for a checkpoint's save that returned err: kept for the
// next save when the save failed and will be tried again, else charged, whatever the answer
// (the session taken over, deleted, or not stored again). The client had d. A connection that
// resumes the session from a save older than d sends d again and charges it again: at most
// what was delivered since the last save (STREAM_CHECKPOINT) is charged twice, and nothing
// delivered is free. Leaving d to the next connection takes the client's word that it sends d
// again, which a fresh claim, a deletion or no resume at all belies.
func (c *conn) settleCheckpoint(d delivered, err error) {
	if _, gone := goneReason(err); err != nil && !gone {
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
	if d.n == 0 || c.h.o.Meter == nil {
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
