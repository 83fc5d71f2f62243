package ws

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// out is one message waiting to be sent: raw bytes (acks, errors, replayed messages) or a
// delivery to render.
type out struct {
	raw    []byte
	item   engine.Item
	credit bool // a transfer: counts against the quota and is metered
	// notice, set instead of raw, is a TIER_RATE_LIMITED notice the writer sends unless it
	// has told the client in that window already (conn.limit).
	notice *quotaNotice
}

// queue is a connection's outgoing messages: control messages (acks, errors, and what a
// reconnect replays) go first and are not bounded by count (the reader adds one per client
// message); live deliveries sit in a bounded ring the engine offers to without blocking.
type queue struct {
	mu      sync.Mutex
	control []out
	// ring grows from a few slots up to max: an idle connection holds almost nothing.
	ring []engine.Item
	// max is the bound in force: bound, or, after a shrink found more queued than the new
	// bound, at most the earlier bound, falling toward the new one as the queue drains
	// (setFilters, settle).
	max   int
	bound int
	// size is how max follows the session's filters (setFilters).
	size    queueSize
	head, n int
	hold    bool // live deliveries wait (a reconnect's replay goes first)
	full    bool
	closed  bool
	// inflight are the deliveries of the batch being written, unsent until it is written.
	inflight []engine.Item
	// wake is called, outside the lock, when there may be something to send.
	wake func()
	// onFull is called once, outside the lock, when an offer finds the queue full.
	onFull func()
	// onDiscard, when set, is told how many deliveries were dropped over the quota: by an
	// offer, or waiting when refuse was called (those the engine counted as queued).
	onDiscard func(n int)
	// refusedUntil (Unix nanoseconds by clock, 0 for none) is when the refusal of the key's
	// quota the writer found stops standing: until then every delivery would be refused by it,
	// so Offer drops it at once instead of queueing it (TIER_RATE_LIMITED transfers are not
	// delivered and not owed). Queued, they would fill the queue of a client reading at full
	// speed as fast as the engine matches, and it would be closed as a slow client.
	refusedUntil atomic.Int64
	clock        func() time.Time
}

// queueSize bounds a connection's queue by the filters its session holds: Base, plus
// PerFilter for each filter, at most Max. One transfer owes a session one delivery per filter
// it matches, so a session of many broad filters is owed that many times the deliveries of
// one: a bound fixed for every session would drop a client of 50 filters that reads at full
// speed for a burst a client of one filter takes in its stride.
type queueSize struct{ Base, PerFilter, Max int }

// bound is the queue's bound for a session of n filters (at least Base).
func (s queueSize) bound(n int) int {
	b := s.Base + s.PerFilter*n
	if s.Max > 0 {
		b = min(b, s.Max)
	}
	return max(b, s.Base)
}

func newQueue(size queueSize) *queue {
	b := size.bound(0)
	return &queue{max: b, bound: b, size: size, wake: func() {}, clock: time.Now}
}

// setFilters sizes the queue for a session of n filters. A bound that grows applies at once.
// One that shrinks below what is queued (an unsubscribe while a backlog waits) would make
// every later offer overflow and drop a client that was within its bound as slow: the bound
// in force until then stays, and falls toward the new one as the queue drains (settle). A
// ring already grown past the bound keeps its slots (what is queued stays).
func (q *queue) setFilters(n int) {
	q.mu.Lock()
	q.bound = q.size.bound(n)
	if q.bound >= q.max || q.n <= q.bound {
		q.max = q.bound
	}
	q.mu.Unlock()
}

// settle moves the bound in force toward a lowered bound as the queue drains (q.mu held): to
// the new bound once the queue holds no more than it, and before that down to what is queued
// plus one filter's allowance (PerFilter). Kept at the earlier bound until the queue drained to
// the new one, a backlog taken as fast as it is offered would keep that bound forever; held
// to its backlog, the bound in force only shrinks, never below what is queued.
func (q *queue) settle() {
	if q.max <= q.bound {
		return
	}
	if q.n <= q.bound {
		q.max = q.bound
		return
	}
	q.max = max(q.bound, min(q.max, q.n+q.size.PerFilter))
}

// refuse drops every live delivery queued and those offered until until, when the refusal the
// writer found stops standing on the replica (Redis is asked again then; see quotas): until
// then the writer would refuse each of them.
func (q *queue) refuse(until time.Time) {
	q.refusedUntil.Store(until.UnixNano())
	q.mu.Lock()
	n := q.n
	for i := 0; i < q.n; i++ {
		q.ring[(q.head+i)%len(q.ring)] = engine.Item{}
	}
	q.head, q.n = 0, 0
	q.settle()
	q.mu.Unlock()
	if q.onDiscard != nil {
		q.onDiscard(n)
	}
}

// refused reports whether a delivery offered now is over the quota.
func (q *queue) refused() bool {
	u := q.refusedUntil.Load()
	return u != 0 && q.clock().UnixNano() < u
}

// grow doubles the ring (up to max), keeping the order; false when it is at max.
func (q *queue) grow() bool {
	if len(q.ring) >= q.max {
		return false
	}
	ring := make([]engine.Item, min(max(2*len(q.ring), 8), q.max))
	for i := 0; i < q.n; i++ {
		ring[i] = q.ring[(q.head+i)%len(q.ring)]
	}
	q.ring, q.head = ring, 0
	return true
}

func (q *queue) signal() { q.wake() }

