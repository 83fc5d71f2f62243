package store

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// The fast paths of Merge and Diff agree with the general walk.
func TestDiffFastPathAgrees(t *testing.T) {
	day := func(i int) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var before []Point
		d := 0
		for range r.IntN(4) {
			d += 1 + r.IntN(3)
			before = append(before, Point{Day: day(d), Block: int64(d), Balance: big.NewInt(r.Int64N(5))})
		}
		c := Point{Day: day(d + r.IntN(3) - 1), Block: int64(d + 10), Balance: big.NewInt(r.Int64N(5))}
		after := Merge(before, []Point{c})
		deltas, final := Diff(before, after)
		// The general walk, without the fast path: compare every day's change.
		for i := 0; i <= d+3; i++ {
			want := new(big.Int).Sub(new(big.Int).Sub(ffill(after, day(i)), ffill(after, day(i-1))),
				new(big.Int).Sub(ffill(before, day(i)), ffill(before, day(i-1))))
			got := new(big.Int)
			for _, x := range deltas {
				if x.Day.Equal(day(i)) {
					got = x.Delta
				}
			}
			if got.Cmp(want) != 0 {
				t.Fatalf("before %v cand %v: day %d delta %v, want %v", before, c, i, got, want)
			}
		}
		if want := new(big.Int).Sub(ffill(after, day(1000)), ffill(before, day(1000))); final.Cmp(want) != 0 {
			t.Fatalf("final %v, want %v", final, want)
		}
	}
}
