package app

import (
	"context"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// LabelCache keeps each caller's user-labels lookups for a short time, so a page of transfers
// asks user-labels only for addresses it has not seen lately, in one batched call. Entity and
// additions calls pass through. It is safe for concurrent use.
type LabelCache struct {
	next UserLabels
	ttl  time.Duration
	max  int

	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
}

type cacheKey struct{ user, addr string }

type cacheEntry struct {
	label    *ulclient.Label
	entities []ulclient.EntityRef
	expires  time.Time
}

// NewLabelCache wraps next; entries live for ttl, and at most max are kept.
func NewLabelCache(next UserLabels, ttl time.Duration, max int) *LabelCache {
	return &LabelCache{next: next, ttl: ttl, max: max, entries: map[cacheKey]cacheEntry{}}
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
	for _, a := range addrs {
		e, ok := c.entries[cacheKey{id.UserID, a.Key()}]
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
	if len(c.entries)+len(miss) > c.max {
		c.entries = map[cacheKey]cacheEntry{}
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
		c.entries[cacheKey{id.UserID, k}] = e
	}
	return out, nil
}

// Entity passes through.
func (c *LabelCache) Entity(ctx context.Context, id string) (ulclient.UserEntity, error) {
	return c.next.Entity(ctx, id)
}

// Additions passes through.
func (c *LabelCache) Additions(ctx context.Context, operatorEntityID string) (map[string][]string, error) {
	return c.next.Additions(ctx, operatorEntityID)
}
