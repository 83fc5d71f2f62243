package ws

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	apirender "github.com/chainintel/chainintel/libs/render"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// ErrNamesLoading refuses for now a new filter naming an operator entity or entity type the
// read model does not hold while the replica is still loading it: the name may be one not read
// yet, so the client is told to retry (INTERNAL_ERROR, a v2 stream's 503), not that it is wrong.
var ErrNamesLoading = errors.New("the replica is still loading its entity read model; retry shortly")

// ErrLabelsUnavailable wraps a failure to read the caller's user entities or additions from
// user-labels while building a filter: the filter cannot be built without them, and the client
// is told which dependency to wait for.
var ErrLabelsUnavailable = errors.New("user labels are unavailable; retry later")

// compile validates a stored filter and builds it, resolving user entities.
func (c *conn) compile(ctx context.Context, id string, raw filter.Raw) (*engine.Filter, error) {
	f, err := c.build(ctx, id, raw, false)
	return f, protocolErr(err)
}

// compileNew validates a filter sent now (a subscribe) and builds it: its operator entities and
// entity types must exist too.
func (c *conn) compileNew(ctx context.Context, id string, raw filter.Raw) (*engine.Filter, error) {
	f, err := c.build(ctx, id, raw, true)
	return f, protocolErr(err)
}

// protocolErr words a refusal of build for a WebSocket client.
func protocolErr(err error) error {
	var fe *filter.Error
	switch {
	case errors.As(err, &fe):
		return perr(CodeInvalidFilter, "%v", fe)
	case errors.Is(err, ErrNamesLoading):
		return perr(CodeInternal, "%v", err)
	}
	return err
}

// build validates raw and builds it, resolving the caller's user entities and the caller's
// additions to the operator entities it names. Every refusal is a *filter.Error naming the
// field, the first in the order base, from, to, counterparties: when fresh (a filter sent now),
// a user entity the caller does not have, an operator entity the read model does not hold
// and the caller has added no address to, deposit:<entityId> or type:<entityType> the read
// model does not hold (ErrNamesLoading while it loads). A stored filter's names were checked
// when it was sent: one whose entity has since lost its attributions still resumes, matching
// nothing of it (but the caller's additions), as /transfers would, and one whose user entity
// was deleted resumes matching none of its addresses.
func (c *conn) build(ctx context.Context, id string, raw filter.Raw, fresh bool) (*engine.Filter, error) {
	spec, err := c.h.parse(raw, filter.Options{Served: c.h.o.Served})
	if err != nil {
		return nil, err
	}
	return c.buildSpec(ctx, id, spec, fresh, nil)
}

// buildSpec is build of a filter already parsed, reading user-labels through memo (nil:
// none), which a rebuild of many filters shares so that each entity is read once.
func (c *conn) buildSpec(ctx context.Context, id string, spec filter.Spec, fresh bool, memo readMemo) (*engine.Filter, error) {
	named := spec.Names()
	var known *engine.Names
	var err error
	if fresh {
		if known, err = c.h.knownNames(ctx, named); err != nil {
			return nil, err
		}
	}
	// What user-labels holds for the filter's entities is read for all of them at once (one call
	// per kind, prefetch); resolve then reads it through the memo, a local one when the build
	// has none of its own.
	live := memo != nil || !fresh
	if memo == nil {
		memo = readMemo{}
	}
	c.prefetch(ctx, named, memo, live)
	resolved := map[string][]string{}
	for _, n := range named {
		if err := c.resolve(ctx, n, known, resolved, memo, live); err != nil {
			return nil, err
		}
	}
	if fresh {
		if err := c.h.o.Tokens.check(ctx, spec.Tokens); err != nil {
			return nil, err
		}
	}
	return engine.Compile(id, spec, resolved), nil
}

// resolve looks up what n names for the caller into resolved (by id: a user entity's addresses,
// the caller's additions to an operator entity), once per id, and checks that n names
// something known (when known is not nil). What it reads of user-labels goes through memo. A
// user entity deleted since its filter was sent (a filter not fresh: resumed or rebuilt) holds
// no address rather than refuse the filter (live), so a session resumes with the rest of its
// filters and what it was owed.
func (c *conn) resolve(ctx context.Context, n filter.Named, known *engine.Names, resolved map[string][]string, memo readMemo, live bool) error {
	r := n.Ref
	switch r.Kind {
	case filter.KindUserEntity:
		if resolved[r.Value] != nil {
			return nil
		}
		addrs, err := memo.memoized(entityRef{r.Kind, r.Value}, func() ([]string, error) { return c.userEntity(ctx, n, live) })
		resolved[r.Value] = addrs
		return err
	case filter.KindEntity:
		if resolved[r.Value] == nil {
			addrs, err := memo.memoized(entityRef{r.Kind, r.Value}, func() ([]string, error) { return c.additions(ctx, r.Value) })
			if err != nil {
				return err
			}
			resolved[r.Value] = addrs
		}
		if len(resolved[r.Value]) > 0 {
			return nil // the caller's additions make it an entity of theirs, as in /transfers
		}
	}
	if known == nil {
		return nil
	}
	if err := filter.CheckName(n, known); err != nil {
		if !known.Loaded {
			return ErrNamesLoading
		}
		return err
	}
	return nil
}

// additions returns the caller's addresses added to operator entity id (none without
// user-labels).
func (c *conn) additions(ctx context.Context, id string) ([]string, error) {
	r := c.additionsOf(ctx, []string{id})[id]
	return r.addrs, r.err
}

// additionsOf reads the caller's additions to the operator entities ids (distinct) in one call
// at most, answering each as additions does.
func (c *conn) additionsOf(ctx context.Context, ids []string) map[string]memoRead {
	out := make(map[string]memoRead, len(ids))
	if c.h.o.Labels == nil {
		for _, id := range ids {
			out[id] = memoRead{addrs: []string{}}
		}
		return out
	}
	got, err := c.h.additionsOf(ctx, c.id, ids)
	for _, id := range ids {
		if err != nil {
			out[id] = memoRead{err: fmt.Errorf("additions to entity %s: %w: %w", id, ErrLabelsUnavailable, err)}
		} else {
			out[id] = memoRead{addrs: got[id]}
		}
	}
	return out
}

