package ws

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
)

// TestBoundReplayLeavesThePositionBehindWhatItCuts: a replay buffer bounded at 1,000 bytes
// keeps an earlier buffer's messages, the first transfer's deliveries whatever their size,
// then those that fit; a delivery kept at or past a partition's first cut offset (another
// filter's match of a transfer cut) leaves the buffer too, and the position returned is,
// per partition, the first offset cut, so a catch-up from it delivers the rest once.
func TestBoundReplayLeavesThePositionBehindWhatItCuts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{h: NewHub(Options{ReplayMaxBytes: 1000}), ctx: ctx, cancel: cancel, id: Identity{UserID: "u1", KeyID: "k1"}}
	rec := func(part int, off int64, size int) *engine.Rendered {
		return &engine.Rendered{Part: part, Off: off, JSON: []byte(`{"pad":"` + strings.Repeat("x", size) + `"}`)}
	}
	first, small, split, other := rec(0, 7, 700), rec(1, 3, 100), rec(0, 8, 100), rec(1, 4, 400)
	items := []engine.Item{
		{R: first, FilterID: "f1"}, {R: first, FilterID: "f2"}, // 2 x ~750 bytes: over the bound, kept
		{R: small, FilterID: "f1"}, // does not fit after them: cut, and all after it
		{R: split, FilterID: "f1"}, {R: split, FilterID: "f2"},
		{R: other, FilterID: "f1"},
	}
	cursor := map[int]int64{0: 9, 1: 5, 2: 11}
	raw := [][]byte{[]byte("earlier")}
	got, pos := c.boundReplay("s1", raw, items, cursor)
	if len(got) != 3 || string(got[0]) != "earlier" {
		t.Fatalf("kept %d messages (first %q), want the earlier one and the first transfer's two", len(got), got[0])
	}
	if want := map[int]int64{0: 8, 1: 3, 2: 11}; !maps.Equal(pos, want) {
		t.Fatalf("position %v, want %v", pos, want)
	}
	if cursor[0] != 9 {
		t.Fatal("the caller's cursor was changed")
	}

	// Within the bound: everything, the position as given.
	c.h.o.ReplayMaxBytes = 1 << 20
	got, pos = c.boundReplay("s1", raw, items, cursor)
	if len(got) != 1+len(items) || !maps.Equal(pos, cursor) {
		t.Fatalf("within the bound: %d messages, position %v; want %d, %v", len(got), pos, 1+len(items), cursor)
	}

	// A kept delivery at or past the first cut offset of its partition leaves the buffer.
	part := []engine.Item{{R: first, FilterID: "f1"}, {R: small, FilterID: "f1"}, {R: split, FilterID: "f1"}, {R: split, FilterID: "f2"}}
	c.h.o.ReplayMaxBytes = 0
	for _, m := range c.renderUnsent(nil, part[:3]) {
		c.h.o.ReplayMaxBytes += len(m) // room for split's first filter, not its second
	}
	got, pos = c.boundReplay("s1", nil, part, cursor)
	if len(got) != 2 || !maps.Equal(pos, map[int]int64{0: 8, 1: 5, 2: 11}) {
		t.Fatalf("a transfer cut in part: %d messages, position %v; want 2 (the first and the small one), {0:8 1:5 2:11}", len(got), pos)
	}

	// No position to save: nothing is cut.
	got, _ = c.boundReplay("s1", nil, items, nil)
	if len(got) != len(items) {
		t.Fatalf("no position: %d messages, want all %d", len(got), len(items))
	}
}
