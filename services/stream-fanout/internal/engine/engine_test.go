package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

type countSink struct{ got []Item }

func (s *countSink) Offer(it []Item) Offered { s.got = append(s.got, it...); return Queued }

func (s *countSink) Wake() {}

func addr(n int) string { return fmt.Sprintf("0x%040x", n) }

func spec(t testing.TB, r filter.Raw) filter.Spec {
	s, err := filter.Parse(r, filter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func usd(v float64) *float64 { return &v }

// world builds an engine with entities, subscriptions of mixed filters, and transfers.
func world(t testing.TB, naive bool, subs int, rng *rand.Rand) (*Engine, []*countSink) {
	e := New(Options{Naive: naive})
	for i := range 2500 {
		typ := []string{"cex", "dex", "fund", "individual"}[i%4]
		e.SetAttr(AttrKey{"evm", addr(2 * i)}, &render.Attr{Entity: &render.Entity{ID: fmt.Sprintf("ent%d", i%200), Type: typ}})
		if i%5 == 0 {
			e.SetAttr(AttrKey{"evm", addr(2*i + 1)}, &render.Attr{DepositServiceID: fmt.Sprintf("ent%d", i%200)})
		}
	}
	var sinks []*countSink
	for i := range subs {
		s := &countSink{}
		sinks = append(sinks, s)
		sub := e.NewSub(s, nil)
		var r filter.Raw
		switch i % 6 {
		case 0:
			r.From = filter.List{addr(rng.IntN(5000))}
		case 1:
			r.To = filter.List{fmt.Sprintf("ent%d", rng.IntN(200))}
		case 2:
			r.From = filter.List{"type:" + []string{"cex", "dex", "fund", "individual"}[rng.IntN(4)]}
			g := filter.Number(100_000)
			r.USDGte = &g
		case 3:
			r.To = filter.List{fmt.Sprintf("deposit:ent%d", rng.IntN(200))}
		case 4:
			r.Tokens = filter.List{fmt.Sprintf("token%d", rng.IntN(100))}
			r.Chains = filter.List{"ethereum"}
		case 5:
			g := filter.Number(10_000_000 + rng.IntN(90_000_000))
			r.USDGte = &g
		}
		e.AddFilter(sub, Compile(fmt.Sprintf("f%d", i), spec(t, r), nil))
	}
	return e, sinks
}

// record is a transfer between 5,000 addresses (half attributed) of one of 100 tokens, its
// value mostly small, sometimes large.
func record(rng *rand.Rand, off int64) Record {
	v := 10 * rng.ExpFloat64()
	switch r := rng.Float64(); {
	case r < 0.002:
		v = 10_000_000 + rng.Float64()*90_000_000
	case r < 0.05:
		v = 100_000 + rng.Float64()*1_000_000
	}
	m := &eventsv1.Transfer{Id: fmt.Sprintf("t%d", off), Chain: "ethereum", From: addr(rng.IntN(5000)), To: addr(rng.IntN(5000)),
		TokenId: fmt.Sprintf("token%d", rng.IntN(100)), Amount: "1000000", TokenDecimals: 6, HistoricalUsd: usd(v)}
	return Record{Part: 0, Off: off, Msg: m}
}

// TestIndexMatchesNaive: the indexed engine delivers exactly what checking every filter does.
func TestIndexMatchesNaive(t *testing.T) {
	ix, a := world(t, false, 600, rand.New(rand.NewPCG(1, 2)))
	nv, b := world(t, true, 600, rand.New(rand.NewPCG(1, 2)))
	rng1, rng2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		ix.Process(record(rng1, int64(i)))
		nv.Process(record(rng2, int64(i)))
	}
	total := 0
	for i := range a {
		if len(a[i].got) != len(b[i].got) {
			t.Fatalf("sub %d: indexed %d deliveries, naive %d", i, len(a[i].got), len(b[i].got))
		}
		for j := range a[i].got {
			if a[i].got[j].R.T.ID != b[i].got[j].R.T.ID {
				t.Fatalf("sub %d delivery %d differs", i, j)
			}
		}
		total += len(a[i].got)
	}
	if total == 0 {
		t.Fatal("nothing matched: the test proves nothing")
	}
}

// TestRelabelChangesMatching: an attribution applied changes what an entity filter matches.
func TestRelabelChangesMatching(t *testing.T) {
	e := New(Options{})
	s := &countSink{}
	sub := e.NewSub(s, nil)
	e.AddFilter(sub, Compile("f", spec(t, filter.Raw{To: filter.List{"exch"}}), nil))
	tr := func(off int64) Record {
		return Record{Off: off, Msg: &eventsv1.Transfer{Id: fmt.Sprint(off), Chain: "ethereum", From: addr(1), To: addr(2), Amount: "1"}}
	}
	e.Process(tr(0))
	e.SetAttr(AttrKey{"evm", addr(2)}, &render.Attr{Entity: &render.Entity{ID: "exch", Type: "cex"}, Version: 1})
	e.Process(tr(1))
	e.SetAttr(AttrKey{"evm", addr(2)}, nil)
	e.Process(tr(2))
	if len(s.got) != 1 || s.got[0].R.T.ID != "1" || s.got[0].R.T.ToAddress.ServiceEntity.ID != "exch" {
		t.Fatalf("deliveries %v", s.got)
	}
}

// TestNoAllocationPerCandidate: a transfer that many filters are candidates for and none
// matches allocates nothing in matching.
func TestNoAllocationPerCandidate(t *testing.T) {
	e := New(Options{})
	for i := range 5000 {
		sub := e.NewSub(&countSink{}, nil)
		g := filter.Number(1_000_000_000)
		e.AddFilter(sub, Compile(fmt.Sprint(i), spec(t, filter.Raw{From: filter.List{addr(7)}, USDGte: &g}), nil))
	}
	r := Record{Msg: &eventsv1.Transfer{Id: "x", Chain: "ethereum", From: addr(7), To: addr(8), Amount: "1", HistoricalUsd: usd(5)}}
	allocs := testing.AllocsPerRun(100, func() { r.Off++; e.Process(r) })
	if allocs != 0 {
		t.Fatalf("%v allocations per transfer with 5000 candidate filters", allocs)
	}
}

// BenchmarkProcess is the matching cost per transfer with 10,000 and 30,000 filters of the mix
// above (30,000 is what the stream bench's 10,000 clients of 1 to 5 filters hold), indexed and
// naive (every filter checked).
func BenchmarkProcess(b *testing.B) {
	for _, n := range []int{10_000, 30_000} {
		for _, naive := range []bool{false, true} {
			b.Run(fmt.Sprintf("filters=%d/naive=%v", n, naive), func(b *testing.B) {
				e, _ := world(b, naive, n, rand.New(rand.NewPCG(1, 2)))
				rng := rand.New(rand.NewPCG(5, 6))
				recs := make([]Record, 4096)
				for i := range recs {
					recs[i] = record(rng, int64(i))
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					e.Process(recs[i%len(recs)])
				}
			})
		}
	}
}