// appendNormalized appends the addresses of m (by chain type) to addrs in the transfer
// topic's canonical form.
func appendNormalized(addrs []string, m map[string][]string) []string {
	for ct, as := range m {
		for _, a := range as {
			addrs = append(addrs, render.NormalizeAddress(ct, a))
		}
	}
	return addrs
}

// userEntity returns the addresses of the caller's user entity n names (a *filter.Error when
// the caller has none such, unless live: a live filter's entity deleted since it was subscribed
// holds no address, so the filter stops matching it rather than keep what it had).
func (c *conn) userEntity(ctx context.Context, n filter.Named, live bool) ([]string, error) {
	r := c.userEntities(ctx, []filter.Named{n}, live)[n.Ref.Value]
	return r.addrs, r.err
}

// userEntities reads the caller's user entities ns name (distinct, by Ref.Value) in one call,
// answering each as userEntity does.
func (c *conn) userEntities(ctx context.Context, ns []filter.Named, live bool) map[string]memoRead {
	out := make(map[string]memoRead, len(ns))
	fail := func(err error) map[string]memoRead {
		for _, n := range ns {
			out[n.Ref.Value] = memoRead{err: fmt.Errorf("user entity %s: %w: %w", n.Ref.Value, ErrLabelsUnavailable, err)}
		}
		return out
	}
	if c.h.o.Labels == nil {
		for _, n := range ns {
			out[n.Ref.Value] = memoRead{err: &filter.Error{Field: n.Field, Rule: fmt.Sprintf("user entity %s: user entities are not available", n.Ref.Value)}}
		}
		return out
	}
	// While user-labels is backed off after a failure it is not waited on, as for additions.
	if c.h.labels.isDown(time.Now()) {
		return fail(errLabelsDown)
	}
	ids := make([]string, 0, len(ns))
	for _, n := range ns {
		ids = append(ids, strings.ToLower(n.Ref.Value))
	}
	got, err := c.h.o.Labels.Entities(identityContext(ctx, c.id), ids)
	if err != nil {
		if ctx.Err() == nil {
			c.h.labels.backOff()
		}
		return fail(err)
	}
	for _, n := range ns {
		ue, ok := got[strings.ToLower(n.Ref.Value)]
		switch {
		case ok:
			out[n.Ref.Value] = memoRead{addrs: appendNormalized([]string{}, ue.Addresses)}
		case live:
			out[n.Ref.Value] = memoRead{addrs: []string{}}
		default:
			out[n.Ref.Value] = memoRead{err: filter.UnknownUserEntity(n)}
		}
	}
	return out
}

// prefetch reads into memo what user-labels holds for the entities named that memo does not
// hold yet: the caller's user entities in one call and the caller's additions to the operator
// entities in one call (Hub.additionsOf, through its cache), so a filter naming many entities
// costs one call per kind, not one per entity. Failures are kept in memo as each entity's, as
// the reads one by one would have answered them.
func (c *conn) prefetch(ctx context.Context, named []filter.Named, memo readMemo, live bool) {
	var users []filter.Named
	var ents []string
	seen := map[entityRef]bool{}
	for _, n := range named {
		k := entityRef{n.Ref.Kind, n.Ref.Value}
		if (k.kind != filter.KindUserEntity && k.kind != filter.KindEntity) || seen[k] {
			continue
		}
		seen[k] = true
		if _, ok := memo[k]; ok {
			continue
		}
		if k.kind == filter.KindUserEntity {
			users = append(users, n)
		} else {
			ents = append(ents, k.id)
		}
	}
	if len(users) > 0 {
		for id, r := range c.userEntities(ctx, users, live) {
			memo[entityRef{filter.KindUserEntity, id}] = r
		}
	}
	if len(ents) > 0 {
		for id, r := range c.additionsOf(ctx, ents) {
			memo[entityRef{filter.KindEntity, id}] = r
		}
	}
}

// knownNames asks the read model, in one call on the engine, about the operator entities and
// entity types among named (nil when none needs asking: documented types are always known).
func (h *Hub) knownNames(ctx context.Context, named []filter.Named) (*engine.Names, error) {
	var ids []string
	ask := false
	for _, n := range named {
		switch n.Ref.Kind {
		case filter.KindEntity, filter.KindDeposit:
			ids, ask = append(ids, n.Ref.Value), true
		case filter.KindType:
			ask = ask || !slices.Contains(filter.DocumentedTypes, n.Ref.Value)
		}
	}
	if !ask {
		return nil, nil
	}
	var known engine.Names
	if !h.o.Engine.Do(ctx, func() { known = h.o.Engine.KnownNames(ids) }) {
		return nil, ctx.Err()
	}
	return &known, nil
}

// subscribe adds a filter, creating the connection's session on its first one.
func (c *conn) subscribe(req Request) error {
	c.mu.Lock()
	n := len(c.filters)
	c.mu.Unlock()
	if n >= c.h.o.MaxFilters {
		return perr(CodeInvalidFilter, "a session holds at most %d filters; unsubscribe one first", c.h.o.MaxFilters)
	}
	fid := newID()
	b := c.h.beginBuild(c.id.UserID)
	defer c.h.endBuild(c.id.UserID, b)
	f, err := c.compileNew(c.ctx, fid, req.Filters)
	if err != nil {
		return err
	}
	rawJSON, _ := json.Marshal(req.Filters)
	if err := c.checkFilterBytes(fid, rawJSON); err != nil {
		return err
	}
	if _, id := c.current(); id == "" {
		var capped *SessionLimitError
		if err := c.create(KindWS, 0); errors.As(err, &capped) {
			return sessionLimitErr(capped)
		} else if err != nil {
			return err
		}
	}
	sub, sessID := c.current()
	if sub == nil {
		return errEnded // the connection ended and saved the session it just created
	}
	c.mu.Lock()
	c.filters = append(c.filters, store.FilterRec{ID: fid, Raw: rawJSON})
	// The queue is sized for the filter before the engine matches it.
	c.q.setFilters(len(c.filters))
	recs := append([]store.FilterRec(nil), c.filters...)
	c.mu.Unlock()
	if err := c.h.o.Store.Apply(c.ctx, sessID, c.token, c.window(), store.Update{Filters: recs, Restore: c.restorer(sub, sessID), SessionCap: c.h.o.MaxSessionsPerKey}); err != nil {
		return c.storeErr(err)
	}
	notice := c.checkQuota()
	c.h.o.Engine.Do(c.ctx, func() {
		// A connection ending meanwhile has dropped sub (or is about to, after this): a filter
		// added to a dropped subscription would stay indexed, matched for nobody.
		if c.serves(sub) {
			c.h.o.Engine.AddFilter(sub, f)
		}
	})
	c.ack(req.ID, "subscribed", map[string]string{"filterId": fid, "sessionId": sessID})
	if notice != nil {
		c.send(*notice)
	}
	return nil
}

