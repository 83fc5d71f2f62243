// Package engine matches transfers against every subscribed filter of this replica. Filters are
// compiled at subscribe time into indexes by address, entity, entity type, deposit service and
// token, plus a list sorted by usdGte for filters that name none of those; a transfer looks up
// only the lists its addresses, their attributions and its token point to, so the work per
// transfer grows with the filters that could match, not with every filter. One goroutine owns
// all state (indexes, the attribution read model, partition positions); everything else reaches
// it through Do.
package engine

import (
	"slices"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// refSet is one side's references of a filter (addresses, entities, entity types, deposit
// services). Most filters name one value on a side, which the set holds as that value and its
// kind, checked with one comparison and no map; a set of more values keeps maps by kind.
type refSet struct {
	one  string
	kind int // of one: an index kind (idxAddr … idxDep) + 1; 0 when one is unset
	many *refMaps
	n    int // references added (a set with references but no values matches nothing)
}

// refMaps are a refSet's values by kind, once it holds more than one.
type refMaps struct {
	addrs, ents, types, deps map[string]struct{}
}

func (s *refSet) add(r filter.Ref, userAddrs map[string][]string) {
	s.n++
	switch r.Kind {
	case filter.KindAddress:
		for _, a := range r.Addresses {
			s.put(idxAddr, a)
		}
	case filter.KindUserEntity:
		for _, a := range userAddrs[r.Value] {
			s.put(idxAddr, a)
		}
	case filter.KindEntity:
		s.put(idxEnt, r.Value)
		// The caller's additions to the entity are its addresses too, for this caller only.
		for _, a := range userAddrs[r.Value] {
			s.put(idxAddr, a)
		}
	case filter.KindType:
		s.put(idxType, r.Value)
	case filter.KindDeposit:
		s.put(idxDep, r.Value)
	}
}

// put adds the value v of index kind k.
func (s *refSet) put(k int, v string) {
	switch {
	case s.many == nil && s.kind == 0:
		s.one, s.kind = v, k+1
		return
	case s.many == nil && s.kind == k+1 && s.one == v:
		return
	case s.many == nil:
		s.many = &refMaps{}
		s.many.put(s.kind-1, s.one)
		s.one, s.kind = "", 0
	}
	s.many.put(k, v)
}

func (m *refMaps) put(k int, v string) {
	p := [...]*map[string]struct{}{idxAddr: &m.addrs, idxEnt: &m.ents, idxType: &m.types, idxDep: &m.deps}[k]
	if *p == nil {
		*p = map[string]struct{}{}
	}
	(*p)[v] = struct{}{}
}

// has reports whether the side (an address and what the read model knows of it) is in the set.
func (s *refSet) has(addr string, at *render.Attr) bool {
	if s.many != nil {
		return s.many.has(addr, at)
	}
	switch s.kind {
	case idxAddr + 1:
		return s.one == addr
	case idxEnt + 1:
		// An entity id names the entity's own addresses and its deposit addresses, as in
		// /transfers.
		return at != nil && (at.Entity != nil && at.Entity.ID == s.one || at.DepositServiceID != "" && at.DepositServiceID == s.one)
	case idxType + 1:
		return at != nil && at.Entity != nil && at.Entity.Type == s.one
	case idxDep + 1:
		return at != nil && at.DepositServiceID != "" && at.DepositServiceID == s.one
	}
	return false
}

func (m *refMaps) has(addr string, at *render.Attr) bool {
	if _, ok := m.addrs[addr]; ok {
		return true
	}
	if at == nil {
		return false
	}
	if at.Entity != nil {
		if _, ok := m.ents[at.Entity.ID]; ok {
			return true
		}
		if _, ok := m.types[at.Entity.Type]; ok {
			return true
		}
	}
	if at.DepositServiceID != "" {
		if _, ok := m.deps[at.DepositServiceID]; ok {
			return true
		}
		if _, ok := m.ents[at.DepositServiceID]; ok {
			return true
		}
	}
	return false
}

// keys are the set's values as index keys.
func (s *refSet) keys() []ikey {
	if s.many == nil {
		if s.kind == 0 {
			return nil
		}
		return []ikey{{s.kind - 1, s.one}}
	}
	var ks []ikey
	for k, m := range [...]map[string]struct{}{idxAddr: s.many.addrs, idxEnt: s.many.ents, idxType: s.many.types, idxDep: s.many.deps} {
		for v := range m {
			ks = append(ks, ikey{k, v})
		}
	}
	return ks
}

// Filter is a compiled filter of one subscription.
type Filter struct {
	ID   string
	Spec filter.Spec
	sub  *Sub

	base, from, fromNeg, to, toNeg, cps refSet
	tokAddr, tokID, chains              map[string]struct{}
	usdGte, usdLte, valGte, valLte      *float64

	// floor is usdGte, or -1 without one: every list is sorted by it, so a transfer stops
	// looking at a list where the floors pass its value.
	floor float64
	keys  []ikey
	stamp uint64 // the last transfer that looked at it
}

// Index kinds.
const (
	idxAddr = iota
	idxEnt
	idxType
	idxDep
	idxTok
	idxUSD
)

type ikey struct {
	kind int
	key  string
}

// Compile builds the filter id of spec; userAddrs holds, by id, the addresses of the user
// entities spec names and the caller's additions to the operator entities it names (resolved
// through user-labels for the caller; user entity ids are UUIDs and operator entity ids are
// not, so they cannot collide).
func Compile(id string, spec filter.Spec, userAddrs map[string][]string) *Filter {
	f := &Filter{ID: id, Spec: spec, usdGte: spec.USDGte, usdLte: spec.USDLte, valGte: spec.ValGte, valLte: spec.ValLte}
	for _, r := range spec.Base {
		f.base.add(r, userAddrs)
	}
	for _, r := range spec.Counterparties {
		f.cps.add(r, userAddrs)
	}
	for _, r := range spec.From {
		if r.Negate {
			f.fromNeg.add(r, userAddrs)
		} else {
			f.from.add(r, userAddrs)
		}
	}
	for _, r := range spec.To {
		if r.Negate {
			f.toNeg.add(r, userAddrs)
		} else {
			f.to.add(r, userAddrs)
		}
	}
	for _, t := range spec.Tokens {
		if t.Address != "" {
			f.tokAddr = setAdd(f.tokAddr, t.Address)
		} else {
			f.tokID = setAdd(f.tokID, t.PricingID)
		}
	}
	for _, c := range spec.Chains {
		f.chains = setAdd(f.chains, c)
	}
	f.keys = f.indexKeys()
	f.floor = -1
	if f.usdGte != nil {
		f.floor = *f.usdGte
	}
	return f
}

func setAdd(m map[string]struct{}, v string) map[string]struct{} {
	if m == nil {
		m = map[string]struct{}{}
	}
	m[v] = struct{}{}
	return m
}

// indexKeys picks the most selective part every match must satisfy: base, then the positive
// from refs, then to, then tokens; a filter with none of them sits in the usdGte list.
func (f *Filter) indexKeys() []ikey {
	for _, s := range []*refSet{&f.base, &f.from, &f.to} {
		if s.n > 0 {
			return s.keys()
		}
	}
	if len(f.tokAddr)+len(f.tokID) > 0 {
		var ks []ikey
		for a := range f.tokAddr {
			ks = append(ks, ikey{idxTok, a})
		}
		for p := range f.tokID {
			ks = append(ks, ikey{idxTok, p})
		}
		return ks
	}
	return []ikey{{idxUSD, ""}}
}

// side is one end of a transfer being matched.
type side struct {
	addr string
	at   *render.Attr
}

// txn is the transfer being matched, with what matching needs computed once.
type txn struct {
	chain, token, tokenID string
	from, to              side
	usd                   float64
	hasUSD                bool
	value                 float64
	valueDone             bool
	amount                string
	decimals              int32
}

func (t *txn) unitValue() float64 {
	if !t.valueDone {
		t.value, t.valueDone = render.UnitValue(t.amount, t.decimals), true
	}
	return t.value
}

// matches reports whether t passes every condition of f.
func (f *Filter) matches(t *txn) bool {
	return f.matchesAsset(t) && f.matchesParties(t)
}

// matchesAsset checks the chain, the token and the amount.
func (f *Filter) matchesAsset(t *txn) bool {
	if f.chains != nil {
		if _, ok := f.chains[t.chain]; !ok {
			return false
		}
	}
	if f.tokAddr != nil || f.tokID != nil {
		_, a := f.tokAddr[t.token]
		_, p := f.tokID[t.tokenID]
		if !(t.token != "" && a) && !(t.tokenID != "" && p) {
			return false
		}
	}
	if (f.usdGte != nil || f.usdLte != nil) && !t.hasUSD {
		return false
	}
	if f.usdGte != nil && t.usd < *f.usdGte || f.usdLte != nil && t.usd > *f.usdLte {
		return false
	}
	if f.valGte != nil && t.unitValue() < *f.valGte || f.valLte != nil && t.unitValue() > *f.valLte {
		return false
	}
	return true
}

// matchesParties checks the sender, the recipient and the base.
func (f *Filter) matchesParties(t *txn) bool {
	if f.from.n > 0 && !f.from.has(t.from.addr, t.from.at) || f.fromNeg.n > 0 && f.fromNeg.has(t.from.addr, t.from.at) {
		return false
	}
	if f.to.n > 0 && !f.to.has(t.to.addr, t.to.at) || f.toNeg.n > 0 && f.toNeg.has(t.to.addr, t.to.at) {
		return false
	}
	if f.base.n > 0 {
		return f.matchBase(t)
	}
	return true
}

func (f *Filter) matchBase(t *txn) bool {
	fb, tb := f.base.has(t.from.addr, t.from.at), f.base.has(t.to.addr, t.to.at)
	var ok bool
	switch f.Spec.Flow {
	case "in":
		ok = tb && !fb
	case "out":
		ok = fb && !tb
	case "self":
		ok = fb && tb
	default:
		ok = fb || tb
	}
	if !ok || f.cps.n == 0 {
		return ok
	}
	// counterparties: the side that is not base must be one of them.
	if fb && f.cps.has(t.to.addr, t.to.at) || tb && f.cps.has(t.from.addr, t.from.at) {
		return true
	}
	return false
}

// index is the set of lists filters sit in.
type index struct {
	lists [idxUSD]map[string][]*Filter
	usd   []*Filter // sorted by usdGte
	all   []*Filter // every filter, for the naive matcher the benchmark compares with
}

func newIndex() *index {
	ix := &index{}
	for i := range ix.lists {
		ix.lists[i] = map[string][]*Filter{}
	}
	return ix
}

// insertSorted puts f in l after every filter whose floor is not above its own.
func insertSorted(l []*Filter, f *Filter) []*Filter {
	i, _ := slices.BinarySearchFunc(l, f.floor, func(g *Filter, v float64) int {
		if g.floor <= v {
			return -1
		}
		return 1
	})
	return slices.Insert(l, i, f)
}

func removeSorted(l []*Filter, f *Filter) []*Filter {
	if i := slices.Index(l, f); i >= 0 {
		l = slices.Delete(l, i, i+1) // keeps the order
	}
	return l
}

func (ix *index) add(f *Filter) {
	ix.all = append(ix.all, f)
	for _, k := range f.keys {
		if k.kind == idxUSD {
			ix.usd = insertSorted(ix.usd, f)
			continue
		}
		ix.lists[k.kind][k.key] = insertSorted(ix.lists[k.kind][k.key], f)
	}
}

func (ix *index) remove(f *Filter) {
	ix.all = deleteOne(ix.all, f)
	for _, k := range f.keys {
		if k.kind == idxUSD {
			ix.usd = removeSorted(ix.usd, f)
			continue
		}
		l := removeSorted(ix.lists[k.kind][k.key], f)
		if len(l) == 0 {
			delete(ix.lists[k.kind], k.key)
		} else {
			ix.lists[k.kind][k.key] = l
		}
	}
}

func deleteOne(l []*Filter, f *Filter) []*Filter {
	if i := slices.Index(l, f); i >= 0 {
		l[i] = l[len(l)-1]
		l[len(l)-1] = nil
		l = l[:len(l)-1]
	}
	return l
}
