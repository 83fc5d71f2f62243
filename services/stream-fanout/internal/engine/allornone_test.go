package engine

import (
	"fmt"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// capSink holds at most max deliveries, refusing an offer it cannot hold whole.
type capSink struct {
	max int
	got []Item
}

func (s *capSink) Offer(items []Item) Offered {
	if len(s.got)+len(items) > s.max {
		return Full
	}
	s.got = append(s.got, items...)
	return Queued
}

func (s *capSink) Wake() {}

// A transfer's matches for one subscription are offered together: when the queue has room
// for only part of them, none is queued and the subscription is frozen at that transfer, so
// a catch-up from there owes each (filter, transfer) exactly once.
func TestOfferIsAllOrNone(t *testing.T) {
	e := New(Options{})
	s := &capSink{max: 64}
	sub := e.NewSub(s, nil)
	for i := range 50 {
		e.AddFilter(sub, Compile(fmt.Sprintf("f%d", i), spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	}
	for off := range 3 {
		e.Process(Record{Part: 0, Off: int64(off), Msg: &eventsv1.Transfer{Id: fmt.Sprint(off), Chain: "ethereum", From: addr(1), To: addr(2), Amount: "1"}})
	}
	if len(s.got) != 50 {
		t.Fatalf("queued %d, want the first transfer's 50", len(s.got))
	}
	for _, it := range s.got {
		if it.R.Off != 0 {
			t.Fatalf("queued a delivery of offset %d", it.R.Off)
		}
	}
	if got := e.Served(sub)[0]; got != 1 {
		t.Fatalf("served up to %d, want 1 (the refused transfer)", got)
	}
	if st := e.Stats(); st.Delivered != 50 || st.Matched != 100 || st.Dropped != 50 {
		t.Fatalf("stats %+v", st)
	}
	if again := e.MatchOne(sub, []Record{{Part: 0, Off: 1, Msg: &eventsv1.Transfer{Id: "1", Chain: "ethereum", From: addr(1), To: addr(2), Amount: "1"}}}, nil); len(again) != 50 {
		t.Fatalf("the catch-up owes %d of the refused transfer, want 50", len(again))
	}
}

// discardSink drops every offer over the quota, as a connection's queue does once its key's
// quota is spent.
type discardSink struct{}

func (discardSink) Offer([]Item) Offered { return Discarded }
func (discardSink) Wake()                {}

// Deliveries a sink discards (the quota spent) are counted as discarded, not delivered, and
// do not freeze the subscription: it is offered the next transfer's.
func TestDiscardedAreNotDelivered(t *testing.T) {
	e := New(Options{})
	sub := e.NewSub(discardSink{}, nil)
	for i := range 3 {
		e.AddFilter(sub, Compile(fmt.Sprintf("f%d", i), spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	}
	for off := range 4 {
		e.Process(Record{Part: 0, Off: int64(off), Msg: &eventsv1.Transfer{Id: fmt.Sprint(off), Chain: "ethereum", From: addr(1), To: addr(2), Amount: "1"}})
	}
	if st := e.Stats(); st != (Stats{Matched: 12, Delivered: 0, Dropped: 0, Discarded: 12}) {
		t.Fatalf("stats %+v, want 12 matched and discarded, none delivered", st)
	}
}
