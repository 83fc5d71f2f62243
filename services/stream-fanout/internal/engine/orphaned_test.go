package engine

import (
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// A transfer of an orphaned block matches nothing, live or in a catch-up, and still moves its
// partition's position on: no session is owed it.
func TestOrphanedTransfersMatchNothing(t *testing.T) {
	e := New(Options{Orphaned: func(chain, hash string, _ int, _ int64) bool { return chain == "ethereum" && hash == "0xdead" }})
	sink := &countSink{}
	sub := e.NewSub(sink, nil)
	e.AddFilter(sub, Compile("f", spec(t, filter.Raw{From: filter.List{addr(1)}}), nil))
	rec := func(off int64, block string) Record {
		return Record{Part: 0, Off: off, Msg: &eventsv1.Transfer{Id: block, Chain: "ethereum", TransactionHash: "0x1", BlockHash: block,
			BlockTimeMs: 1, From: addr(1), To: addr(2)}}
	}
	e.Process(rec(0, "0xdead"))
	e.Process(rec(1, "0xbeef"))
	if len(sink.got) != 1 || sink.got[0].R.T.BlockHash != "0xbeef" || e.Positions()[0] != 2 {
		t.Fatalf("live: %d delivered, position %d", len(sink.got), e.Positions()[0])
	}
	if got := e.MatchOne(sub, []Record{rec(0, "0xdead"), rec(1, "0xbeef")}, nil); len(got) != 1 || got[0].R.T.BlockHash != "0xbeef" {
		t.Fatalf("catch-up: %d delivered", len(got))
	}
}
