package ws

import (
	"context"
	"errors"
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

// A connection's counts reach one UsageCall per key and flush; a failed publish keeps them for
// the next; an entry no connection holds and nothing was counted in is dropped.
func TestMeterCountsHeldEntries(t *testing.T) {
	pub := &fakePub{}
	m := NewMeter(pub, time.Second, nil)
	id := Identity{KeyID: "k1", UserID: "u1", Tier: "pro"}
	e := m.acquire(id, Route)
	at := time.UnixMilli(1_700_000_000_000)
	e.add(2, at)
	e.add(3, at.Add(time.Second))
	e2 := m.acquire(id, Route) // another connection of the same key and route
	e2.add(1, at.Add(2*time.Second))
	m.release(e2)
	pub.fail = true
	m.Flush(context.Background())
	pub.fail = false
	e.add(4, at.Add(3*time.Second))
	m.Flush(context.Background())
	if len(pub.got) != 1 || pub.got[0].GetCredits() != 10 || pub.got[0].GetRows() != 10 || pub.got[0].GetTimeMs() != at.UnixMilli() ||
		pub.got[0].GetKeyId() != "k1" || pub.got[0].GetRoute() != Route || pub.got[0].GetUnit() != "row" {
		t.Fatalf("published %v, want one call of 10 credits at the first delivery", pub.got)
	}
	m.Flush(context.Background())
	if len(pub.got) != 1 || len(m.keys) != 1 {
		t.Fatalf("an empty flush published %v; entries %d, want the held one kept", pub.got, len(m.keys))
	}
	m.release(e)
	m.Flush(context.Background())
	if len(m.keys) != 0 {
		t.Fatalf("entries %d after the last connection let go, want 0", len(m.keys))
	}
}
