package store

import (
	"testing"
	"time"
)

// TestPieces checks that the pieces of a /token/top range cover it exactly, in order, that day
// pieces are whole UTC days, and that no day piece straddles the current window's start.
func TestPieces(t *testing.T) {
	end := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	for _, tf := range []time.Duration{time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
		for n := 1; n <= 30; n++ {
			for shift := range 24 {
				to := end.Add(time.Duration(shift) * time.Hour)
				split := to.Add(-tf)
				from := split.Add(-time.Duration(n) * tf)
				los, his, daily := pieces(from, split, to)
				at := from
				for i := range los {
					if !los[i].Equal(at) || !los[i].Before(his[i]) {
						t.Fatalf("tf %s n %d to %s: piece %d [%s, %s) after %s", tf, n, to, i, los[i], his[i], at)
					}
					if daily[i] {
						if !los[i].Equal(los[i].Truncate(day)) || !his[i].Equal(his[i].Truncate(day)) {
							t.Fatalf("tf %s n %d to %s: day piece [%s, %s) not whole days", tf, n, to, los[i], his[i])
						}
						if los[i].Before(split) && his[i].After(split) {
							t.Fatalf("tf %s n %d to %s: day piece [%s, %s) straddles %s", tf, n, to, los[i], his[i], split)
						}
					}
					at = his[i]
				}
				if !at.Equal(to) {
					t.Fatalf("tf %s n %d to %s: pieces end at %s", tf, n, to, at)
				}
			}
		}
	}
}
