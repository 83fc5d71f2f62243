package ws

import (
	"context"
	"sync"
	"time"
)

// topicEnds is the transfer topic's end as fresh connections need it, read from the broker at
// most once per ttl and shared: thousands of clients connecting with fresh=true together cost
// one ListOffsets, not one each. A fresh session therefore starts at the later of this end
// (read at most ttl before its connect, so it can be sent a transfer published just before)
// and the replica's position when the session is registered.
type topicEnds struct {
	read func(context.Context) (map[int]int64, error)
	ttl  time.Duration
	now  func() time.Time

	mu   sync.Mutex
	end  map[int]int64 // shared and read-only: never changed once stored
	at   time.Time     // when the read that returned end started
	call *endRead      // the read in flight, nil when none is
}

// endRead is one read of the topic's end, waited for by every caller that arrives meanwhile.
type endRead struct {
	done    chan struct{}
	started time.Time
	end     map[int]int64
	err     error
}

func newTopicEnds(read func(context.Context) (map[int]int64, error), ttl time.Duration, now func() time.Time) *topicEnds {
	return &topicEnds{read: read, ttl: ttl, now: now}
}

// get returns the topic's end as read within ttl, reading it when no read that recent is
// stored or in flight. The map is shared: callers must not change it.
func (t *topicEnds) get(ctx context.Context) (map[int]int64, error) {
	t.mu.Lock()
	now := t.now()
	if t.end != nil && now.Sub(t.at) < t.ttl {
		end := t.end
		t.mu.Unlock()
		return end, nil
	}
	call := t.call
	if call == nil {
		call = &endRead{done: make(chan struct{}), started: now}
		t.call = call
		go t.fetch(context.WithoutCancel(ctx), call)
	}
	t.mu.Unlock()
	select {
	case <-call.done:
		return call.end, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch reads the end for call and stores it for the callers of the next ttl (a failure is
// not stored: the next caller reads again).
func (t *topicEnds) fetch(ctx context.Context, call *endRead) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	call.end, call.err = t.read(rctx)
	t.mu.Lock()
	if call.err == nil && (t.end == nil || !call.started.Before(t.at)) {
		t.end, t.at = call.end, call.started
	}
	t.call = nil
	t.mu.Unlock()
	close(call.done)
}
