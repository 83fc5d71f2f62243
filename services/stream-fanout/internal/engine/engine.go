package engine

import (
	"context"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// Record is one decoded, normalised chain.transfers.v1 record.
type Record struct {
	Part int
	Off  int64
	Time time.Time // the record's broker time
	// Fetched is when the replica's reader returned the record (zero: not timed).
	Fetched time.Time
	Msg     *eventsv1.Transfer
	// Reset marks no transfer but the partition's log starting again at Off (the topic was
	// recreated): the records that follow are of the new log (ResetPartition).
	Reset bool
}

// Rendered is a matched transfer, rendered once for every filter it matched.
type Rendered struct {
	T      render.Transfer
	JSON   []byte
	Part   int
	Off    int64
	Broker time.Time // when the broker took the record: the start of Kafka-to-client latency
	// Fetched and Matched are when the replica read the record and when the engine matched
	// it: the stages of a delivery's latency that precede its connection's writer.
	Fetched, Matched time.Time
}

// Item is one delivery owed to a subscription: a transfer and the filter it matched.
type Item struct {
	R        *Rendered
	FilterID string
}

// Sink takes a subscription's deliveries. Offer takes every delivery one transfer owes the
// subscription (one per filter it matched), all or none: it must not block and reports Full,
// queueing none of them, when the subscription's queue has no room for them all; it wakes no
// consumer. All or none is what makes the position the subscription is frozen at exact: a
// catch-up from the refused transfer matches it again, so a part of it queued before the
// refusal would be delivered twice. The engine calls Wake once after the records it matched
// together, so what several records (or several filters of one record) owe one subscription
// is sent as one batch, after one wakeup.
type Sink interface {
	Offer([]Item) Offered
	Wake()
}

// Offered is what a Sink did with an offer.
type Offered uint8

const (
	// Queued: every delivery is queued, to be delivered.
	Queued Offered = iota
	// Full: none is queued (no room for them all); the subscription is frozen at the transfer.
	Full
	// Discarded: none is queued, and the subscription takes more: the key's quota is spent
	// (not delivered, not owed), or its connection is ending (its save accounts for them).
	Discarded
)

// Sub is one session's presence on this replica: its filters and where its deliveries go.
type Sub struct {
	Sink    Sink
	touched bool // offered something since the engine last woke it
	filters map[string]*Filter
	// skip holds, per partition, the first offset the session is owed: records before it were
	// matched for the session elsewhere (it came from a replica that was ahead of this one).
	skip map[int]int64
	// full is set when an Offer failed; the subscription gets nothing more. frozen is then
	// where it stopped being served: the engine's positions with the refused record's own
	// offset on its partition.
	full   bool
	frozen map[int]int64
	// pend are the current transfer's matches for the subscription, offered together once
	// every filter has been tried.
	pend []Item
}

// Served returns where the subscription has been served up to: per partition, the first
// offset not offered to it (engine goroutine only).
func (e *Engine) Served(s *Sub) map[int]int64 {
	src := e.pos
	if s.frozen != nil {
		src = s.frozen
	}
	out := make(map[int]int64, len(src))
	for k, v := range src {
		out[k] = max(v, s.skip[k])
	}
	// A partition the subscription skips to but the engine has not read yet (one added to the
	// topic that this replica has not found, or found and read nothing of) is served up to the
	// skip: a cursor without it would have the session's next resume read it from its start.
	for k, v := range s.skip {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// Len is how many filters s has (engine goroutine only).
func (s *Sub) Len() int { return len(s.filters) }

// AttrKey names an address on a chain type in the read model.
type AttrKey struct{ ChainType, Address string }

// Options configure an engine.
type Options struct {
	// Naive checks every filter for every transfer instead of using the indexes (the
	// benchmark's baseline).
	Naive bool
	// OnFull is called (on the engine goroutine) when a subscription's queue overflows.
	OnFull func(*Sub)
	// Orphaned, when set, reports whether the transfer at offset off of partition part, of
	// chain's block hash, is to be skipped, its block orphaned by a reorg: such a transfer
	// matches nothing, live or in a catch-up. It runs on the engine goroutine and may block it
	// (orphans.Set.SkipRecord waits, bounded, for the reorgs written before the record): the
	// feed and a catch-up have those read beforehand (orphans.Set.Settle), so it rarely does.
	Orphaned func(chain, blockHash string, part int, off int64) bool
	// Copies is how many transfers of each partition are remembered to skip a copy of one
	// published again at a later offset (copies); 0 skips none.
	Copies int
}

// Engine owns the indexes, the attribution read model and the partition positions.
type Engine struct {
	o     Options
	cmds  chan func()
	recs  chan Record
	ix    *index
	attrs map[AttrKey]*render.Attr
	names names // of attrs
	pos   map[int]int64
	seq   uint64
	cur   txn
	subs  map[*Sub]struct{}
	// touched are the subscriptions offered something since the last wake.
	touched []*Sub
	// pending are the subscriptions the current transfer matched, in order of first match.
	pending []*Sub
	copies  copies

	matched, delivered, dropped, discarded, repeated uint64
}

// New returns an engine; Run drives it. recs is where the feed puts records.
func New(o Options) *Engine {
	return &Engine{o: o, cmds: make(chan func()), recs: make(chan Record, 4096), ix: newIndex(),
		attrs: map[AttrKey]*render.Attr{}, pos: map[int]int64{}, subs: map[*Sub]struct{}{}, copies: newCopies(o.Copies)}
}

// Records is the channel the feed writes to; a full channel holds the feed back.
func (e *Engine) Records() chan<- Record { return e.recs }

// Run processes records and commands until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case fn := <-e.cmds:
			fn()
		case r := <-e.recs:
			e.Process(r)
			e.more()
			e.wake()
		}
	}
}