func (c *conn) storeErr(err error) error {
	if reason, ok := goneReason(err); ok {
		c.kick(reason)
		if errors.Is(err, store.ErrDeleted) {
			return perr(CodeNoSession, "this session was deleted")
		}
		if errors.Is(err, store.ErrSessionCap) {
			return perr(CodeNoSession, "this session was lost by the store and not stored again: the key has %d live sessions and v2 streams (the limit); delete one and subscribe again", c.h.o.MaxSessionsPerKey)
		}
		return perr(CodeNoSession, "this session was taken over by another connection")
	}
	return err
}

// capReason closes a connection whose session Redis lost while its key was at its cap of
// live sessions and v2 streams: the session was not stored again, so it cannot be saved,
// listed or resumed, and the connection ends rather than serve what no reconnect could resume.
const capReason = "session lost by the store; the key is at its session limit"

// goneReason is the close reason of a connection whose session's save found it taken over or
// deleted (false for any other error).
func goneReason(err error) (string, bool) {
	switch {
	case errors.Is(err, store.ErrTakenOver):
		return "session taken over by another connection", true
	case errors.Is(err, store.ErrDeleted):
		return "session deleted", true
	case errors.Is(err, store.ErrSessionCap):
		return capReason, true
	}
	return "", false
}

// restorer is the session sub serves, served up to where the engine and the connection's queue
// have got, for the store to keep again when Redis lost it (store.Update.Restore).
func (c *conn) restorer(sub *engine.Sub, id string) func() (store.Session, bool) {
	return func() (store.Session, bool) {
		var cur map[int]int64
		e := c.h.o.Engine
		if !e.Do(context.WithoutCancel(c.ctx), func() { cur = c.h.servedAt(c, sub) }) || cur == nil {
			return store.Session{}, false
		}
		return c.stored(id, cur)
	}
}

// serves reports whether sub is the subscription the connection serves (not dropped).
func (c *conn) serves(sub *engine.Sub) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sub == sub
}

// errEnded is a claim or create that found the connection ended: it handed its session back.
var errEnded = errors.New("the connection ended")

// create makes a new session served by this connection from the engine's current positions,
// unless its key is at its cap of live sessions and v2 streams (a *SessionLimitError, as for
// REST). The session is stored owned by this connection before anything is recorded for it
// here, and attach hands it back when the connection ended meanwhile.
func (c *conn) create(kind string, seq int64) error {
	var pos map[int]int64
	e := c.h.o.Engine
	if !e.Do(c.ctx, func() { pos = e.Positions() }) {
		return errEnded
	}
	ss := store.Session{ID: uuid.NewString(), KeyID: c.id.KeyID, UserID: c.id.UserID, Kind: kind, Seq: seq, Created: c.h.o.Now(),
		Owner: c.token, Cursor: pos, HasCursor: true}
	// Not cancelled with the connection: a create that reached Redis is known to have.
	if err := c.h.storeCapped(c.ctx, ss, c.h.o.Window); err != nil {
		return err
	}
	_, _, err := c.attach(ss, nil, nil, false)
	return err
}

func (c *conn) unsubscribe(req Request) error {
	sub, sessID := c.current()
	if sub == nil {
		return perr(CodeNoSession, "no session on this connection: subscribe or reconnect first")
	}
	c.mu.Lock()
	idx := -1
	for i, f := range c.filters {
		if f.ID == req.FilterID {
			idx = i
		}
	}
	if idx < 0 {
		c.mu.Unlock()
		return perr(CodeFilterNotFound, "filterId %q is not a filter of this session", short(req.FilterID))
	}
	c.filters = append(c.filters[:idx:idx], c.filters[idx+1:]...)
	c.q.setFilters(len(c.filters))
	recs := append([]store.FilterRec{}, c.filters...)
	c.mu.Unlock()
	c.h.o.Engine.Do(c.ctx, func() { c.h.o.Engine.RemoveFilter(sub, req.FilterID) })
	if err := c.h.o.Store.Apply(c.ctx, sessID, c.token, c.window(), store.Update{Filters: recs, Restore: c.restorer(sub, sessID), SessionCap: c.h.o.MaxSessionsPerKey}); err != nil {
		return c.storeErr(err)
	}
	c.ack(req.ID, "unsubscribed", nil)
	return nil
}

// restored is one filter in a reconnect's ack.
type restored struct {
	FilterID string          `json:"filterId"`
	Filters  json.RawMessage `json:"filters"`
}

func (c *conn) reconnect(req Request) error {
	if _, id := c.current(); id == req.SessionID {
		c.ack(req.ID, "reconnected", c.restoredData())
		return nil
	}
	return c.resumeGaps(req.SessionID, false, func(gaps []replayGap, dropped *store.Dropped) {
		d, msg := c.restoredData(), "reconnected"
		if len(gaps) > 0 {
			d["replayGaps"] = gaps
			msg = "reconnected; what was matched while away could not be replayed on every partition (see replayGaps)"
		}
		if dropped != nil {
			d["replayDropped"] = droppedData(dropped)
			msg += fmt.Sprintf("; %d transfers owed at a disconnect were over the replay buffer's limit and are not replayed (see replayDropped)", dropped.Count)
		}
		c.ack(req.ID, msg, d)
	})
}

