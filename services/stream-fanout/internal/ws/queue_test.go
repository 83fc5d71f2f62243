package ws

import (
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// A delivery whose quota check failed goes back first in line: it is written next, before
// what was queued after it, and is owed (unsent) until it is.
func TestUnnextKeepsTheDeliveryFirstAndOwed(t *testing.T) {
	q := newQueue(queueSize{Base: 8})
	a, b := &engine.Rendered{Part: 0, Off: 1}, &engine.Rendered{Part: 0, Off: 2}
	q.Offer([]engine.Item{{R: a, FilterID: "f"}})
	q.Offer([]engine.Item{{R: b, FilterID: "f"}})
	o, ok := q.next()
	if !ok || o.item.R != a {
		t.Fatalf("first next: %+v %v", o, ok)
	}
	q.unnext(o)
	if low := q.lowest(); low[0] != 1 {
		t.Fatalf("lowest unsent offset %v, want 1 (the put back delivery is owed)", low)
	}
	var got []int64
	for {
		o, ok := q.next()
		if !ok {
			break
		}
		if !o.credit {
			t.Fatalf("a put back delivery must still take a credit: %+v", o)
		}
		got = append(got, o.item.R.Off)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("order after unnext %v, want [1 2]", got)
	}
	_, items := q.unsent()
	if len(items) != 2 {
		t.Fatalf("unsent %d deliveries while both are in flight, want 2", len(items))
	}
}

// One transfer matching more filters than the queue's bound is taken whole by an empty queue
// (or it could never be queued), and refused while anything else waits.
func TestEmptyQueueTakesATransferLargerThanItsBound(t *testing.T) {
	q := newQueue(queueSize{Base: 8})
	items := func(off int64, n int) []engine.Item {
		r := &engine.Rendered{Part: 0, Off: off}
		var out []engine.Item
		for i := 0; i < n; i++ {
			out = append(out, engine.Item{R: r, FilterID: string(rune('a' + i))})
		}
		return out
	}
	if q.Offer(items(1, 12)) != engine.Queued {
		t.Fatal("an empty queue refused a transfer of 12 matches (bound 8)")
	}
	if q.Offer(items(2, 12)) != engine.Full {
		t.Fatal("a second transfer of 12 matches was queued behind the first")
	}
	n := 0
	for {
		if _, ok := q.next(); !ok {
			break
		}
		n++
	}
	if n != 12 {
		t.Fatalf("%d deliveries came out, want the 12 of the first transfer", n)
	}
}

// The queue's bound is its base plus an allowance per filter of the session, at most its cap;
// lowered while the queue is full at the earlier bound, it takes nothing more until what it
// holds is below the new one.
func TestQueueBoundFollowsFilters(t *testing.T) {
	q := newQueue(queueSize{Base: 8, PerFilter: 4, Max: 20})
	fill := func() int {
		n := 0
		for q.Offer([]engine.Item{{R: &engine.Rendered{Off: int64(n)}, FilterID: "f"}}) == engine.Queued {
			n++
		}
		q.full = false
		return n
	}
	drain := func() {
		for {
			if _, ok := q.next(); !ok {
				q.sentFirst(1 << 20)
				return
			}
		}
	}
	if n := fill(); n != 8 {
		t.Fatalf("no filters: took %d, want 8", n)
	}
	drain()
	q.setFilters(2)
	if n := fill(); n != 16 {
		t.Fatalf("2 filters: took %d, want 16", n)
	}
	q.setFilters(10)
	if n := fill(); n != 4 {
		t.Fatalf("10 filters: took %d more, want 4 (capped at 20)", n)
	}
	q.setFilters(1)
	if n := fill(); n != 0 {
		t.Fatalf("lowered to 12 while holding 20: took %d, want 0", n)
	}
	drain()
	if n := fill(); n != 12 {
		t.Fatalf("1 filter: took %d, want 12", n)
	}
}

// An unsubscribe that lowers the bound below the backlog waiting does not make the backlog
// overflow: a client of 50 filters holding 10,000 deliveries (bound 13,824) that drops 40 of
// them (bound 3,584) keeps being offered its transfers, up to the earlier bound, and is not
// dropped as slow; once the queue has drained to the new bound, the new bound applies.
func TestShrinkDoesNotOverflowTheBacklog(t *testing.T) {
	q := newQueue(queueSize{Base: 1024, PerFilter: 256, Max: 16384})
	fulls := 0
	q.onFull = func() { fulls++ }
	transfer := func(off int64, filters int) []engine.Item {
		r := &engine.Rendered{Part: 0, Off: off}
		items := make([]engine.Item, filters)
		for i := range items {
			items[i] = engine.Item{R: r, FilterID: string(rune('A' + i))}
		}
		return items
	}
	q.setFilters(50)
	off := int64(0)
	for ; off < 200; off++ {
		if got := q.Offer(transfer(off, 50)); got != engine.Queued {
			t.Fatalf("transfer %d of the burst: %v, want queued", off, got)
		}
	}
	q.setFilters(10)
	for ; off < 300; off++ {
		if got := q.Offer(transfer(off, 10)); got != engine.Queued {
			t.Fatalf("transfer %d after the unsubscribe, %d queued: %v, want queued", off, q.waiting(), got)
		}
	}
	if fulls != 0 {
		t.Fatalf("the queue overflowed %d times after the unsubscribe; want none (11,000 queued, earlier bound 13,824)", fulls)
	}
	for q.waiting() > 3584 {
		if _, ok := q.next(); !ok {
			t.Fatal("the queue stopped short of draining")
		}
	}
	q.sentFirst(1 << 20)
	took := 0
	for q.Offer(transfer(off, 1)) == engine.Queued {
		off++
		took++
	}
	if took != 0 || fulls != 1 {
		t.Fatalf("drained to the new bound of 3,584: took %d more (want 0) with %d overflows (want 1)", took, fulls)
	}
}

// A lowered bound comes down although the backlog never drains to it: a client of 50 filters
// holding 10,000 deliveries that drops 40 of them (bound 3,584), then is offered its
// transfers as fast as it takes them, has its bound in force held to its backlog plus one
// filter's allowance (not the earlier 13,824, which would let the backlog grow back to it),
// never rising; reading a little faster than it is offered, it reaches the new bound. No
// offer is refused on the way.
func TestLoweredBoundFollowsTheBacklogDown(t *testing.T) {
	q := newQueue(queueSize{Base: 1024, PerFilter: 256, Max: 16384})
	transfer := func(off int64, filters int) []engine.Item {
		r := &engine.Rendered{Part: 0, Off: off}
		items := make([]engine.Item, filters)
		for i := range items {
			items[i] = engine.Item{R: r, FilterID: string(rune('A' + i))}
		}
		return items
	}
	offer := func(off int64) {
		t.Helper()
		if got := q.Offer(transfer(off, 10)); got != engine.Queued {
			t.Fatalf("transfer %d with %d queued (bound in force %d): %v, want queued", off, q.n, q.max, got)
		}
	}
	take := func(n int) {
		t.Helper()
		for range n {
			if _, ok := q.next(); !ok {
				t.Fatal("the queue ran dry")
			}
		}
		q.sentFirst(1 << 20)
	}
	q.setFilters(50)
	off := int64(0)
	for ; off < 200; off++ {
		if got := q.Offer(transfer(off, 50)); got != engine.Queued {
			t.Fatalf("transfer %d of the burst: %v, want queued", off, got)
		}
	}
	q.setFilters(10)
	last := q.max
	for range 1000 {
		offer(off)
		off++
		take(10)
		if q.max > last || q.max > q.n+256 {
			t.Fatalf("bound in force %d with %d queued (before %d): want at most the backlog plus 256, never rising", q.max, q.n, last)
		}
		last = q.max
	}
	for q.max > 3584 {
		offer(off)
		off++
		take(11)
		if q.max > last {
			t.Fatalf("bound in force rose from %d to %d", last, q.max)
		}
		last = q.max
	}
	if q.max != 3584 || q.bound != 3584 {
		t.Fatalf("bound in force %d (bound %d), want the new bound 3,584", q.max, q.bound)
	}
}
