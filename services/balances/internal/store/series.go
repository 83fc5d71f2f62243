package store

import (
	"math/big"
	"sort"
	"time"
)

// Point is one daily snapshot of a (chain, address, token): the balance at the end of Day, read
// at Block.
type Point struct {
	Day     time.Time
	Block   int64
	Balance *big.Int
	// stored: a row of address_daily holds it (load_daily), not only the current row.
	stored bool
}

// ffill is the balance at the end of day d: the last point on or before d, or zero.
func ffill(ps []Point, d time.Time) *big.Int {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Day.After(d) })
	if i == 0 {
		return new(big.Int)
	}
	return ps[i-1].Balance
}

// DayDelta is a change of an entity's end-of-day balance of one token.
type DayDelta struct {
	Day   time.Time
	Delta *big.Int
}

// Diff compares a key's snapshots before and after a write, both sorted by day. It
// returns, for each day whose day-over-day change differs, the difference of the changes: added
// to the entity's change rows, it turns the entity's sums of the old series into sums of the new
// one. final is how much the last balance moved (the change of the current balance).
func Diff(before, after []Point) (deltas []DayDelta, final *big.Int) {
	// The common case, a new day after every earlier one, changes that day and the last balance
	// alike: no need to walk the days.
	if nb, na := len(before), len(after); na == nb+1 && samePrefix(before, after) && (nb == 0 || after[na-1].Day.After(before[nb-1].Day)) {
		prev := new(big.Int)
		if nb > 0 {
			prev = before[nb-1].Balance
		}
		d := new(big.Int).Sub(after[na-1].Balance, prev)
		if d.Sign() == 0 {
			return nil, d
		}
		return []DayDelta{{Day: after[na-1].Day, Delta: d}}, d
	}
	days := map[time.Time]bool{}
	for _, p := range before {
		days[p.Day] = true
	}
	for _, p := range after {
		days[p.Day] = true
	}
	sorted := make([]time.Time, 0, len(days))
	for d := range days {
		sorted = append(sorted, d)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	for _, d := range sorted {
		prev := d.AddDate(0, 0, -1)
		dn := new(big.Int).Sub(ffill(after, d), ffill(after, prev))
		do := new(big.Int).Sub(ffill(before, d), ffill(before, prev))
		if x := dn.Sub(dn, do); x.Sign() != 0 {
			deltas = append(deltas, DayDelta{Day: d, Delta: x})
		}
	}
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	return deltas, new(big.Int).Sub(ffill(after, far), ffill(before, far))
}

// samePrefix reports whether after starts with exactly the points of before.
func samePrefix(before, after []Point) bool {
	for i, p := range before {
		if !after[i].Day.Equal(p.Day) || after[i].Balance.Cmp(p.Balance) != 0 {
			return false
		}
	}
	return true
}

// Merge returns old with each candidate applied: a candidate replaces its day's point when it
// was read at a newer block (late, older reads of a day change nothing).
func Merge(old []Point, cands []Point) []Point {
	if len(cands) == 1 && (len(old) == 0 || cands[0].Day.After(old[len(old)-1].Day)) {
		return append(append(make([]Point, 0, len(old)+1), old...), cands[0])
	}
	byDay := make(map[time.Time]Point, len(old)+len(cands))
	for _, p := range old {
		byDay[p.Day] = p
	}
	for _, c := range cands {
		if p, ok := byDay[c.Day]; !ok || c.Block > p.Block {
			byDay[c.Day] = c
		}
	}
	out := make([]Point, 0, len(byDay))
	for _, p := range byDay {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Day.Before(out[j].Day) })
	return out
}

// Day is the UTC day of t.
func Day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
