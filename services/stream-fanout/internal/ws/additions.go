package ws

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// rebuildWorkers bounds the callers whose filters are rebuilt at once (each rebuild reads
// user-labels).
const rebuildWorkers = 8

// callerAdds is what the hub tracks of one caller's entity changes (under Hub.addMu): the
// entities whose filters are still to be rebuilt, whether a worker rebuilds them, and the
// filters being built on the caller's connections meanwhile. The entry goes once none is left.
type callerAdds struct {
	// pending are the entities (operator entities whose additions changed, user entities
	// whose addresses changed) whose filters the worker rebuilds next.
	pending map[entityRef]struct{}
	running bool
	builds  map[*addsBuild]struct{}
}

// entityRef is an entity a filter names whose addresses, for the caller, come from user-labels:
// an operator entity (the caller's additions to it) or one of the caller's user entities.
type entityRef struct {
	kind filter.Kind
	id   string
}

// addsBuild is a filter build in progress on one of a caller's connections (a subscribe, a
// claim): the entities of the caller's that changed meanwhile, under Hub.addMu. Its filters may
// have been built from what user-labels answered before the change, and the change's rebuild
// may have looked at the connection before they were its own, so they are rebuilt once the
// build ends (endBuild).
type addsBuild struct {
	changed map[entityRef]struct{}
}

// AdditionsChanged records that user's additions to operator entity id changed, and has a
// worker rebuild, with the additions user-labels holds then, every filter of user's
// connections on this replica that names id, and put each in place of the one the engine
// holds: a caller's additions to an operator entity match as its addresses for that caller's
// filters naming it (build), and an edit announced on user.changes.v1 takes effect on live
// subscriptions here. It returns at once: it is called on the change feed's goroutine, which
// must not wait on user-labels (the other callers' changes, and the Forget of their books,
// wait behind it).
//
// One worker rebuilds a caller's filters at a time, changes announced while it runs coalesced
// into its next round, and every round reads user-labels after the one before: the later
// answer is the one kept, whatever the order the reads end in.
func (h *Hub) AdditionsChanged(user, id string) {
	h.entityChanged(user, entityRef{filter.KindEntity, id})
}

// UserEntityChanged records that user's user entity id changed (created, its addresses
// replaced, added to or deleted), and has the filters of user's connections naming it rebuilt
// with the addresses user-labels holds then, as AdditionsChanged does for an operator entity;
// a filter naming an entity deleted meanwhile matches none of its addresses.
func (h *Hub) UserEntityChanged(user, id string) {
	// Filters hold user entity ids lowercased (filter.ParseRef).
	h.entityChanged(user, entityRef{filter.KindUserEntity, strings.ToLower(id)})
}

// entityChanged schedules the rebuild of user's filters naming e, and of those being built.
func (h *Hub) entityChanged(user string, e entityRef) {
	h.addMu.Lock()
	defer h.addMu.Unlock()
	st := h.callerLocked(user)
	for b := range st.builds {
		b.changed[e] = struct{}{}
	}
	h.scheduleLocked(user, st, e)
}

// callerLocked is user's entry, created when missing (addMu held).
func (h *Hub) callerLocked(user string) *callerAdds {
	st := h.callers[user]
	if st == nil {
		st = &callerAdds{pending: map[entityRef]struct{}{}, builds: map[*addsBuild]struct{}{}}
		h.callers[user] = st
	}
	return st
}

// scheduleLocked has user's filters naming entity e rebuilt, starting the caller's worker
// unless it runs (addMu held).
func (h *Hub) scheduleLocked(user string, st *callerAdds, e entityRef) {
	st.pending[e] = struct{}{}
	if !st.running {
		st.running = true
		go h.rebuildCaller(user, st)
	}
}

// beginBuild records a filter build starting on a connection of user's (endBuild ends it).
func (h *Hub) beginBuild(user string) *addsBuild {
	b := &addsBuild{changed: map[entityRef]struct{}{}}
	h.addMu.Lock()
	h.callerLocked(user).builds[b] = struct{}{}
	h.addMu.Unlock()
	return b
}

// endBuild ends b, once its filters are the connection's and on the engine (or given up), and
// has the filters naming an entity of user's that changed meanwhile rebuilt by user's worker.
// Only changes of user's own count: another caller's additions do not touch its filters.
func (h *Hub) endBuild(user string, b *addsBuild) {
	h.addMu.Lock()
	defer h.addMu.Unlock()
	st := h.callers[user]
	delete(st.builds, b)
	for e := range b.changed {
		h.scheduleLocked(user, st, e)
	}
	h.dropIdleLocked(user, st)
}

// dropIdleLocked forgets user's entry once nothing is pending, running or being built.
func (h *Hub) dropIdleLocked(user string, st *callerAdds) {
	if !st.running && len(st.pending) == 0 && len(st.builds) == 0 {
		delete(h.callers, user)
	}
}

