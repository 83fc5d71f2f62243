package engine

import (
	"maps"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// A reset record (the topic recreated) moves the partition's position back to the new log's
// start and lets every subscription have the new log's records, though it was told to skip
// offsets of the old log there; its skip map, which fresh connects share, is not changed, and
// other partitions keep theirs.
func TestResetPartition(t *testing.T) {
	e := New(Options{})
	e.SetPositions(map[int]int64{0: 300, 1: 50})
	shared := map[int]int64{0: 310, 1: 60}
	s := &countSink{}
	sub := e.NewSub(s, shared)
	e.AddFilter(sub, Compile("f", spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	tr := func(part int, off int64) Record {
		return Record{Part: part, Off: off, Msg: &eventsv1.Transfer{Id: "t", Chain: "ethereum", From: addr(1), To: addr(2)}}
	}
	e.Process(tr(0, 305)) // below the skip: not owed
	e.Process(Record{Part: 0, Off: 0, Reset: true})
	if got := e.Positions(); got[0] != 0 || got[1] != 50 {
		t.Fatalf("positions after the reset %v, want 0: 0 and 1: 50", got)
	}
	e.Process(tr(0, 0))
	e.Process(tr(0, 1))
	e.Process(tr(1, 55)) // below partition 1's skip, which the reset of 0 leaves
	var got []int64
	for _, it := range s.got {
		got = append(got, it.R.Off)
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("delivered offsets %v, want the new log's 0 and 1", got)
	}
	if !maps.Equal(shared, map[int]int64{0: 310, 1: 60}) {
		t.Fatalf("the shared skip map became %v", shared)
	}
	if served := e.Served(sub); served[0] != 2 || served[1] != 60 {
		t.Fatalf("served %v, want 0: 2 and 1: 60", served)
	}
}
