package engine

import (
	"slices"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// copiesEngine is an engine remembering size transfers a partition, with one subscription
// matching every transfer from addr(1).
func copiesEngine(t *testing.T, size int) (*Engine, *Sub, *countSink) {
	t.Helper()
	e := New(Options{Copies: size})
	sink := &countSink{}
	sub := e.NewSub(sink, nil)
	e.AddFilter(sub, Compile("f", spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	return e, sub, sink
}

// copyRec is transfer id of block at offset off of partition 0.
func copyRec(off int64, id, block string) Record {
	return Record{Part: 0, Off: off, Msg: &eventsv1.Transfer{Id: id, Chain: "ethereum", TransactionHash: "0x1", BlockHash: block,
		BlockTimeMs: 1, From: addr(1), To: addr(2)}}
}

// offsets are the record offsets of deliveries.
func offsets(items []Item) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, it.R.Off)
	}
	return out
}

// A transfer published again (same chain, id and block hash) at a later offset of its partition
// is offered once, live and in a catch-up; the same transfer in another block (a reorg) is
// another delivery, and a record read again at its own offset (a catch-up, a replay) is not a
// copy.
func TestCopiesAreMatchedOnce(t *testing.T) {
	e, sub, sink := copiesEngine(t, 16)
	for _, r := range []Record{copyRec(0, "a", "0xb1"), copyRec(1, "b", "0xb1"), copyRec(2, "a", "0xb1"), copyRec(3, "a", "0xb2")} {
		e.Process(r)
	}
	if got := offsets(sink.got); !slices.Equal(got, []int64{0, 1, 3}) {
		t.Fatalf("live deliveries at offsets %v, want [0 1 3] (the copy at 2 skipped)", got)
	}
	if st := e.Stats(); st.Repeated != 1 || e.Positions()[0] != 4 {
		t.Fatalf("stats %+v, position %d; want 1 repeated, position 4", st, e.Positions()[0])
	}
	recs := []Record{copyRec(0, "a", "0xb1"), copyRec(1, "b", "0xb1"), copyRec(2, "a", "0xb1"), copyRec(3, "a", "0xb2")}
	if got := offsets(e.MatchOne(sub, recs, Seen{})); !slices.Equal(got, []int64{0, 1, 3}) {
		t.Fatalf("a catch-up from 0 delivers offsets %v, want [0 1 3]", got)
	}
	if got := e.MatchOne(sub, recs[2:3], nil); len(got) != 0 {
		t.Fatalf("a catch-up from 2 delivers %v; want nothing (the first copy, at 0, was served before)", offsets(got))
	}
}

// A catch-up's records the live feed never read (before this replica started) are told apart
// by the catch-up itself, across its calls; and they do not enter the live feed's window.
func TestCatchUpCopiesBeforeTheLiveWindow(t *testing.T) {
	e, sub, _ := copiesEngine(t, 16)
	seen := Seen{}
	if got := e.MatchOne(sub, []Record{copyRec(5, "a", "0xb1")}, seen); len(got) != 1 {
		t.Fatalf("first copy: %d deliveries, want 1", len(got))
	}
	if got := e.MatchOne(sub, []Record{copyRec(7, "a", "0xb1")}, seen); len(got) != 0 {
		t.Fatalf("second copy in the same catch-up's next call: %d deliveries, want 0", len(got))
	}
	if n := len(e.copies.parts); n != 0 {
		t.Fatalf("the live window holds %d partitions after a catch-up; want none", n)
	}
}

// The window is bounded: a partition remembers its last size transfers, and a copy of one it
// has forgotten is delivered again. A partition's reset (a recreated topic) forgets it: the new
// log's offsets start again.
func TestCopyWindowIsBounded(t *testing.T) {
	e, _, sink := copiesEngine(t, 2)
	for _, r := range []Record{copyRec(0, "x", "0xb"), copyRec(1, "y", "0xb"), copyRec(2, "z", "0xb"), copyRec(3, "x", "0xb"), copyRec(4, "z", "0xb")} {
		e.Process(r)
	}
	if got := offsets(sink.got); !slices.Equal(got, []int64{0, 1, 2, 3}) {
		t.Fatalf("deliveries at %v, want [0 1 2 3] (x forgotten when z came, z remembered)", got)
	}
	if w := e.copies.parts[0]; len(w.first) != 2 || len(w.ring) != 2 {
		t.Fatalf("window holds %d identities in a ring of %d, want 2 and 2", len(w.first), len(w.ring))
	}
	e.Process(Record{Part: 0, Off: 0, Reset: true})
	e.Process(copyRec(0, "x", "0xb"))
	if len(sink.got) != 5 {
		t.Fatalf("%d deliveries; want x delivered from the recreated log", len(sink.got))
	}
}

// Options.Copies 0 skips nothing.
func TestNoCopyWindow(t *testing.T) {
	e, _, sink := copiesEngine(t, 0)
	e.Process(copyRec(0, "a", "0xb"))
	e.Process(copyRec(1, "a", "0xb"))
	if len(sink.got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(sink.got))
	}
}
