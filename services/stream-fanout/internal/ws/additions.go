package ws

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// AdditionsChanged rebuilds, with the additions user-labels holds now, every filter of user's
// connections on this replica that names operator entity id, and puts it in place of the one
// the engine holds: a caller's additions to an operator entity match as its addresses for that
// caller's filters naming it (build), and an edit announced on user.changes.v1 takes effect on
// live subscriptions here. Calls must not overlap (the change feed's one goroutine): a rebuild
// started after another reads user-labels after it, so the later answer is the one kept.
func (h *Hub) AdditionsChanged(user, id string) {
	// A filter built before the change and added after the loop below looked at its
	// connection rebuilds itself on seeing the count moved (refreshIfChanged).
	h.additionsGen.Add(1)
	for _, c := range h.snapshot() {
		if c.id.UserID == user {
			c.refreshAdditions(func(s filter.Spec) bool { return namesEntity(s, id) })
		}
	}
}

// namesEntity reports whether s names operator entity id (excluded too), or any operator
// entity when id is "".
func namesEntity(s filter.Spec, id string) bool {
	return slices.ContainsFunc(s.Names(), func(n filter.Named) bool {
		return n.Ref.Kind == filter.KindEntity && (id == "" || n.Ref.Value == id)
	})
}

// refreshIfChanged rebuilds the connection's filters naming an operator entity when additions
// changed since gen (AdditionsChanged): the filters were built from what user-labels answered
// before, and the change's rebuild may have run before they were the connection's.
func (c *conn) refreshIfChanged(gen uint64) {
	if c.h.additionsGen.Load() != gen {
		c.refreshAdditions(func(s filter.Spec) bool { return namesEntity(s, "") })
	}
}

// refreshAdditions rebuilds the connection's filters that want says to and swaps each in on
// the engine, unless the filter was unsubscribed or the session left the connection meanwhile.
// A filter that no longer builds (user-labels failing, a user entity it also names deleted)
// keeps matching as before; the failure is logged.
func (c *conn) refreshAdditions(want func(filter.Spec) bool) {
	sub, _ := c.current()
	if sub == nil {
		return
	}
	c.mu.Lock()
	recs := append([]store.FilterRec(nil), c.filters...)
	c.mu.Unlock()
	e := c.h.o.Engine
	for _, fr := range recs {
		var raw filter.Raw
		if json.Unmarshal(fr.Raw, &raw) != nil {
			continue
		}
		spec, err := filter.Parse(raw, filter.Options{Served: c.h.o.Served})
		if err != nil || !want(spec) {
			continue
		}
		f, err := c.build(c.ctx, fr.ID, raw, false)
		if err != nil {
			if c.ctx.Err() == nil {
				c.h.o.Log.Warn("a filter naming an operator entity could not be rebuilt with the caller's additions; it matches as before", "filter", fr.ID, "error", err)
			}
			continue
		}
		e.Do(c.ctx, func() {
			if c.serves(sub) && e.RemoveFilter(sub, fr.ID) {
				e.AddFilter(sub, f)
			}
		})
	}
}

// addedEntry is a caller's additions to one operator entity, canonical, read from user-labels.
type addedEntry struct {
	addrs []string
	until time.Time
}

// additions returns caller id's additions to operator entity entity, from the cache while no
// change of the caller was announced since they were read (Forget) and for at most the book's
// ttl. What was read while a change was announced is not kept: it may predate the change.
func (h *Hub) additions(ctx context.Context, id Identity, entity string) ([]string, error) {
	lc := h.labels
	now := time.Now()
	lc.mu.Lock()
	if e, ok := lc.adds[id.UserID][entity]; ok && now.Before(e.until) {
		lc.mu.Unlock()
		return e.addrs, nil
	}
	gen := lc.gen.Load()
	lc.mu.Unlock()
	m, err := h.o.Labels.Additions(identityContext(ctx, id), entity)
	if err != nil {
		return nil, err
	}
	addrs := appendNormalized([]string{}, m)
	lc.mu.Lock()
	if lc.gen.Load() == gen {
		lc.sweepLocked(now)
		if lc.adds[id.UserID] == nil {
			lc.adds[id.UserID] = map[string]addedEntry{}
		}
		lc.adds[id.UserID][entity] = addedEntry{addrs: addrs, until: now.Add(lc.ttl)}
	}
	lc.mu.Unlock()
	return addrs, nil
}
