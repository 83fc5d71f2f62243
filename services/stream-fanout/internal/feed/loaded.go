package feed

import "sync"

// Loaded tracks a replica's first read of a topic from start: done runs once, when every
// partition has been read up to where it ended (end) when the read began, at once when none
// held anything. A partition found reset (the topic recreated: its new log may never reach the
// old end) no longer holds it back either. Safe for concurrent use by Follow's partitions.
type Loaded struct {
	mu   sync.Mutex
	end  map[int]int64
	left map[int]bool
	once sync.Once
	done func()
}

// NewLoaded returns the tracker of a read from start of a topic that ended at end.
func NewLoaded(start, end map[int]int64, done func()) *Loaded {
	l := &Loaded{end: end, left: map[int]bool{}, done: done}
	for part, off := range end {
		if off > start[part] {
			l.left[part] = true
		}
	}
	if len(l.left) == 0 {
		l.once.Do(done)
	}
	return l
}

// Passed notes that partition part is read up to next (reset: its log was found reset).
func (l *Loaded) Passed(part int, next int64, reset bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left[part] && (reset || next >= l.end[part]) {
		delete(l.left, part)
		if len(l.left) == 0 {
			l.once.Do(l.done)
		}
	}
}

// Record notes a record read (Follow's handle).
func (l *Loaded) Record(part int, offset int64) { l.Passed(part, offset+1, false) }

// Gap notes a gap found (Follow's gap): the read goes on from g.To.
func (l *Loaded) Gap(g Gap) { l.Passed(g.Partition, g.To, g.Reset) }
