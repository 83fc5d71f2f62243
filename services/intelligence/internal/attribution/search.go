package attribution

import (
	"sort"
	"strings"
)

// entityText is an entity with the lower-cased text a search compares.
type entityText struct {
	e                      *Entity
	id, name, twitter, typ string
}

// rebuildSearch rebuilds the entity search list after entities changed: every entity, by
// lower-cased name then id, and the distinct types. The caller holds c.mu for writing.
func (c *AttributionCache) rebuildSearch() {
	list := make([]entityText, 0, len(c.ents))
	types := map[string]bool{}
	for _, e := range c.ents {
		list = append(list, entityText{e: e, id: strings.ToLower(e.ID), name: strings.ToLower(e.Name),
			twitter: strings.ToLower(e.Twitter), typ: strings.ToLower(e.Type)})
		if e.Type != "" {
			types[e.Type] = true
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].name != list[j].name {
			return list[i].name < list[j].name
		}
		return list[i].e.ID < list[j].e.ID
	})
	c.search = list
	c.types = make([]string, 0, len(types))
	for t := range types {
		c.types = append(c.types, t)
	}
	sort.Strings(c.types)
}

// matchRank ranks text against the lower-cased query q: 0 equal, 1 starting with it, 2
// containing it, -1 no match.
func matchRank(text, q string) int {
	switch {
	case text == q:
		return 0
	case strings.HasPrefix(text, q):
		return 1
	case strings.Contains(text, q):
		return 2
	}
	return -1
}

// bestRank is the better (lower) of two ranks, -1 meaning no match.
func bestRank(a, b int) int {
	if a < 0 || (b >= 0 && b < a) {
		return b
	}
	return a
}

// page returns the items ranked into buckets (best bucket first, each in list order), after
// skipping offset, at most limit.
func page[T any](buckets [][]T, limit, offset int) []T {
	var out []T
	for _, b := range buckets {
		if offset >= len(b) {
			offset -= len(b)
			continue
		}
		out = append(out, b[offset:]...)
		offset = 0
		if len(out) >= limit {
			break
		}
	}
	return out[:min(limit, len(out))]
}

// SearchEntities returns the operator entities whose id or name contains q (lower case): equal
// to it first, then starting with it, then containing it; then by lower-cased name and id.
func (c *AttributionCache) SearchEntities(q string, limit, offset int) []Entity {
	c.mu.RLock()
	defer c.mu.RUnlock()
	buckets := make([][]*Entity, 3)
	for i := range c.search {
		t := &c.search[i]
		if r := bestRank(matchRank(t.id, q), matchRank(t.name, q)); r >= 0 {
			buckets[r] = append(buckets[r], t.e)
		}
	}
	return copied(page(buckets, limit, offset))
}

// copied copies the entities of a page out of the cache (the caller holds c.mu): a search
// ranks pointers to every match and copies only the page's.
func copied(es []*Entity) []Entity {
	if len(es) == 0 {
		return nil
	}
	out := make([]Entity, len(es))
	for i, e := range es {
		out[i] = *e
	}
	return out
}

// SearchTwitter returns the operator entities whose twitter handle (or its address) contains q
// (lower case): equal to it or ending with "/" + q first; then by lower-cased name and id.
func (c *AttributionCache) SearchTwitter(q string, limit, offset int) []Entity {
	c.mu.RLock()
	defer c.mu.RUnlock()
	buckets := make([][]*Entity, 2)
	for i := range c.search {
		t := &c.search[i]
		if t.twitter == "" || !strings.Contains(t.twitter, q) {
			continue
		}
		if t.twitter == q || strings.HasSuffix(t.twitter, "/"+q) {
			buckets[0] = append(buckets[0], t.e)
		} else {
			buckets[1] = append(buckets[1], t.e)
		}
	}
	return copied(page(buckets, limit, offset))
}

// SearchTypes returns the entity types containing q (lower case): equal first, then starting
// with it, then containing it; then in byte order.
func (c *AttributionCache) SearchTypes(q string, limit, offset int) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	buckets := make([][]string, 3)
	for _, t := range c.types {
		if r := matchRank(strings.ToLower(t), q); r >= 0 {
			buckets[r] = append(buckets[r], t)
		}
	}
	return page(buckets, limit, offset)
}
