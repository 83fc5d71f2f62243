package engine

import (
	"context"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// wakeSink records offers and wakes in order.
type wakeSink struct {
	events []string
	woken  chan struct{}
}

func (s *wakeSink) Offer(items []Item) Offered {
	for range items {
		s.events = append(s.events, "offer")
	}
	return Queued
}

func (s *wakeSink) Wake() {
	s.events = append(s.events, "wake")
	s.woken <- struct{}{}
}

// A subscription is woken once, after every record waiting together was offered to it (two
// filters on three records: six offers, one wakeup).
func TestEngineWakesOncePerBurst(t *testing.T) {
	e := New(Options{})
	s := &wakeSink{woken: make(chan struct{}, 8)}
	sub := e.NewSub(s, nil)
	e.AddFilter(sub, Compile("a", spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	e.AddFilter(sub, Compile("b", spec(t, filter.Raw{To: filter.List{addr(2)}}), nil))
	for off := range 3 {
		e.recs <- Record{Off: int64(off), Msg: &eventsv1.Transfer{Id: "t", Chain: "ethereum", From: addr(1), To: addr(2), Amount: "1"}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	<-s.woken
	cancel()
	<-done
	want := []string{"offer", "offer", "offer", "offer", "offer", "offer", "wake"}
	if len(s.events) != len(want) || s.events[6] != "wake" || s.events[5] != "offer" {
		t.Fatalf("events %v, want %v", s.events, want)
	}
}