// Offer is called by the engine with what one transfer owes the connection: it queues all of
// them or, when the ring cannot hold them all, none (see engine.Sink). It never blocks, and
// leaves waking the writer to Wake.
func (q *queue) Offer(items []engine.Item) engine.Offered {
	if q.refused() {
		if q.onDiscard != nil {
			q.onDiscard(len(items))
		}
		return engine.Discarded // over the quota: not delivered, not owed
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return engine.Discarded // the connection is going away; its release accounts for what it owed
	}
	if q.n == 0 && len(items) > len(q.ring) && len(items) > q.max {
		// One transfer matching more filters than the bound: an empty queue takes it whole, or
		// it could never be queued and the connection would be dropped as slow for nothing.
		q.ring, q.head = make([]engine.Item, len(items)), 0
	}
	for q.n+len(items) > len(q.ring) || q.n > 0 && q.n+len(items) > q.max {
		if q.n+len(items) > q.max || !q.grow() {
			first := !q.full
			q.full = true
			q.mu.Unlock()
			q.signal()
			if first && q.onFull != nil {
				q.onFull()
			}
			return engine.Full
		}
	}
	for _, it := range items {
		q.ring[(q.head+q.n)%len(q.ring)] = it
		q.n++
	}
	q.mu.Unlock()
	return engine.Queued
}

// Wake is called by the engine once it has offered what the records it matched together owe
// the subscription (Offer itself wakes no writer).
func (q *queue) Wake() { q.signal() }

func (q *queue) push(o ...out) {
	q.mu.Lock()
	q.control = append(q.control, o...)
	q.mu.Unlock()
	q.signal()
}

// pushQuiet queues o without waking the writer (the caller signals once it lets go of its
// own lock).
func (q *queue) pushQuiet(o ...out) {
	q.mu.Lock()
	q.control = append(q.control, o...)
	q.mu.Unlock()
}

func (q *queue) setHold(h bool) {
	q.mu.Lock()
	q.hold = h
	q.mu.Unlock()
	q.signal()
}

// next takes the next message to send; ok false when there is none now.
func (q *queue) next() (o out, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.control) > 0 {
		o = q.control[0]
		q.control[0] = out{}
		q.control = q.control[1:]
		if o.item.R != nil {
			q.inflight = append(q.inflight, o.item)
		}
		return o, true
	}
	if q.hold || q.n == 0 {
		return o, false
	}
	it := q.ring[q.head]
	q.ring[q.head] = engine.Item{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.settle()
	q.inflight = append(q.inflight, it)
	return out{item: it, credit: true}, true
}

// nextControl takes the first ack or error waiting (a message that takes no credit), past
// any delivery queued before it: a writer paused on the quota still sends those.
func (q *queue) nextControl() (o out, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.control {
		if isControl(m) {
			q.control = slices.Delete(q.control, i, i+1)
			return m, true
		}
	}
	return o, false
}

// pendingControl reports whether nextControl would return a message.
func (q *queue) pendingControl() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.ContainsFunc(q.control, isControl)
}

// isControl reports whether o is an ack or error: it takes no credit and owes no delivery.
func isControl(o out) bool { return !o.credit && o.item.R == nil }

// unnext puts back the message next just returned, first in line: it was not sent.
func (q *queue) unnext(o out) {
	q.mu.Lock()
	if n := len(q.inflight); n > 0 && o.item.R != nil {
		q.inflight[n-1] = engine.Item{}
		q.inflight = q.inflight[:n-1]
	}
	q.control = append([]out{o}, q.control...)
	q.mu.Unlock()
}

// sentFirst marks the first n deliveries of the batch sent, when a write failed part way:
// those the client got are not owed again.
func (q *queue) sentFirst(n int) {
	q.mu.Lock()
	n = min(n, len(q.inflight))
	clear(q.inflight[:n])
	q.inflight = q.inflight[n:]
	q.mu.Unlock()
}

// pending reports whether next would return a message.
func (q *queue) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.control) > 0 || (!q.hold && q.n > 0)
}

// waiting is how many messages next would still return now (besides one just taken).
func (q *queue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.hold {
		return len(q.control)
	}
	return len(q.control) + q.n
}

// unsent returns every delivery not sent yet, in order (the one being written first), and
// closes the queue to further offers.
func (q *queue) unsent() (raw [][]byte, items []engine.Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	// The batch being written did not finish; the session gets it again.
	items = append(items, q.inflight...)
	var keep []out // acks and errors still go out
	for _, o := range q.control {
		switch {
		case o.item.R != nil:
			items = append(items, o.item)
		case o.credit:
			raw = append(raw, o.raw)
		default:
			keep = append(keep, o)
		}
	}
	for i := 0; i < q.n; i++ {
		items = append(items, q.ring[(q.head+i)%len(q.ring)])
	}
	q.control, q.n, q.inflight = keep, 0, nil
	q.settle()
	return raw, items
}

// lowest returns per partition the smallest offset of a delivery not yet sent.
func (q *queue) lowest() map[int]int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	low := map[int]int64{}
	see := func(r *engine.Rendered) {
		if r == nil {
			return
		}
		if v, ok := low[r.Part]; !ok || r.Off < v {
			low[r.Part] = r.Off
		}
	}
	for _, it := range q.inflight {
		see(it.R)
	}
	for _, o := range q.control {
		see(o.item.R)
	}
	for i := 0; i < q.n; i++ {
		see(q.ring[(q.head+i)%len(q.ring)].R)
	}
	return low
}

// reopen takes offers again after unsent closed the queue.
func (q *queue) reopen() {
	q.mu.Lock()
	q.closed, q.full = false, false
	q.mu.Unlock()
}
