package engine

// Set is a group of filters matched on demand against the records given (MatchSet) rather
// than against the live feed: the alerts' rules, matched against the transfers the alerts'
// consumer group hands this replica. It is indexed as the live filters are, so a transfer
// looks only at the rules that could match it. Engine goroutine only, like the live filters.
type Set struct {
	ix      *index
	filters map[string]*Filter
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{ix: newIndex(), filters: map[string]*Filter{}} }

// Put adds f, in place of the set's filter of the same ID if any (engine goroutine only).
func (s *Set) Put(f *Filter) {
	s.Remove(f.ID)
	s.filters[f.ID] = f
	s.ix.add(f)
}

// Remove drops the filter id; false when the set has none (engine goroutine only).
func (s *Set) Remove(id string) bool {
	f := s.filters[id]
	if f == nil {
		return false
	}
	delete(s.filters, id)
	s.ix.remove(f)
	return true
}

// Len is how many filters s holds (engine goroutine only).
func (s *Set) Len() int { return len(s.filters) }

// Match is a record that matched filters of a set: the transfer, rendered once, and the IDs of
// the filters it matched.
type Match struct {
	R   *Rendered
	IDs []string
}

// MatchSet matches recs, in order, against s's filters, with the read model as it is now; a
// record of an orphaned block (Options.Orphaned) or without a transfer matches nothing. It
// returns the records that matched (engine goroutine only).
func (e *Engine) MatchSet(s *Set, recs []Record) []Match {
	var out []Match
	for i := range recs {
		r := &recs[i]
		if r.Msg == nil || r.Reset || e.orphaned(r) {
			continue
		}
		e.load(r)
		v := -0.5 // a transfer without a value passes only filters without usdGte (visit)
		if e.cur.hasUSD {
			v = e.cur.usd
		}
		var ids []string
		for _, l := range s.ix.candidates(&e.cur) {
			for _, f := range l {
				if f.floor > v {
					break
				}
				if f.stamp == e.seq {
					continue
				}
				f.stamp = e.seq
				if f.matches(&e.cur) {
					ids = append(ids, f.ID)
				}
			}
		}
		if len(ids) > 0 {
			out = append(out, Match{R: e.render(r), IDs: ids})
		}
	}
	return out
}