// replayDropped is a reconnect ack's account of the deliveries the replay buffer's limits
// dropped: how many, and the block times of the first and last of their transfers (the
// transfers the session's filters matched in between, from /transfers, include them).
type replayDropped struct {
	Count         int64  `json:"count"`
	FromBlockTime string `json:"fromBlockTime"`
	ToBlockTime   string `json:"toBlockTime"`
}

func droppedData(d *store.Dropped) replayDropped {
	return replayDropped{Count: d.Count, FromBlockTime: apirender.Timestamp(time.UnixMilli(d.FirstMs)),
		ToBlockTime: apirender.Timestamp(time.UnixMilli(d.LastMs))}
}

func (c *conn) restoredData() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	fs := make([]restored, 0, len(c.filters))
	for _, f := range c.filters {
		fs = append(fs, restored{FilterID: f.ID, Filters: f.Raw})
	}
	return map[string]any{"sessionId": c.sessID, "filters": fs}
}

// replayGap is a partition of the transfer topic where a resume could not start from the
// session's saved position, and what it did instead.
type replayGap struct {
	Partition int `json:"partition"`
	// SavedOffset is the session's saved position; ResumedAt where the resume reads from.
	SavedOffset int64 `json:"savedOffset"`
	ResumedAt   int64 `json:"resumedAt"`
	// Reason: GapTopicReset (the saved position is past the partition's end: the topic was
	// recreated or the broker lost its records, and offsets start again; resumed from the new
	// log's start) or GapRetention (the records after the saved position were deleted by the
	// topic's retention).
	Reason string `json:"reason"`
	// found is where the gap was found (foundCursor, foundRead), for the metric.
	found string
}

// Reasons of a replay gap.
const (
	GapTopicReset = "topicReset"
	GapRetention  = "retention"
	// GapCatchUpLimit: more records to read back than a catch-up reads (MaxCatchUp).
	GapCatchUpLimit = "catchUpLimit"
)

// Where a replay gap was found: the saved position checked against the topic's offsets as the
// replica read them (checkCursor), or the replay's reader getting a later offset than it
// asked for, or finding the log reset (catchUp).
const (
	foundCursor = "cursor"
	foundRead   = "read"
)

// readGaps adds to gaps (checkCursor's) what the replay's reads found, one per partition: a
// partition with a gap already keeps its saved offset and resumes where the read did.
func readGaps(gaps []replayGap, read []feed.Gap) []replayGap {
	for _, g := range read {
		rg := replayGap{Partition: g.Partition, SavedOffset: g.From, ResumedAt: g.To, Reason: GapRetention, found: foundRead}
		switch {
		case g.Reset:
			rg.Reason = GapTopicReset
		case g.OverLimit:
			rg.Reason = GapCatchUpLimit
		}
		i := slices.IndexFunc(gaps, func(x replayGap) bool { return x.Partition == g.Partition })
		if i < 0 {
			gaps = append(gaps, rg)
			continue
		}
		rg.SavedOffset = gaps[i].SavedOffset
		gaps[i] = rg
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].Partition < gaps[j].Partition })
	return gaps
}

// checkCursor returns where a resume of a session served up to cursor reads each partition
// from, and the partitions where that is not the saved position. A position past a partition's
// end (the topic recreated, or an in-memory broker restarted, numbering offsets from 0 again)
// would skip every record below it: that partition resumes from its start, the new log's first
// kept offset, so what was published on it while the client was away is sent (from its end
// only when the start cannot be read). One before its start (retention) resumes from the
// start. When the topic's offsets cannot be read the cursor is kept as it is.
func (c *conn) checkCursor(cursor map[int]int64) (map[int]int64, []replayGap) {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	ends, err := c.h.ends.get(ctx)
	if err != nil {
		c.h.o.Log.Warn("the transfer topic's end could not be read; a resumed session's position is not checked", "error", err)
		return cursor, nil
	}
	past := false
	for p, off := range cursor {
		if e, ok := ends[p]; ok && off > e {
			// The shared end may be a second old, and a position saved since legitimately past it.
			if ends, err = c.h.ends.readNow(ctx); err != nil {
				c.h.o.Log.Warn("the transfer topic's end could not be read; a resumed session's position is not checked", "error", err)
				return cursor, nil
			}
			past = true
			break
		}
	}
	starts, err := c.h.starts.get(ctx)
	if past && err == nil {
		// A partition reset is resumed from its start, which the shared read (up to a second
		// old) may have taken from the log before the reset. When that read fails the shared
		// starts still serve: without them no partition's position would be checked against
		// retention.
		if now, nerr := c.h.starts.readNow(ctx); nerr == nil {
			starts = now
		} else {
			c.h.o.Log.Warn("the transfer topic's start could not be read again; a resumed session's position is checked against the shared read", "error", nerr)
		}
	}
	if err != nil {
		c.h.o.Log.Warn("the transfer topic's start could not be read; a resumed session's position is checked against its end only", "error", err)
	}
	out := make(map[int]int64, len(cursor))
	var gaps []replayGap
	for p, off := range cursor {
		out[p] = off
		if e, ok := ends[p]; ok && off > e {
			at := e
			if s, ok := starts[p]; ok && s <= e {
				at = s
			}
			out[p] = at
			gaps = append(gaps, replayGap{Partition: p, SavedOffset: off, ResumedAt: at, Reason: GapTopicReset, found: foundCursor})
		} else if s, ok := starts[p]; ok && off < s {
			out[p] = s
			gaps = append(gaps, replayGap{Partition: p, SavedOffset: off, ResumedAt: s, Reason: GapRetention, found: foundCursor})
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].Partition < gaps[j].Partition })
	return out, gaps
}

// resume takes session id over for this connection: its filters, the replay buffer, and the
// transfers matched between where it was served up to and where this replica is, read again
// from the topic. onClaimed runs (the ack) once those are read and before any of them is
// queued. fresh drops what the session was owed and starts from now.
//
// The session the connection served until now is kept until the claim succeeds: a refused
// reconnect leaves it served.
func (c *conn) resume(id string, fresh bool, onClaimed func()) error {
	return c.resumeGaps(id, fresh, func([]replayGap, *store.Dropped) { onClaimed() })
}

