package store

import "testing"

// A Store's batches prune a chain's journal the first time, then once the cutoff moved a
// pruneStep of chain time; other chains are apart; a save without a Store's memory always prunes.
func TestJournalPrunesDue(t *testing.T) {
	step := pruneStep.Milliseconds()
	p := &journalPrunes{cutoff: map[string]int64{}}
	for i, c := range []struct {
		chain  string
		cutoff int64
		want   bool
	}{
		{"ethereum", 1000, true},
		{"ethereum", 1000, false},
		{"ethereum", 1000 + step - 1, false},
		{"base", 1000, true},
		{"ethereum", 1000 + step, true},
		{"ethereum", 1000 + step + 1, false},
		{"ethereum", 0, false}, // a partition behind the others
	} {
		if got := p.due(c.chain, c.cutoff); got != c.want {
			t.Errorf("%d: due(%s, %d) = %v, want %v", i, c.chain, c.cutoff, got, c.want)
		}
	}
	var none *journalPrunes
	if !none.due("ethereum", 0) || !none.due("ethereum", 0) {
		t.Error("a nil journalPrunes must always prune")
	}
}
