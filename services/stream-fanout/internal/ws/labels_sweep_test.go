package ws

import (
	"testing"
	"time"
)

// Books and additions of callers who went away are dropped once expired, at most once a ttl;
// an entry still being read and fresh ones stay.
func TestLabelCacheSweepsExpiredEntries(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	lc := newLabelCache(time.Minute)
	readyAt := func(until time.Time) *bookEntry {
		e := &bookEntry{ready: make(chan struct{}), until: until}
		close(e.ready)
		return e
	}
	lc.books["gone"] = readyAt(now.Add(-time.Second))
	lc.books["fresh"] = readyAt(now.Add(time.Second))
	lc.books["reading"] = &bookEntry{ready: make(chan struct{}), until: now.Add(-time.Second)}
	lc.adds["gone"] = map[string]addedEntry{"binance": {until: now.Add(-time.Second)}}
	lc.adds["fresh"] = map[string]addedEntry{"binance": {until: now.Add(time.Second)}, "okx": {until: now.Add(-time.Second)}}

	lc.sweepLocked(now)
	if _, ok := lc.books["gone"]; ok || len(lc.books) != 2 || lc.books["fresh"] == nil || lc.books["reading"] == nil {
		t.Fatalf("books after the sweep: %v", lc.books)
	}
	if _, ok := lc.adds["gone"]; ok || len(lc.adds) != 1 || len(lc.adds["fresh"]) != 1 {
		t.Fatalf("additions after the sweep: %v", lc.adds)
	}
	// Within a ttl of the last sweep nothing is swept, after it the newly expired go.
	lc.books["gone"] = readyAt(now)
	lc.sweepLocked(now.Add(30 * time.Second))
	if lc.books["gone"] == nil {
		t.Fatal("swept again within a ttl")
	}
	lc.sweepLocked(now.Add(time.Minute))
	if _, ok := lc.books["gone"]; ok || lc.books["fresh"] != nil {
		t.Fatalf("books a ttl later: %v", lc.books)
	}
}