// rebuildCaller is user's worker: it rebuilds the filters naming the pending entities, round
// after round, until none is pending. At most rebuildWorkers callers' rounds run at once.
func (h *Hub) rebuildCaller(user string, st *callerAdds) {
	h.rebuilds <- struct{}{}
	defer func() { <-h.rebuilds }()
	for {
		h.addMu.Lock()
		ids := st.pending
		if len(ids) == 0 {
			st.running = false
			h.dropIdleLocked(user, st)
			h.addMu.Unlock()
			return
		}
		st.pending = map[entityRef]struct{}{}
		h.addMu.Unlock()
		// One read of each entity's additions and of each user entity serves every filter of
		// every connection of the caller this round: a failure fails them all at once.
		memo := readMemo{}
		failed, last := 0, error(nil)
		for _, c := range h.snapshot() {
			if c.id.UserID == user {
				n, err := c.refreshAdditions(func(s filter.Spec) bool { return namesAny(s, ids) }, memo)
				failed += n
				last = cmp.Or(err, last)
			}
		}
		if failed > 0 {
			h.o.Log.Warn("filters naming an operator or user entity could not be rebuilt with what user-labels holds; they match as before", "user", user, "filters", failed, "error", last)
		}
	}
}

// namesAny reports whether s names (excluded too) one of the entities ids.
func namesAny(s filter.Spec, ids map[entityRef]struct{}) bool {
	return slices.ContainsFunc(s.Names(), func(n filter.Named) bool {
		_, ok := ids[entityRef{n.Ref.Kind, n.Ref.Value}]
		return ok
	})
}

// refreshAdditions rebuilds the connection's filters that want says to, reading through memo,
// and swaps each in on the engine, unless the filter was unsubscribed or the session left the
// connection meanwhile. A filter that no longer builds (user-labels failing) keeps matching as
// before: it returns how many did not, and an error.
func (c *conn) refreshAdditions(want func(filter.Spec) bool, memo readMemo) (failed int, last error) {
	sub, _ := c.current()
	if sub == nil || c.ctx.Err() != nil {
		return 0, nil
	}
	c.mu.Lock()
	recs := append([]store.FilterRec(nil), c.filters...)
	c.mu.Unlock()
	e := c.h.o.Engine
	// Reads are not cancelled with the connection: their answers serve the caller's others.
	rctx := context.WithoutCancel(c.ctx)
	for _, fr := range recs {
		var raw filter.Raw
		if json.Unmarshal(fr.Raw, &raw) != nil {
			continue
		}
		spec, err := c.h.parse(raw, filter.Options{Served: c.h.o.Served})
		if err != nil || !want(spec) {
			continue
		}
		f, err := c.buildSpec(rctx, fr.ID, spec, false, memo)
		if err != nil {
			if c.ctx.Err() == nil {
				failed, last = failed+1, err
			}
			continue
		}
		e.Do(c.ctx, func() {
			if c.serves(sub) && e.RemoveFilter(sub, fr.ID) {
				e.AddFilter(sub, f)
			}
		})
	}
	return failed, last
}

// readMemo holds what one rebuild round of live filters read of user-labels (by entity),
// failures too. Only those rounds read through one: a filter built otherwise (nil memo) is
// being subscribed or resumed.
type readMemo map[entityRef]memoRead

type memoRead struct {
	addrs []string
	err   error
}

// memoized returns what read answers for key, reading it only when memo (nil: none) does not
// hold it yet.
func (m readMemo) memoized(key entityRef, read func() ([]string, error)) ([]string, error) {
	if m == nil {
		return read()
	}
	if r, ok := m[key]; ok {
		return r.addrs, r.err
	}
	addrs, err := read()
	m[key] = memoRead{addrs, err}
	return addrs, err
}

// addedEntry is a caller's additions to one operator entity, canonical, read from user-labels.
type addedEntry struct {
	addrs []string
	until time.Time
}

// errLabelsDown is a read of user-labels not made: it failed a moment ago (labelsBackoff).
var errLabelsDown = errors.New("user-labels failed recently; not asked again for a while")

// additionsOf returns caller id's additions to the operator entities entities (canonical, by
// entity; none is an empty list), from the cache while no change of the caller was announced
// since they were read (Forget) and for at most the book's ttl, and those the cache does not
// hold in one call to user-labels. What was read while a change was announced is not kept: it
// may predate the change. While user-labels is backed off after a failure (of this or of a
// book's read) it fails at once (errLabelsDown) rather than wait on it; a failure backs it off.
func (h *Hub) additionsOf(ctx context.Context, id Identity, entities []string) (map[string][]string, error) {
	lc := h.labels
	now := time.Now()
	out := make(map[string][]string, len(entities))
	var miss []string
	lc.mu.Lock()
	for _, e := range entities {
		if en, ok := lc.adds[id.UserID][e]; ok && now.Before(en.until) {
			out[e] = en.addrs
		} else {
			miss = append(miss, e)
		}
	}
	if len(miss) == 0 {
		lc.mu.Unlock()
		return out, nil
	}
	if now.Before(lc.down) {
		lc.mu.Unlock()
		return nil, errLabelsDown
	}
	gen := lc.gen.Load()
	lc.mu.Unlock()
	m, err := h.o.Labels.Additions(identityContext(ctx, id), miss)
	if err != nil {
		if ctx.Err() == nil {
			lc.backOff()
		}
		return nil, err
	}
	lc.mu.Lock()
	keep := lc.gen.Load() == gen
	if keep {
		lc.sweepLocked(now)
		if lc.adds[id.UserID] == nil {
			lc.adds[id.UserID] = map[string]addedEntry{}
		}
	}
	for _, e := range miss {
		addrs := appendNormalized([]string{}, m[e])
		out[e] = addrs
		if keep {
			lc.adds[id.UserID][e] = addedEntry{addrs: addrs, until: now.Add(lc.ttl)}
		}
	}
	lc.mu.Unlock()
	return out, nil
}