// burst is the most records matched, after one, before the subscriptions they matched are
// woken: what is already waiting, not what is still to come.
const burst = 32

// more matches the records already waiting, up to burst.
func (e *Engine) more() {
	for range burst {
		select {
		case r := <-e.recs:
			e.Process(r)
		default:
			return
		}
	}
}

// wake wakes every subscription offered something since the last wake (engine goroutine only).
func (e *Engine) wake() {
	for i, s := range e.touched {
		s.touched = false
		s.Sink.Wake()
		e.touched[i] = nil
	}
	e.touched = e.touched[:0]
}

// Do runs fn on the engine goroutine and waits for it; false when ctx ended first.
func (e *Engine) Do(ctx context.Context, fn func()) bool {
	done := make(chan struct{})
	select {
	case e.cmds <- func() { fn(); close(done) }:
	case <-ctx.Done():
		return false
	}
	<-done
	return true
}

// SetPositions sets where the feed starts each partition (engine goroutine only, or before Run).
func (e *Engine) SetPositions(p map[int]int64) {
	for k, v := range p {
		e.pos[k] = v
	}
}

// ResetPartition restarts partition part at offset start, where a recreated topic's log starts
// (engine goroutine only): every subscription is owed the new log's records from there, though
// it was served, or told to skip, up to offsets of the old log. A subscription frozen by a
// full queue keeps the old position it is saved at (its reconnect finds it past the new log's
// end and is told so).
func (e *Engine) ResetPartition(part int, start int64) {
	e.pos[part] = start
	e.copies.reset(part)
	for s := range e.subs {
		if _, ok := s.skip[part]; !ok {
			continue
		}
		// skip may be shared with other subscriptions (a fresh connect's topic end): copied.
		skip := make(map[int]int64, len(s.skip))
		for p, off := range s.skip {
			if p != part {
				skip[p] = off
			}
		}
		s.skip = skip
	}
}

// Positions copies the next offset to be processed per partition (engine goroutine only).
func (e *Engine) Positions() map[int]int64 {
	out := make(map[int]int64, len(e.pos))
	for k, v := range e.pos {
		out[k] = v
	}
	return out
}

// SetAttr applies an attribution (nil deletes); engine goroutine only.
func (e *Engine) SetAttr(k AttrKey, a *render.Attr) {
	old := e.attrs[k]
	if a == nil {
		e.names.count(old, -1)
		delete(e.attrs, k)
		return
	}
	if old != nil && old.Version > a.Version && a.Version != 0 {
		return
	}
	e.names.count(old, -1)
	e.names.count(a, 1)
	e.attrs[k] = a
}

// Attr returns the read model's entry (engine goroutine only).
func (e *Engine) Attr(k AttrKey) *render.Attr { return e.attrs[k] }