// resumeGaps is resume, telling onClaimed the partitions it cannot replay from the session's
// saved position: those checkCursor finds outside the topic's offsets, and those whose reads
// found the records after the position deleted (the log's start moved since the replica's
// shared read of it) or the log reset. The read comes before onClaimed so that every gap is in
// the ack.
//
// Deliveries the replay buffer's limits dropped (the claim hands them over) are told to
// onClaimed too, and logged; until then a save of the session keeps them.
func (c *conn) resumeGaps(id string, fresh bool, onClaimed func([]replayGap, *store.Dropped)) error {
	defer c.q.setHold(false)
	notice := c.checkQuota()
	ss, sub, pos, gaps, err := c.claim(id, fresh)
	if notice != nil {
		// Told after the answer to the reconnect (or, when the claim fails, before it).
		defer c.send(*notice)
	}
	if err != nil {
		return err
	}
	owed := !fresh && ss.HasCursor
	var items []engine.Item
	if owed {
		c.catching.Store(true)
		var read []feed.Gap
		items, read, err = c.catchUp(sub, ss.Cursor, pos)
		c.catching.Store(false)
		if err != nil && c.ctx.Err() == nil { // a connection ended meanwhile has saved what it was owed
			c.h.o.Log.Warn("a resumed session could not read back every transfer it missed", "session", id, "error", err)
		}
		gaps = readGaps(gaps, read)
	}
	for _, g := range gaps {
		c.h.o.Metrics.replayGap(g.Reason, g.found)
	}
	if len(gaps) > 0 {
		c.h.o.Log.Warn("a resumed session's saved position is outside the transfer topic; those partitions resume from where gaps says",
			"session", id, "gaps", gaps)
	}
	var dropped *store.Dropped
	if owed {
		dropped = ss.Dropped
	}
	if dropped != nil {
		c.h.o.Log.Warn("a resumed session's replay buffer was over its limit at a disconnect: the newest deliveries it was owed are not replayed",
			"session", id, "dropped", dropped.Count, "from", time.UnixMilli(dropped.FirstMs).UTC(), "to", time.UnixMilli(dropped.LastMs).UTC())
	}
	onClaimed(gaps, dropped)
	if !owed {
		return nil
	}
	c.mu.Lock()
	if c.owed != nil && c.sub == sub {
		c.owed.dropped = nil // told
	}
	c.mu.Unlock()
	replay := make([]out, 0, len(ss.Replay))
	// Every message of the buffer was rendered from a record below the session's cursor (and
	// this replica's position).
	upTo := make(map[int]int64, len(pos))
	maps.Copy(upTo, pos)
	for p, off := range ss.Cursor {
		upTo[p] = max(upTo[p], off)
	}
	for _, r := range ss.Replay {
		if c.h.orphanedRaw(r, upTo) {
			continue // not sent, so not charged
		}
		replay = append(replay, out{raw: r, credit: true})
	}
	if !c.queueOwed(sub, replay, false) {
		return errEnded
	}
	caught := make([]out, 0, len(items))
	for _, it := range items {
		caught = append(caught, out{item: it, credit: true})
	}
	if !c.queueOwed(sub, caught, true) {
		return errEnded
	}
	return nil
}

// blockTimeField precedes a rendered transfer's block time.
var blockTimeField = []byte(`"blockTimestamp":"`)

// replayTimes are the block times (Unix ms) of rendered transfer messages, for what the replay
// buffer's limits may drop (0 where a message has none).
func replayTimes(msgs [][]byte) []int64 {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		j := bytes.Index(m, blockTimeField)
		if j < 0 {
			continue
		}
		v := m[j+len(blockTimeField):]
		if k := bytes.IndexByte(v, '"'); k > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(v[:k])); err == nil {
				out[i] = t.UnixMilli()
			}
		}
	}
	return out
}

// replayedBlock is what orphanedRaw reads of a replay buffer's message: the transfer's block.
type replayedBlock struct {
	Payload struct {
		Transfer struct {
			Chain     string `json:"chain"`
			BlockHash string `json:"blockHash"`
		} `json:"transfer"`
	} `json:"payload"`
}

// orphanedRaw reports whether a message of a session's replay buffer (a transfer rendered when
// the session was saved, from a record of chain.transfers.v1 below upTo) is of a block a reorg
// has orphaned since: the reorg may have come after the save. A message that does not decode
// is replayed as saved.
func (h *Hub) orphanedRaw(raw []byte, upTo map[int]int64) bool {
	if h.o.Orphans == nil || h.o.Orphans.Len() == 0 {
		return false
	}
	var m replayedBlock
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	return h.o.Orphans.Skip(m.Payload.Transfer.Chain, m.Payload.Transfer.BlockHash, upTo)
}

// owedResume is what a resume of the connection's session has not queued yet.
type owedResume struct {
	// replay is the session's replay buffer, handed over by the claim (nil once queued).
	replay [][]byte
	// cursor is where the session was served up to when claimed: what a save before the resume
	// is done stores again if Redis lost the session.
	cursor map[int]int64
	// dropped is what the replay buffer's limits dropped, handed over by the claim (nil once
	// told to the client): a save before then keeps it for the next resume.
	dropped *store.Dropped
}

// queueOwed queues what the resume of sub owed, in one step with recording it queued (last:
// the catch-up, after which nothing is owed): a save of the session sees either both or
// neither. False when the connection no longer serves sub (it ended and saved it).
func (c *conn) queueOwed(sub *engine.Sub, o []out, last bool) bool {
	c.mu.Lock()
	if c.sub != sub || c.owed == nil {
		c.mu.Unlock()
		return false
	}
	c.q.pushQuiet(o...)
	c.owed.replay = nil
	if last {
		c.owed = nil
	}
	c.mu.Unlock()
	c.q.signal()
	return true
}

