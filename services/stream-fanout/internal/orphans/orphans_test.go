package orphans

import (
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

func reorg(chain string, orphaned, canonical []string) *eventsv1.Reorg {
	r := &eventsv1.Reorg{Chain: chain}
	for _, h := range orphaned {
		r.Orphaned = append(r.Orphaned, &eventsv1.Reorg_Block{Hash: h})
	}
	for _, h := range canonical {
		r.Canonical = append(r.Canonical, &eventsv1.Reorg_Block{Hash: h})
	}
	return r
}

// TestApply: a reorg marks its orphaned blocks (hashes in their canonical form, per chain), a
// later one naming a block canonical again unmarks it, and a mark is dropped once it is older
// than keep, unless a skipped transfer of its block refreshed it.
func TestApply(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := New(time.Hour, func() time.Time { return now })
	// Upper-case hex, as a node may answer: transfers are normalised to lower case.
	if o, c := s.Apply(reorg("ethereum", []string{"0xAA", "0xbb", ""}, nil), now); o != 2 || c != 0 {
		t.Fatalf("applied %d orphaned, %d canonical", o, c)
	}
	if !s.Orphaned("ethereum", "0xaa") || !s.Orphaned("ethereum", "0xbb") || s.Orphaned("polygon", "0xaa") {
		t.Fatal("marks per chain and hash")
	}
	if o, c := s.Apply(reorg("ethereum", nil, []string{"0xbb", "0xcc"}), now); o != 0 || c != 1 {
		t.Fatalf("applied %d orphaned, %d canonical", o, c)
	}
	if s.Orphaned("ethereum", "0xbb") || !s.Orphaned("ethereum", "0xaa") {
		t.Fatal("0xbb canonical again, 0xaa still orphaned")
	}
	// A reorg older than keep (read back from the topic) marks nothing.
	if o, _ := s.Apply(reorg("ethereum", []string{"0xdd"}, nil), now.Add(-2*time.Hour)); o != 0 || s.Orphaned("ethereum", "0xdd") {
		t.Fatal("a reorg older than keep marked its blocks")
	}
	s.Apply(reorg("ethereum", []string{"0xee"}, nil), now)
	now = now.Add(50 * time.Minute)
	if !s.Skip("ethereum", "0xee", nil) || s.Skip("ethereum", "0xff", nil) {
		t.Fatal("skip")
	}
	now = now.Add(20 * time.Minute)
	s.Apply(reorg("polygon", nil, nil), now)
	if s.Orphaned("ethereum", "0xaa") || !s.Orphaned("ethereum", "0xee") || s.Len() != 1 {
		t.Fatalf("after keep: 0xaa dropped, 0xee refreshed by its skip; %d marks", s.Len())
	}
}