// NewSub registers a subscription with no filters; skip as for Sub.skip. Engine goroutine only.
func (e *Engine) NewSub(sink Sink, skip map[int]int64) *Sub {
	s := &Sub{Sink: sink, filters: map[string]*Filter{}, skip: skip}
	e.subs[s] = struct{}{}
	return s
}

// AddFilter indexes f for s (engine goroutine only).
func (e *Engine) AddFilter(s *Sub, f *Filter) {
	f.sub = s
	s.filters[f.ID] = f
	e.ix.add(f)
}

// RemoveFilter unindexes s's filter id; false when s has none (engine goroutine only).
func (e *Engine) RemoveFilter(s *Sub, id string) bool {
	f := s.filters[id]
	if f == nil {
		return false
	}
	delete(s.filters, id)
	e.ix.remove(f)
	return true
}

// DropSub removes s and all its filters (engine goroutine only).
func (e *Engine) DropSub(s *Sub) {
	for id := range s.filters {
		e.RemoveFilter(s, id)
	}
	delete(e.subs, s)
}

// Subs is how many subscriptions the engine holds (engine goroutine only).
func (e *Engine) Subs() int { return len(e.subs) }

// Stats are counters since start, of deliveries (a transfer and a filter it matched):
// Matched, then each either Delivered (queued for its connection), Dropped (its queue full:
// owed from the position the subscription froze at) or Discarded (the key's quota spent, or
// the connection ending: Sink's Discarded); and of Repeated records, copies of a transfer read
// before that the live feed skipped (Options.Copies).
type Stats struct{ Matched, Delivered, Dropped, Discarded, Repeated uint64 }

// Stats reads the counters (engine goroutine only).
func (e *Engine) Stats() Stats {
	return Stats{e.matched, e.delivered, e.dropped, e.discarded, e.repeated}
}

// orphaned reports whether r is a transfer of a block a reorg orphaned (Options.Orphaned).
func (e *Engine) orphaned(r *Record) bool {
	return e.o.Orphaned != nil && r.Msg != nil && e.o.Orphaned(r.Msg.GetChain(), r.Msg.GetBlockHash(), r.Part, r.Off)
}

func (e *Engine) load(r *Record) {
	m := r.Msg
	ct := render.ChainType(m.GetChain())
	e.seq++
	e.cur = txn{chain: m.GetChain(), token: m.GetTokenAddress(), tokenID: m.GetTokenId(), amount: m.GetAmount(), decimals: m.GetTokenDecimals(),
		from: side{m.GetFrom(), e.attrs[AttrKey{ct, m.GetFrom()}]}, to: side{m.GetTo(), e.attrs[AttrKey{ct, m.GetTo()}]}}
	if m.HistoricalUsd != nil {
		e.cur.usd, e.cur.hasUSD = m.GetHistoricalUsd(), true
	}
}

// Process matches one record and offers it to every subscription it matches.
func (e *Engine) Process(r Record) {
	if r.Reset {
		e.ResetPartition(r.Part, r.Off)
		return
	}
	if r.Off >= e.pos[r.Part] {
		e.pos[r.Part] = r.Off + 1
	}
	if e.orphaned(&r) {
		return // the position moves on: the record is owed to no one
	}
	if e.copies.repeat(&r) {
		e.repeated++
		return // a copy: the first was offered
	}
	e.load(&r)
	defer e.offer(&r)
	var rd *Rendered
	if e.o.Naive {
		for _, f := range e.ix.all {
			rd = e.try(f, &r, rd)
		}
		return
	}
	lists := e.ix.candidates(&e.cur)
	for _, l := range lists {
		rd = e.visit(l, &r, rd)
	}
}

// maxLists is the most lists of an index a transfer looks at: its two addresses, for each side
// its entity, entity type, deposit service and deposit service as an entity, its token's
// address and pricing id, and the usdGte list.
const maxLists = 13