// claim takes session id over and subscribes this connection to it, holding live deliveries
// back (the caller lets them go). It holds the session's take-over turn on this replica from
// looking for the connection serving it until this one is recorded as its owner, so take-overs
// of one session follow each other and the owners map names the newest claimer: each one ends,
// and waits for, the connection that claimed before it. The session the connection served
// until now is saved and let go only once the claim has succeeded.
//
// The session's cursor is checked against the topic (checkCursor): the returned session's
// cursor is where it resumes from, and the gaps where that is not its saved position.
func (c *conn) claim(id string, fresh bool) (store.Session, *engine.Sub, map[int]int64, []replayGap, error) {
	// Waiting for the turn and for the old connection's save (which waits for a save turn) may
	// outlast a ping the reader, busy here, cannot answer.
	c.catching.Store(true)
	unlock, err := c.h.lockSession(c.ctx, id)
	if err != nil {
		c.catching.Store(false)
		return store.Session{}, nil, nil, nil, err
	}
	defer unlock()
	err = c.takeOver(id)
	c.catching.Store(false)
	if err != nil {
		return store.Session{}, nil, nil, nil, err
	}
	b := c.h.beginBuild(c.id.UserID)
	defer c.h.endBuild(c.id.UserID, b)
	ss, fs, err := c.take(id, fresh)
	if err != nil {
		return ss, nil, nil, nil, err
	}
	if old, _ := c.current(); old != nil {
		_ = c.detach(context.WithoutCancel(c.ctx), false)
		c.q.reopen()
	}
	c.q.setHold(true)
	skip := map[int]int64{}
	var gaps []replayGap
	switch {
	case fresh:
		skip = c.topicEnd()
	case ss.HasCursor:
		ss.Cursor, gaps = c.checkCursor(ss.Cursor)
		skip = ss.Cursor
	}
	sub, pos, err := c.attach(ss, fs, skip, !fresh && ss.HasCursor)
	return ss, sub, pos, gaps, err
}

// take claims session id in Redis and compiles its filters. Whatever refuses it (a session
// gone, another key's, of another kind than this connection's route, a filter that no longer
// compiles) hands the claim back untouched but for its owner.
func (c *conn) take(id string, fresh bool) (store.Session, []*engine.Filter, error) {
	// Not cancelled with the connection: a claim that reached Redis is known to have, and
	// handed back when the connection ended meanwhile.
	ss, err := c.h.o.Store.Claim(context.WithoutCancel(c.ctx), id, c.id.KeyID, c.token, c.h.o.V2Window, fresh)
	if errors.Is(err, store.ErrNoSession) {
		return ss, nil, c.noSession(id)
	}
	if err != nil {
		return ss, nil, err
	}
	if (ss.Kind == KindV2) != c.v2 {
		// A v2 stream is reached only at /ws/v2/transfers, a session only at /ws/transfers.
		c.handBack(ss)
		return ss, nil, c.noSession(id)
	}
	var fs []*engine.Filter
	for _, fr := range ss.Filters {
		var raw filter.Raw
		err := json.Unmarshal(fr.Raw, &raw)
		if err != nil {
			err = fmt.Errorf("session %s filter %s: %w", id, fr.ID, err)
		}
		var f *engine.Filter
		if err == nil {
			f, err = c.compile(c.ctx, fr.ID, raw)
		}
		if err != nil {
			c.handBack(ss)
			return ss, nil, err
		}
		fs = append(fs, f)
	}
	return ss, fs, nil
}

// handBack releases a session this connection claimed (or created) and never recorded as
// served, with the replay buffer the claim took.
func (c *conn) handBack(ss store.Session) {
	restore := func() (store.Session, bool) { return ss, true }
	err := c.h.o.Store.Apply(context.WithoutCancel(c.ctx), ss.ID, c.token, c.h.windowOf(ss.Kind), store.Update{Release: true,
		Replay: ss.Replay, ReplayTimes: replayTimes(ss.Replay), Dropped: ss.Dropped, OnDropped: c.h.o.Metrics.replayDroppedN,
		Restore: restore, SessionCap: c.h.o.MaxSessionsPerKey})
	if _, gone := goneReason(err); err != nil && !gone {
		c.h.o.Log.Error("handing back a session claimed by a connection that could not serve it failed", "session", ss.ID, "error", err)
	}
}

// attach subscribes the connection to session ss, claimed or created in Redis, with filters fs,
// and records it as the session's server, in one step on the engine unless the connection's end
// has taken its session already: then nothing is subscribed, the session is handed back, and
// errEnded returned. skip is as for engine.NewSub; owed: the caller goes on to queue the
// session's replay buffer and catch-up (queueOwed).
func (c *conn) attach(ss store.Session, fs []*engine.Filter, skip map[int]int64, owed bool) (*engine.Sub, map[int]int64, error) {
	e := c.h.o.Engine
	var sub *engine.Sub
	var pos map[int]int64
	e.Do(c.ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.finished {
			return
		}
		pos = e.Positions()
		sub = e.NewSub(c.q, skip)
		for _, f := range fs {
			e.AddFilter(sub, f)
		}
		c.sessID, c.kind, c.sub, c.filters, c.owed = ss.ID, ss.Kind, sub, ss.Filters, nil
		c.seq, c.created = ss.Seq, ss.Created
		c.usedSaved.Store(ss.Used)
		c.q.setFilters(len(fs))
		if owed {
			c.owed = &owedResume{replay: ss.Replay, cursor: ss.Cursor, dropped: ss.Dropped}
		}
		c.h.own(ss.ID, c)
	})
	if sub == nil {
		c.handBack(ss)
		return nil, nil, errEnded
	}
	return sub, pos, nil
}

// noSession is the answer to a reconnect naming a session this connection cannot have.
func (c *conn) noSession(id string) error {
	return perr(CodeNoSession, "session %q does not exist or expired (sessions wait %s for a reconnect)", short(id), c.h.o.Window)
}

