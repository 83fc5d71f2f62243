package market

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
)

// Source is the owner of the price history (token-analytics' POST /internal/prices/window,
// *taclient.Client): the points of a window for a set of pricing ids. An error (the owner
// unreachable, or still importing its token lists and price CSVs) is retried by the caller; an
// answer without an id's points means the owner holds none there.
type Source interface {
	PriceWindow(ctx context.Context, ids []string, from, to time.Time) (map[string][]taclient.PricePoint, error)
}

// Want is a price the indexer needs: a pricing id's at a block's time.
type Want struct {
	ID string
	At time.Time
}

// day is the UTC day a time lies in.
func day(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// lookedLimit bounds the (pricing id, day) windows remembered as read; the set is cleared
// when full (a window read again costs one more call, never a wrong price).
const lookedLimit = 100_000

// SetSource makes Fill read from src what the book misses; nil (the default) reads nothing.
func (m *Model) SetSource(src Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.src = src
}

// Fill makes sure the book holds every point that decides the price in force for each want.
// The book is whole only where it read the source or the topic kept a stretch of history: a
// want whose price in force in the book is missing or older than its UTC day's start (a newer
// point of that day may be one the broker lost) has the source read for the points of that day
// and of MaxAge before it, once per pricing id and day (one call per day for all the ids
// missing then), which the book keeps. It returns how many calls it made; an error means some
// wants may still lack a price the source holds, so the caller must not publish them
// unpriced. Without a source it does nothing.
func (m *Model) Fill(ctx context.Context, wants []Want) (int, error) {
	m.mu.RLock()
	src := m.src
	m.mu.RUnlock()
	if src == nil {
		return 0, nil
	}
	byDay := m.missing(wants)
	days := make([]time.Time, 0, len(byDay))
	for d := range byDay {
		days = append(days, d)
	}
	slices.SortFunc(days, func(a, b time.Time) int { return a.Compare(b) })
	calls := 0
	for _, d := range days {
		ids := byDay[d]
		for start := 0; start < len(ids); start += taclient.MaxWindowIDs {
			part := ids[start:min(start+taclient.MaxWindowIDs, len(ids))]
			calls++
			ps, err := src.PriceWindow(ctx, part, d.Add(-MaxAge), d.Add(24*time.Hour-time.Millisecond))
			if err != nil {
				return calls, fmt.Errorf("prices of %d pricing ids on %s: %w", len(part), d.Format(time.DateOnly), err)
			}
			m.addWindow(d, part, ps)
		}
	}
	return calls, nil
}

// missing groups by day the pricing ids of wants the book has no point of their day at or
// before their time for, and whose day's window was not read yet.
func (m *Model) missing(wants []Want) map[time.Time][]string {
	byDay := map[time.Time][]string{}
	seen := map[lookKey]bool{}
	for _, w := range wants {
		if w.ID == "" {
			continue
		}
		k := lookKey{w.ID, day(w.At)}
		if seen[k] {
			continue
		}
		if m.pointSince(w.ID, k.day, w.At) {
			continue
		}
		seen[k] = true
		m.mu.RLock()
		looked := m.looked[k]
		m.mu.RUnlock()
		if !looked {
			byDay[k.day] = append(byDay[k.day], w.ID)
		}
	}
	return byDay
}

// addWindow adds a day's window read for ids and remembers it as read.
func (m *Model) addWindow(d time.Time, ids []string, ps map[string][]taclient.PricePoint) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.looked)+len(ids) > lookedLimit {
		m.looked = map[lookKey]bool{}
	}
	for _, id := range ids {
		for _, p := range ps[id] {
			if p.Price > 0 {
				m.add(id, point{p.TimeMs, p.Price})
			}
		}
		m.looked[lookKey{id, d}] = true
	}
}

type lookKey struct {
	id  string
	day time.Time
}

// Ready asks the source whether it answers (its imports at start done, the service reachable):
// nil when it does or when there is no source.
func (m *Model) Ready(ctx context.Context) error {
	m.mu.RLock()
	src := m.src
	m.mu.RUnlock()
	if src == nil {
		return nil
	}
	now := time.Now()
	_, err := src.PriceWindow(ctx, []string{}, now, now)
	return err
}

// pointSince reports whether the book has a point of id with from <= time <= at.
func (m *Model) pointSince(id string, from, at time.Time) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ps := m.prices[id]
	ms := at.UnixMilli()
	i := sort.Search(len(ps), func(i int) bool { return ps[i].ms > ms })
	return i > 0 && ps[i-1].ms >= from.UnixMilli()
}
