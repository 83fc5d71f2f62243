package ws

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// A resumed session's saved position is checked against the topic: past a partition's end (the
// topic recreated, an in-memory broker restarted) it resumes from the new log's start, with
// the start read again (the shared read may predate the reset), before its start (retention)
// from the start, each reported as a gap; a position past the shared end, which may
// be a second old, is checked against the end read again before it counts as stale.
func TestCheckCursor(t *testing.T) {
	h := NewHub(Options{})
	var endReads atomic.Int32
	h.ends = newTopicEnds(func(context.Context) (map[int]int64, error) {
		if endReads.Add(1) == 1 {
			return map[int]int64{0: 100, 1: 100, 2: 100, 3: 100}, nil
		}
		return map[int]int64{0: 100, 1: 120, 2: 100, 3: 100}, nil
	}, time.Hour, time.Now)
	var startReads atomic.Int32
	h.starts = newTopicEnds(func(context.Context) (map[int]int64, error) {
		if startReads.Add(1) == 1 {
			// Read before partition 3 was reset: its old log started at 250.
			return map[int]int64{0: 0, 1: 0, 2: 40, 3: 250}, nil
		}
		return map[int]int64{0: 0, 1: 0, 2: 40, 3: 30}, nil
	}, time.Hour, time.Now)
	c := &conn{h: h, ctx: context.Background()}

	got, gaps := c.checkCursor(map[int]int64{0: 50, 1: 110, 2: 10, 3: 310})
	if want := map[int]int64{0: 50, 1: 110, 2: 40, 3: 30}; !reflect.DeepEqual(got, want) {
		t.Fatalf("resumes from %v, want %v", got, want)
	}
	want := []replayGap{{Partition: 2, SavedOffset: 10, ResumedAt: 40, Reason: GapRetention, found: foundCursor}, {Partition: 3, SavedOffset: 310, ResumedAt: 30, Reason: GapTopicReset, found: foundCursor}}
	if !reflect.DeepEqual(gaps, want) {
		t.Fatalf("gaps %+v, want %+v", gaps, want)
	}
	if n := endReads.Load(); n != 2 {
		t.Fatalf("the end was read %d times, want 2 (the shared read, then again for the positions past it)", n)
	}

	// Within the topic: nothing reported, the end not read again.
	got, gaps = c.checkCursor(map[int]int64{0: 100, 1: 0, 2: 40})
	if want := map[int]int64{0: 100, 1: 0, 2: 40}; !reflect.DeepEqual(got, want) || gaps != nil {
		t.Fatalf("resumes from %v with gaps %+v, want %v and none", got, gaps, want)
	}
	if n := endReads.Load(); n != 2 {
		t.Fatalf("the end was read %d times, want 2", n)
	}
}

// When the start read again for a position past the end fails, the shared start already read
// still checks every partition against retention: a position below it resumes from it.
func TestCheckCursorKeepsTheStartWhenItsRereadFails(t *testing.T) {
	h := NewHub(Options{})
	h.ends = newTopicEnds(func(context.Context) (map[int]int64, error) {
		return map[int]int64{0: 100, 1: 100}, nil
	}, time.Hour, time.Now)
	var startReads atomic.Int32
	h.starts = newTopicEnds(func(context.Context) (map[int]int64, error) {
		if startReads.Add(1) == 1 {
			return map[int]int64{0: 40, 1: 0}, nil
		}
		return nil, errors.New("broker unreachable")
	}, time.Hour, time.Now)
	c := &conn{h: h, ctx: context.Background()}

	got, gaps := c.checkCursor(map[int]int64{0: 10, 1: 110})
	if want := map[int]int64{0: 40, 1: 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("resumes from %v, want %v", got, want)
	}
	want := []replayGap{{Partition: 0, SavedOffset: 10, ResumedAt: 40, Reason: GapRetention, found: foundCursor}, {Partition: 1, SavedOffset: 110, ResumedAt: 0, Reason: GapTopicReset, found: foundCursor}}
	if !reflect.DeepEqual(gaps, want) {
		t.Fatalf("gaps %+v, want %+v", gaps, want)
	}
	if n := startReads.Load(); n != 2 {
		t.Fatalf("the start was read %d times, want 2 (the shared read, then again for the position past the end)", n)
	}
}
