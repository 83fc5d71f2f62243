package ws

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

type fakePub struct {
	fail bool
	got  []*eventsv1.UsageCall
}

func (p *fakePub) Publish(_ context.Context, evs ...eventbus.Event) error {
	if p.fail {
		return errors.New("broker down")
	}
	for _, e := range evs {
		p.got = append(p.got, e.Msg.(*eventsv1.UsageCall))
	}
	return nil
}

// A connection's counts reach one UsageCall per key and flush; a failed publish keeps its batch,
// which the next flush publishes as it was before a batch of what was counted since; an entry no
// connection holds and nothing was counted in is dropped.
func TestMeterCountsHeldEntries(t *testing.T) {
	pub := &fakePub{}
	m := NewMeter(pub, time.Second, nil)
	id := Identity{KeyID: "k1", UserID: "u1", Tier: "pro"}
	at := time.UnixMilli(1_700_000_000_000)
	e := m.acquire(id, Route, at)
	e.add(2, at)
	e.add(3, at.Add(time.Second))
	e2 := m.acquire(id, Route, at) // another connection of the same key and route
	e2.add(1, at.Add(2*time.Second))
	m.release(e2)
	pub.fail = true
	if err := m.Flush(context.Background()); err == nil {
		t.Fatal("Flush reported no error with the broker down")
	}
	if m.Pending() != 1 {
		t.Fatalf("pending %d after a failed flush, want 1", m.Pending())
	}
	pub.fail = false
	e.add(4, at.Add(3*time.Second))
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(pub.got) != 2 || pub.got[0].GetCredits() != 6 || pub.got[0].GetRows() != 6 || pub.got[0].GetTimeMs() != at.UnixMilli() ||
		pub.got[0].GetKeyId() != "k1" || pub.got[0].GetRoute() != Route || pub.got[0].GetUnit() != "row" ||
		pub.got[1].GetCredits() != 4 || pub.got[1].GetTimeMs() != at.Add(3*time.Second).UnixMilli() {
		t.Fatalf("published %v, want the failed call of 6 credits at the first delivery, then one of 4", pub.got)
	}
	if m.Pending() != 0 {
		t.Fatalf("pending %d after a flush that published", m.Pending())
	}
	_ = m.Flush(context.Background())
	if len(pub.got) != 2 || len(m.keys) != 1 {
		t.Fatalf("an empty flush published %v; entries %d, want the held one kept", pub.got, len(m.keys))
	}
	m.release(e)
	_ = m.Flush(context.Background())
	if len(m.keys) != 0 {
		t.Fatalf("entries %d after the last connection let go, want 0", len(m.keys))
	}
}

// partialPub writes the events of a call up to failAt and then fails the call, as kafka-go's
// WriteErrors does when one partition's batch fails (Publish: "on error some events may have
// been written"). It counts credits as the edge does: once per event id.
type partialPub struct {
	failAt []int // per call, the index of the event the call fails at (-1 or absent: none)
	calls  int
	ids    map[string]*eventsv1.UsageCall
	total  int64
}

func (p *partialPub) Publish(_ context.Context, evs ...eventbus.Event) error {
	fail := -1
	if p.calls < len(p.failAt) {
		fail = p.failAt[p.calls]
	}
	p.calls++
	for i, e := range evs {
		if i == fail {
			return errors.New("partition 1: not enough replicas")
		}
		c := e.Msg.(*eventsv1.UsageCall)
		if prev, ok := p.ids[e.ID]; ok {
			if prev.GetCredits() != c.GetCredits() || prev.GetKeyId() != c.GetKeyId() {
				return fmt.Errorf("event %s written again with other contents", e.ID)
			}
			continue
		}
		p.ids[e.ID] = c
		p.total += c.GetCredits()
	}
	return nil
}

// A publish that wrote part of its batch and failed, failing again, then succeeding, with
// deliveries between: the credits counted once per event id are exactly the transfers delivered.
func TestMeterPartialPublishChargesOnce(t *testing.T) {
	pub := &partialPub{failAt: []int{1, 0, 1}, ids: map[string]*eventsv1.UsageCall{}}
	m := NewMeter(pub, time.Second, nil)
	a := m.acquire(Identity{KeyID: "k1", UserID: "u1"}, Route, time.Now())
	b := m.acquire(Identity{KeyID: "k2", UserID: "u2"}, Route, time.Now())
	var delivered int64
	add := func(e *meterEntry, n int64) { e.add(n, time.Now()); delivered += n }
	add(a, 5)
	add(b, 7)
	for i := 0; i < 3; i++ { // the failing calls: the first two write one event of two, the middle none
		if err := m.Flush(context.Background()); err == nil {
			t.Fatalf("flush %d succeeded; want the publisher's failure", i)
		}
		add(a, 1)
		add(b, 2)
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.Pending() != 0 {
		t.Fatalf("pending %d after a flush that published", m.Pending())
	}
	if pub.total != delivered {
		t.Fatalf("charged %d credits (once per event id) for %d delivered transfers", pub.total, delivered)
	}
}