// topicEnd is where the transfer topic ends now (read at most a second before, shared by the
// replica's fresh connects): a fresh connection is owed nothing published before it, including
// records this replica has not read yet.
func (c *conn) topicEnd() map[int]int64 {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	end, err := c.h.ends.get(ctx)
	if err != nil {
		c.h.o.Log.Warn("the transfer topic's end could not be read; a fresh session starts where this replica is", "error", err)
		return map[int]int64{}
	}
	return end
}

// catchUp reads, for every partition where the session was served up to an offset before
// this replica's position, the records in between and matches them against its filters, and
// returns what the reads could not have (feed.Range's gaps). Deliveries come in the order the
// broker took the records. A partition found reset delivers nothing here: its new log's
// records are the live feed's to deliver once it reads the reset (engine.ResetPartition).
//
// The reads wait for a catch-up turn (catchUpTurn) and are matched as they come, catchUpChunk
// records at a time: a catch-up holds what matched, not every record it read.
func (c *conn) catchUp(sub *engine.Sub, from, to map[int]int64) ([]engine.Item, []feed.Gap, error) {
	ranges := c.catchUpRanges(from, to)
	if len(ranges) == 0 {
		return nil, nil, nil
	}
	release, err := c.h.catchUpTurn(c.ctx, c.id.KeyID)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	m := &catchUpMatch{c: c, sub: sub, upTo: to, seen: engine.Seen{}}
	var gaps []feed.Gap
	var firstErr error
	for _, r := range ranges {
		if int(r.end-r.start)+m.read > c.h.o.MaxCatchUp {
			firstErr = cmp.Or(firstErr, fmt.Errorf("partition %d: %d records to read again is over the limit of %d", r.part, r.end-r.start, c.h.o.MaxCatchUp))
			gaps = append(gaps, feed.Gap{Partition: r.part, From: r.start, To: r.end, OverLimit: true})
			continue
		}
		items, read := len(m.items), m.read
		found, err := c.h.readRange(c.ctx, r.part, r.start, r.end, func(msg kafka.Message) {
			if rec, ok := decodeTransfer(msg, c.h.o.Log); ok {
				m.add(rec)
			}
		})
		m.flush()
		for _, g := range found {
			if g.Reset {
				// What was read is the new log's (feed.Range): none of it is the catch-up's.
				m.items, m.read = m.items[:items], read
			}
			// Told against the position the session resumed from, whichever record the read
			// was waiting for when it found the gap: every record from g.To on is sent.
			g.From = r.start
			gaps = append(gaps, g)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if m.err != nil {
			firstErr = m.err
			break
		}
	}
	sort.SliceStable(m.items, func(i, j int) bool {
		a, b := m.items[i].R, m.items[j].R
		if !a.Broker.Equal(b.Broker) {
			return a.Broker.Before(b.Broker)
		}
		if a.Part != b.Part {
			return a.Part < b.Part
		}
		return a.Off < b.Off
	})
	return m.items, gaps, firstErr
}

// catchUpRange is what a catch-up reads of partition part: from start up to (not including) end.
type catchUpRange struct {
	part       int
	start, end int64
}

// catchUpRanges is what a catch-up of a session served up to from reads, up to to, in
// partition order: nothing of a partition it was served up to to.
func (c *conn) catchUpRanges(from, to map[int]int64) []catchUpRange {
	var out []catchUpRange
	for p, end := range to {
		start, ok := from[p]
		if !ok {
			start, ok = c.addedSince(from, p)
		}
		if ok && start < end {
			out = append(out, catchUpRange{p, start, end})
		}
	}
	slices.SortFunc(out, func(a, b catchUpRange) int { return cmp.Compare(a.part, b.part) })
	return out
}

// readRange reads a range of the transfer topic (feed.Topic.Range).
func (h *Hub) readRange(ctx context.Context, part int, from, to int64, handle func(kafka.Message)) ([]feed.Gap, error) {
	if h.rangeRead != nil {
		return h.rangeRead(ctx, part, from, to, handle)
	}
	return h.o.Transfers.Range(ctx, part, from, to, handle)
}

// catchUpChunk is how many records a catch-up matches in one call on the engine's goroutine.
const catchUpChunk = 500

// catchUpMatch matches a catch-up's records as they are read, a chunk of one partition at a
// time, in offset order (as the live feed matches them: a copy is the one at the higher
// offset), keeping only the deliveries. The orphaned blocks' reorgs are settled once, before
// the first chunk holding a transfer of a marked block is matched (settleOrphans).
type catchUpMatch struct {
	c       *conn
	sub     *engine.Sub
	upTo    map[int]int64 // where the catch-up reads up to (settleOrphans)
	seen    engine.Seen
	settled bool
	recs    []engine.Record // read, not matched yet
	items   []engine.Item
	read    int   // records read (MaxCatchUp)
	err     error // the connection ended while matching
}

// add takes a record read, matching the chunk it completes.
func (m *catchUpMatch) add(r engine.Record) {
	m.read++
	m.recs = append(m.recs, r)
	if len(m.recs) >= catchUpChunk {
		m.flush()
	}
}

// flush matches the records read and not matched yet, and lets them go.
func (m *catchUpMatch) flush() {
	recs := m.recs
	m.recs = m.recs[:0]
	if len(recs) == 0 || m.err != nil {
		return
	}
	if !m.settled {
		m.settled = m.c.settleOrphans(recs, m.upTo)
	}
	e := m.c.h.o.Engine
	if !e.Do(m.c.ctx, func() { m.items = append(m.items, e.MatchOne(m.sub, recs, m.seen)...) }) {
		m.err = m.c.ctx.Err()
	}
	clear(recs) // the transfers that matched nothing go
}

// addedSince is where to read partition p from for a session saved served up to from, which
// does not name p: p was added to the topic after the save (a saved position names every
// partition its replica was reading, or skipping to), so all it holds was published since, read
// from its first kept record (the replica's shared read of the topic's starts; 0 when that
// does not name p). ok is false for a session saved before it was served anything.
func (c *conn) addedSince(from map[int]int64, p int) (start int64, ok bool) {
	if len(from) == 0 {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	starts, err := c.h.starts.get(ctx)
	if err != nil {
		return 0, true
	}
	return starts[p], true
}

// settleOrphans has, when one of recs (records below upTo) is of a block marked orphaned, the
// reorgs written before upTo applied (orphans.Set.Settle) on the connection's goroutine: the
// engine's catch-up match, which skips such records, then decides without waiting. It reports
// whether it did (settled or not, it is not tried again for the same catch-up).
func (c *conn) settleOrphans(recs []engine.Record, upTo map[int]int64) bool {
	o := c.h.o.Orphans
	if o == nil || o.Len() == 0 {
		return false
	}
	for i := range recs {
		if m := recs[i].Msg; o.Orphaned(m.GetChain(), m.GetBlockHash()) {
			o.Settle(c.ctx, upTo)
			return true
		}
	}
	return false
}

// decodeTransfer decodes and normalises a chain.transfers.v1 record.
func decodeTransfer(m kafka.Message, log *slog.Logger) (engine.Record, bool) {
	if m.Value == nil {
		return engine.Record{}, false
	}
	t := &eventsv1.Transfer{}
	if err := proto.Unmarshal(m.Value, t); err != nil {
		log.Warn("skipping undecodable transfer", "partition", m.Partition, "offset", m.Offset, "error", err)
		return engine.Record{}, false
	}
	if err := render.Normalize(t); err != nil {
		log.Warn("skipping malformed transfer", "partition", m.Partition, "offset", m.Offset, "error", err)
		return engine.Record{}, false
	}
	return engine.Record{Part: m.Partition, Off: m.Offset, Time: m.Time, Msg: t}, true
}

// detach removes the session from the engine and saves it: served-up-to positions, and every
// delivery still unsent into the replay buffer, so a reconnect anywhere gets exactly what it
// was owed. A resume that had not queued everything yet leaves the session where it started:
// its cursor, and its replay buffer less what was sent; the live deliveries held meanwhile are
// read again by the next resume. final (the connection's end) records nothing after it. The
// error is the save's (nil: saved, taken over, or no session).
func (c *conn) detach(ctx context.Context, final bool) error {
	c.smu.Lock()
	defer c.smu.Unlock()
	cursor, snap, owed, win := c.unservedAt(ctx, final)
	id := snap.ID
	d := c.takeReleased()
	if id == "" {
		c.charge(d)
		return nil
	}
	raw, items := c.q.unsent()
	u := store.Update{Cursor: cursor, Used: d.n, Release: true, OnDropped: c.h.o.Metrics.replayDroppedN}
	if owed != nil {
		u.Cursor, u.Replay, u.Dropped = nil, append(raw, owed.replay...), owed.dropped
		snap.Cursor, snap.HasCursor = owed.cursor, owed.cursor != nil
	} else {
		u.Replay = c.renderUnsent(raw, items)
		snap.Cursor, snap.HasCursor = cursor, cursor != nil
	}
	u.ReplayTimes = replayTimes(u.Replay)
	u.Restore, u.SessionCap = func() (store.Session, bool) { return snap, true }, c.h.o.MaxSessionsPerKey
	err := c.h.o.Store.Apply(ctx, id, c.token, win, u)
	c.charge(d) // whatever the save's answer: the client had d (settleCheckpoint)
	if errors.Is(err, store.ErrSessionCap) {
		c.h.o.Log.Warn("a session Redis lost was not stored again at disconnect: its key is at its session limit; what it was owed is dropped", "session", id)
	}
	if _, gone := goneReason(err); gone {
		err = nil
	}
	if err != nil {
		c.h.o.Log.Error("saving a session at disconnect failed; its reconnect may miss transfers", "session", id, "error", err)
	}
	c.h.disown(id, c)
	return err
}

// unserve removes the connection's session from the engine and returns its id ("" when it
// served none); final records nothing for the connection after it.
func (c *conn) unserve(ctx context.Context, final bool) string {
	_, snap, _, _ := c.unservedAt(ctx, final)
	return snap.ID
}

// unservedAt is unserve, with where the session was served up to, the session as the
// connection held it (its ID "" when none; no cursor), what a resume of it had not queued yet
// and its window, taken in one step with letting it go.
func (c *conn) unservedAt(ctx context.Context, final bool) (map[int]int64, store.Session, *owedResume, time.Duration) {
	c.mu.Lock()
	if final {
		c.finished = true
	}
	sub, owed, win := c.sub, c.owed, c.h.windowOf(c.kind)
	var snap store.Session
	if sub != nil {
		snap = c.storedLocked(nil)
	}
	c.sub, c.sessID, c.filters, c.owed = nil, "", nil, nil
	c.mu.Unlock()
	if sub == nil {
		return nil, store.Session{}, nil, 0
	}
	e := c.h.o.Engine
	var cursor map[int]int64
	e.Do(ctx, func() {
		cursor = e.Served(sub)
		e.DropSub(sub)
	})
	return cursor, snap, owed, win
}

// takeOver ends the connection of this replica still serving session id for the same key, if
// any, and waits until it has saved the session (where it was served up to, and what it was
// owed), so the claim that follows resumes exactly there. A client reconnecting at once after
// its connection dropped often gets here before the old connection has noticed; claiming under
// it would find the session's last checkpoint (none yet for a session made over REST: the
// reconnect would start from now) while the old connection's save, refused as taken over,
// dropped what it was owed. A connection of another replica is not reached: it finds the
// session taken over at its next checkpoint, and the reconnect resumes from the last one.
//
// Whatever makes the claim refuse (a session gone, of another kind than this connection's
// route) is checked first: a reconnect that will be refused leaves the connection serving the
// session alone. Another key's reconnect reaches no connection (the claim refuses it).
func (c *conn) takeOver(id string) error {
	old := c.h.owner(id)
	if old == nil || old == c || old.ended == nil || old.id.KeyID != c.id.KeyID {
		return nil
	}
	ss, err := c.h.o.Store.Get(c.ctx, id, c.id.KeyID)
	if errors.Is(err, store.ErrNoSession) || (err == nil && (ss.Kind == KindV2) != c.v2) {
		return c.noSession(id)
	}
	if err != nil {
		return err
	}
	old.kick("session taken over by another connection")
	select {
	case <-old.ended:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}
