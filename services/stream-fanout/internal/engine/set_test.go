package engine

import (
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// TestMatchSet: a set's filters match through the index, each record once per filter, a
// replaced filter as it is now, a removed one no more, an orphaned record never.
func TestMatchSet(t *testing.T) {
	e := New(Options{Orphaned: func(_, hash string, _ int, _ int64) bool { return hash == "orphan" }})
	s := NewSet()
	a, b := "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"
	compile := func(id string, raw filter.Raw) *Filter {
		spec, err := filter.Parse(raw, filter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return Compile(id, spec, nil)
	}
	s.Put(compile("1", filter.Raw{From: filter.List{a}}))
	s.Put(compile("2", filter.Raw{Base: filter.List{a, b}}))
	rec := func(off int64, from, to, block string) Record {
		return Record{Off: off, Msg: &eventsv1.Transfer{Id: "t", Chain: "ethereum", From: from, To: to, BlockHash: block, Amount: "1"}}
	}
	ms := e.MatchSet(s, []Record{rec(0, a, b, "x"), rec(1, b, "0x00000000000000000000000000000000000000c3", "x"), rec(2, a, b, "orphan")})
	if len(ms) != 2 || len(ms[0].IDs) != 2 || ms[1].R.Off != 1 || len(ms[1].IDs) != 1 || ms[1].IDs[0] != "2" {
		t.Fatalf("matches %+v", ms)
	}
	s.Put(compile("1", filter.Raw{From: filter.List{b}}))
	s.Remove("2")
	ms = e.MatchSet(s, []Record{rec(3, a, b, "x"), rec(4, b, a, "x")})
	if len(ms) != 1 || ms[0].R.Off != 4 || ms[0].IDs[0] != "1" || s.Len() != 1 {
		t.Fatalf("after the change: %+v", ms)
	}
}
