package app

import (
	"context"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// LabelCache keeps each caller's user-labels lookups, so a page of transfers asks user-labels
// only for addresses it has not seen lately, in one batched call. user-labels announces every
// change on user.changes.v1 and the service's consumer of it calls Forget, so a caller's edit
// shows on the next request; the TTL only bounds how stale an entry can get while those events
// are late (the broker down, the consumer behind). User entity and additions calls pass through. It is
// safe for concurrent use.
type LabelCache struct {
	next UserLabels
	ttl  time.Duration
	max  int

	mu      sync.Mutex
	entries map[string]map[string]cacheEntry // user → AddressRef.Key() → entry
	n       int
	// forgets counts Forget calls: an answer asked for before one is returned but not kept, as
	// it may predate the change.
	forgets uint64
}

type cacheEntry struct {
	label    *ulclient.Label
	entities []ulclient.EntityRef
	expires  time.Time
}

// NewLabelCache wraps next; entries live for ttl, and at most max are kept.
func NewLabelCache(next UserLabels, ttl time.Duration, max int) *LabelCache {
	return &LabelCache{next: next, ttl: ttl, max: max, entries: map[string]map[string]cacheEntry{}}
}

// Forget drops what the cache holds of user's addresses keys (AddressRef.Key()), or of all the
// user's addresses when keys is empty.
func (c *LabelCache) Forget(user string, keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	m := c.entries[user]
	if len(keys) == 0 {
		c.n -= len(m)
		delete(c.entries, user)
		return
	}
	for _, k := range keys {
		if _, ok := m[k]; ok {
			delete(m, k)
			c.n--
		}
	}
	if len(m) == 0 {
		delete(c.entries, user)
	}
}

// Len is how many entries the cache holds.
func (c *LabelCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Lookup answers from the cache what it can and asks for the rest in one call.
func (c *LabelCache) Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error) {
	out := ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}
	id, ok := httpx.IdentityFrom(ctx)
	if !ok || len(addrs) == 0 {
		return out, nil
	}
	now := time.Now()
	var miss []ulclient.AddressRef
	c.mu.Lock()
	mine := c.entries[id.UserID]
	forgets := c.forgets
	for _, a := range addrs {
		e, ok := mine[a.Key()]
		if !ok || now.After(e.expires) {
			miss = append(miss, a)
			continue
		}
		if e.label != nil {
			out.Labels[a.Key()] = *e.label
		}
		if len(e.entities) > 0 {
			out.Entities[a.Key()] = e.entities
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.next.Lookup(ctx, miss)
	if err != nil {
		return out, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := c.forgets == forgets
	if keep && c.n+len(miss) > c.max {
		c.entries, c.n = map[string]map[string]cacheEntry{}, 0
	}
	mine = c.entries[id.UserID]
	if keep && mine == nil {
		mine = map[string]cacheEntry{}
		c.entries[id.UserID] = mine
	}
	for _, a := range miss {
		k := a.Key()
		e := cacheEntry{expires: now.Add(c.ttl), entities: got.Entities[k]}
		if l, ok := got.Labels[k]; ok {
			e.label = &l
			out.Labels[k] = l
		}
		if len(e.entities) > 0 {
			out.Entities[k] = e.entities
		}
		if !keep {
			continue
		}
		if _, ok := mine[k]; !ok {
			c.n++
		}
		mine[k] = e
	}
	return out, nil
}

// AdditionsOf passes through: one call per request naming operator entities (prepare).
func (c *LabelCache) AdditionsOf(ctx context.Context, ids []string) (map[string]map[string][]string, error) {
	return c.next.AdditionsOf(ctx, ids)
}

// Entities passes through: one call per request naming user entities (prepare).
func (c *LabelCache) Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error) {
	return c.next.Entities(ctx, ids)
}
