package engine

import (
	"maps"
	"testing"
)

// A subscription is served up to its skip on a partition the engine has not read yet (one added
// to the topic that this replica has not found): a saved cursor without it would have the
// session's next resume read that partition from its start again.
func TestServedNamesSkippedPartitionsNotReadYet(t *testing.T) {
	e := New(Options{})
	e.SetPositions(map[int]int64{0: 3})
	sub := e.NewSub(&countSink{}, map[int]int64{0: 5, 7: 10})
	if got, want := e.Served(sub), map[int]int64{0: 5, 7: 10}; !maps.Equal(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
}