// candidates are the lists of ix holding the filters t may match, in the order they are tried
// (nil for a list ix does not have).
func (ix *index) candidates(t *txn) (out [maxLists][]*Filter) {
	out[0], out[1] = ix.lists[idxAddr][t.from.addr], ix.lists[idxAddr][t.to.addr]
	n := 2
	for _, sd := range [2]*side{&t.from, &t.to} {
		if sd.at == nil {
			continue
		}
		if sd.at.Entity != nil {
			out[n], out[n+1] = ix.lists[idxEnt][sd.at.Entity.ID], ix.lists[idxType][sd.at.Entity.Type]
			n += 2
		}
		if sd.at.DepositServiceID != "" {
			out[n], out[n+1] = ix.lists[idxDep][sd.at.DepositServiceID], ix.lists[idxEnt][sd.at.DepositServiceID]
			n += 2
		}
	}
	if t.token != "" {
		out[n] = ix.lists[idxTok][t.token]
		n++
	}
	if t.tokenID != "" {
		out[n] = ix.lists[idxTok][t.tokenID]
		n++
	}
	out[n] = ix.usd
	return out
}

// visit tries the filters of a list up to the first whose usdGte the transfer's value is below
// (lists are sorted by it; a transfer without a value passes only filters without one).
func (e *Engine) visit(l []*Filter, r *Record, rd *Rendered) *Rendered {
	v := -0.5
	if e.cur.hasUSD {
		v = e.cur.usd
	}
	for _, f := range l {
		if f.floor > v {
			break
		}
		rd = e.try(f, r, rd)
	}
	return rd
}

// try checks f once per transfer and offers a match; the transfer is rendered at its first match.
func (e *Engine) try(f *Filter, r *Record, rd *Rendered) *Rendered {
	if f.stamp == e.seq {
		return rd
	}
	f.stamp = e.seq
	s := f.sub
	if s.full || !f.matches(&e.cur) {
		return rd
	}
	if sk, ok := s.skip[r.Part]; ok && r.Off < sk {
		return rd
	}
	if rd == nil {
		rd = e.render(r)
	}
	e.matched++
	if len(s.pend) == 0 {
		e.pending = append(e.pending, s)
	}
	s.pend = append(s.pend, Item{R: rd, FilterID: f.ID})
	return rd
}

// offer hands each subscription the current transfer matched all its matches at once; a
// subscription whose queue has no room for them all gets none and is frozen at the transfer.
func (e *Engine) offer(r *Record) {
	for i, s := range e.pending {
		e.pending[i] = nil
		items := s.pend
		switch s.Sink.Offer(items) {
		case Queued:
			e.delivered += uint64(len(items))
			if !s.touched {
				s.touched = true
				e.touched = append(e.touched, s)
			}
		case Discarded:
			e.discarded += uint64(len(items))
		default:
			e.dropped += uint64(len(items))
			s.full = true
			s.frozen = e.Positions()
			s.frozen[r.Part] = r.Off
			if e.o.OnFull != nil {
				e.o.OnFull(s)
			}
		}
		clear(items)
		s.pend = items[:0]
	}
	e.pending = e.pending[:0]
}

func (e *Engine) render(r *Record) *Rendered {
	rd := &Rendered{T: render.TransferOf(r.Msg, e.cur.from.at, e.cur.to.at), Part: r.Part, Off: r.Off, Broker: r.Time,
		Fetched: r.Fetched, Matched: time.Now()}
	rd.JSON = render.JSON(&rd.T)
	return rd
}

// MatchOne matches records against s's filters only, for a session catching up on what it
// missed; it returns the deliveries in record order (engine goroutine only). A copy of a
// transfer read at a lower offset, live or by the same catch-up (seen, shared by its calls),
// is skipped. Only records that matched are looked up and kept in seen: a copy matches what
// its first did, so one of a transfer that matched nothing matches nothing too, and seen
// holds no more than the deliveries the catch-up holds anyway.
func (e *Engine) MatchOne(s *Sub, recs []Record, seen Seen) []Item {
	var out []Item
	for i := range recs {
		r := &recs[i]
		if e.orphaned(r) {
			continue
		}
		e.load(r)
		var rd *Rendered
		for _, f := range s.filters {
			if !f.matches(&e.cur) {
				continue
			}
			if rd == nil {
				if e.copies.caughtRepeat(r, seen) {
					break
				}
				rd = e.render(r)
			}
			out = append(out, Item{R: rd, FilterID: f.ID})
		}
	}
	return out
}

// Drain matches every record waiting in the channel and wakes what they matched (engine
// goroutine only).
func (e *Engine) Drain() {
	defer e.wake()
	for {
		select {
		case r := <-e.recs:
			e.Process(r)
		default:
			return
		}
	}
}
