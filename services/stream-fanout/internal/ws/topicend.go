package ws

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// topicEnds is the transfer topic's end as fresh connections need it (or its end or start as
// resumes check their saved positions against), read from the broker at most once per ttl and
// shared: thousands of clients connecting with fresh=true together cost one ListOffsets, not
// one each. A fresh session therefore starts at the later of this end (read at most ttl before
// its connect, so it can be sent a transfer published just before) and the replica's position
// when the session is registered.
type topicEnds struct {
	read func(context.Context) (map[int]int64, error)
	ttl  time.Duration
	now  func() time.Time
	// reads lets callers that arrive while a read is in flight wait for it rather than read.
	reads singleflight.Group

	mu  sync.Mutex
	end map[int]int64 // shared and read-only: never changed once stored
	at  time.Time     // when the read that returned end started
	// gen counts drops: a read that started before one is not stored.
	gen uint64
}

func newTopicEnds(read func(context.Context) (map[int]int64, error), ttl time.Duration, now func() time.Time) *topicEnds {
	return &topicEnds{read: read, ttl: ttl, now: now}
}

// get returns the topic's end as read within ttl, reading it when no read that recent is
// stored or in flight. The map is shared: callers must not change it. A caller whose ctx ends
// stops waiting; the read goes on for the others.
func (t *topicEnds) get(ctx context.Context) (map[int]int64, error) {
	if end, ok := t.fresh(); ok {
		return end, nil
	}
	rctx := context.WithoutCancel(ctx)
	ch := t.reads.DoChan("end", func() (any, error) { return t.fetch(rctx) })
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(map[int]int64), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fresh returns the stored end while it is younger than ttl.
func (t *topicEnds) fresh() (map[int]int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.end, t.end != nil && t.now().Sub(t.at) < t.ttl
}

// fetch reads the end and stores it for the callers of the next ttl (a failure is not stored:
// the next caller reads again). A caller that found no fresh end just before the read it
// would have joined finished gets that read's end, not a second read.
func (t *topicEnds) fetch(ctx context.Context) (map[int]int64, error) {
	if end, ok := t.fresh(); ok {
		return end, nil
	}
	return t.readNow(ctx)
}

// readNow reads the end whatever is stored, and stores it.
func (t *topicEnds) readNow(ctx context.Context) (map[int]int64, error) {
	started := t.now()
	t.mu.Lock()
	gen := t.gen
	t.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	end, err := t.read(rctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.gen == gen {
		t.end, t.at = end, started
	}
	t.mu.Unlock()
	return end, nil
}

// drop forgets the stored read: the topic's offsets started again (it was recreated).
func (t *topicEnds) drop() {
	t.mu.Lock()
	t.end = nil
	t.gen++
	t.mu.Unlock()
}
