package ws

import (
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// A delivery whose quota check failed goes back first in line: it is written next, before
// what was queued after it, and is owed (unsent) until it is.
func TestUnnextKeepsTheDeliveryFirstAndOwed(t *testing.T) {
	q := newQueue(8)
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
