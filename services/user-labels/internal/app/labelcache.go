package app

import (
	"container/list"
	"sync"
)

// Versions are the versions of a user's label set and entity set. The store moves each in the
// same transaction as every change of it, so equal versions mean equal data.
type Versions struct {
	Labels, Entities int64
}

// userCache keeps a derived answer per user (an encoded label list, a lookup index) together
// with the versions it was built from. An entry is only served while those versions are still
// the stored ones, so the cache is never stale, whichever replica wrote. It holds at most
// maxBytes (as estimated by the caller), evicting the least recently used. It is safe for
// concurrent use.
type userCache[V any] struct {
	maxBytes int64

	mu    sync.Mutex
	bytes int64
	lru   *list.List // of *cacheEntry[V], most recent first
	byID  map[string]*list.Element
}

type cacheEntry[V any] struct {
	user    string
	version Versions
	value   V
	size    int64
}

func newUserCache[V any](maxBytes int64) *userCache[V] {
	return &userCache[V]{maxBytes: maxBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// get returns user's value if it was built at version.
func (c *userCache[V]) get(user string, version Versions) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.byID[user]
	if !ok {
		return zero, false
	}
	e := el.Value.(*cacheEntry[V])
	if e.version != version {
		return zero, false
	}
	c.lru.MoveToFront(el)
	return e.value, true
}

// put stores user's value built at version, of about size bytes, unless it is over a quarter of
// the budget.
func (c *userCache[V]) put(user string, version Versions, value V, size int64) {
	size += int64(len(user)) + 64
	if size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[user]; ok {
		c.bytes -= el.Value.(*cacheEntry[V]).size
		c.lru.Remove(el)
	}
	c.byID[user] = c.lru.PushFront(&cacheEntry[V]{user: user, version: version, value: value, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.lru.Back()
		e := last.Value.(*cacheEntry[V])
		c.bytes -= e.size
		c.lru.Remove(last)
		delete(c.byID, e.user)
	}
}
