package store_test

// A plain in-memory model of the balances store, computed from the observations by the rules of
// docs/balances.md, for the randomized test in model_run_test.go.
//
// The model keeps every observation ever appended with what the store has done with it:
//   - folded: in the read models: taken by the applier (its id at or below the mark), or read
//     early by a reorg's rebuild of its key from its day on;
//   - pruned: deleted by the pruner (prune_observations.sql's rule, evaluated here);
//   - hidden: pruned, and its day since rebuilt by a reorg from the kept observations (or void
//     when pruned), so no snapshot holds it any more.
//
// A key's snapshot of a day is the newest by block of its visible observations of that day (a
// kept one: folded and its block hash not orphaned; a pruned one: not hidden, its block's fate
// frozen when it was pruned, as the stored snapshots keep it), carried forward over days without
// one. Its current balance is the newest kept visible observation. An operator entity's figures
// are the sums over its current members (relabels move the whole history, docs/balances.md
// "Relabels"). Without reorgs deeper than the retention, pruning changes no figure and every
// figure is the one the surviving observations give; with them the model follows what the docs
// say such a reorg does (it rebuilds the touched days from the kept rows only).

import (
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

type mObs struct {
	id                     int // append order, from 1
	o                      store.Observation
	day                    time.Time
	folded, pruned, hidden bool
}

func (o *mObs) key() store.Key {
	return store.Key{Chain: o.o.Chain, Address: o.o.Address, Token: o.o.Token}
}

type mAttr struct {
	entity  string // "" for an attribution without an operator entity
	version int64
}

type balModel struct {
	obs         []*mObs
	byKey       map[store.Key][]*mObs
	mark        int // observations taken by the applier
	orphaned    map[[2]string]bool
	attrs       map[string]mAttr
	horizon     map[string]time.Time
	prunedBlock map[string]int64
}

func newBalModel() *balModel {
	return &balModel{byKey: map[store.Key][]*mObs{}, orphaned: map[[2]string]bool{}, attrs: map[string]mAttr{},
		horizon: map[string]time.Time{}, prunedBlock: map[string]int64{}}
}

func (m *balModel) void(o *mObs) bool { return m.orphaned[[2]string{o.o.Chain, o.o.BlockHash}] }

func (m *balModel) visible(o *mObs) bool {
	if o.pruned {
		return !o.hidden
	}
	return o.folded && !m.void(o)
}

func (m *balModel) appendObs(obs []store.Observation) {
	for _, o := range obs {
		mo := &mObs{id: len(m.obs) + 1, o: o, day: store.Day(o.BlockTime)}
		m.obs = append(m.obs, mo)
		m.byKey[mo.key()] = append(m.byKey[mo.key()], mo)
	}
}

// applyPending folds the next taken observations and returns how many of them were not void.
func (m *balModel) applyPending(taken int) (fresh int) {
	for _, o := range m.obs[m.mark : m.mark+taken] {
		o.folded = true
		if !m.void(o) {
			fresh++
		}
	}
	m.mark += taken
	return fresh
}

func (m *balModel) backlog() int { return len(m.obs) - m.mark }

// current is a key's current observation (nil: no current row).
func (m *balModel) current(k store.Key) *mObs {
	var top *mObs
	for _, o := range m.byKey[k] {
		if !o.pruned && m.visible(o) && (top == nil || o.o.BlockNumber > top.o.BlockNumber) {
			top = o
		}
	}
	return top
}

type mPoint struct {
	day   time.Time
	block int64
	bal   *big.Int
}

// points are a key's snapshots by day, sorted.
func (m *balModel) points(k store.Key) []mPoint {
	byDay := map[time.Time]mPoint{}
	for _, o := range m.byKey[k] {
		if !m.visible(o) {
			continue
		}
		if p, ok := byDay[o.day]; !ok || o.o.BlockNumber > p.block {
			byDay[o.day] = mPoint{day: o.day, block: o.o.BlockNumber, bal: o.o.Balance}
		}
	}
	out := make([]mPoint, 0, len(byDay))
	for _, p := range byDay {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].day.Before(out[j].day) })
	return out
}

// snapAt is the balance at the end of day d of a key with snapshots ps (zero before the first).
func snapAt(ps []mPoint, d time.Time) *big.Int {
	v := new(big.Int)
	for _, p := range ps {
		if p.day.After(d) {
			break
		}
		v = p.bal
	}
	return v
}

func (m *balModel) members(entity string) []string {
	var out []string
	for a, at := range m.attrs {
		if at.entity == entity && entity != "" {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// attributions applies a batch (one per address) as attr_moves.sql, attr_upsert.sql and
// attr_delete.sql do and returns how many addresses changed entity.
func (m *balModel) attributions(as []store.Attribution) (moved int) {
	for _, a := range as {
		old, has := m.attrs[a.Address]
		newE := ""
		if !a.Tombstone && a.Entity != nil {
			newE = a.Entity.ID
		}
		newer := !has || a.Version > old.version
		if (a.Tombstone || newer) && old.entity != newE {
			moved++
		}
		switch {
		case a.Tombstone:
			delete(m.attrs, a.Address)
		case newer:
			m.attrs[a.Address] = mAttr{entity: newE, version: a.Version}
		}
	}
	return moved
}

// reorg applies a reorg and returns what ApplyReorg must report.
func (m *balModel) reorg(chain string, from int64, orphaned, canonical []string) store.ReorgResult {
	changedO, changedR := map[string]bool{}, map[string]bool{}
	for _, h := range orphaned {
		if k := [2]string{chain, h}; !m.orphaned[k] {
			m.orphaned[k], changedO[h] = true, true
		}
	}
	for _, h := range canonical {
		if k := [2]string{chain, h}; m.orphaned[k] {
			delete(m.orphaned, k)
			changedR[h] = true
		}
	}
	var res store.ReorgResult
	since := map[store.Key]time.Time{}
	var times []time.Time
	for _, o := range m.obs {
		if o.pruned || o.o.Chain != chain || !(changedO[o.o.BlockHash] || changedR[o.o.BlockHash]) {
			continue
		}
		if changedO[o.o.BlockHash] {
			res.Voided++
		} else {
			res.Restored++
		}
		times = append(times, o.o.BlockTime)
		if s, ok := since[o.key()]; !ok || o.day.Before(s) {
			since[o.key()] = o.day
		}
	}
	if h, ok := m.horizon[chain]; ok && len(changedO)+len(changedR) > 0 {
		for _, t := range times {
			if t.Before(h) {
				res.BeforeHorizon++
			}
		}
		res.PastPruned = from > 0 && from <= m.prunedBlock[chain]
	}
	res.Keys = len(since)
	for k, s := range since {
		m.rebuild(k, s)
	}
	return res
}

// rebuild is a reorg's rebuild of key k from day since on (extended to the day of its newest
// surviving observation, applied or not): every kept observation of those days is folded, every
// pruned one hidden.
func (m *balModel) rebuild(k store.Key, since time.Time) {
	var top *mObs
	for _, o := range m.byKey[k] {
		if !o.pruned && !m.void(o) && (top == nil || o.o.BlockNumber > top.o.BlockNumber) {
			top = o
		}
	}
	switch {
	case top == nil:
		since = time.Time{} // no observation survives: every day goes
	case top.day.Before(since):
		since = top.day
	}
	for _, o := range m.byKey[k] {
		if o.day.Before(since) {
			continue
		}
		if o.pruned {
			o.hidden = true
		} else {
			o.folded = true
		}
	}
}

// prune is one pruning pass: the horizons move (never back) to each chain's newest current
// block time less retention, then the rule of prune_observations.sql deletes. It returns the
// horizons written and how many observations went.
func (m *balModel) prune(retention time.Duration) (map[string]time.Time, int64) {
	chainTime := map[string]time.Time{}
	for k := range m.byKey {
		if c := m.current(k); c != nil && c.o.BlockTime.After(chainTime[k.Chain]) {
			chainTime[k.Chain] = c.o.BlockTime
		}
	}
	written := map[string]time.Time{}
	for c, t := range chainTime {
		h := t.Add(-retention)
		if old, ok := m.horizon[c]; ok && old.After(h) {
			h = old
		}
		m.horizon[c], written[c] = h, h
	}
	var gone []*mObs
	for _, o := range m.obs {
		if m.prunable(o) {
			gone = append(gone, o)
		}
	}
	for _, o := range gone {
		o.pruned = true
		o.hidden = m.void(o)
		if o.o.BlockNumber > m.prunedBlock[o.o.Chain] {
			m.prunedBlock[o.o.Chain] = o.o.BlockNumber
		}
	}
	return written, int64(len(gone))
}

// prunable is prune_observations.sql's rule for one kept observation.
func (m *balModel) prunable(o *mObs) bool {
	h, ok := m.horizon[o.o.Chain]
	if o.pruned || !ok || o.id > m.mark || !o.o.BlockTime.Before(h) {
		return false
	}
	if m.void(o) {
		return true
	}
	var succ *mObs
	for _, n := range m.byKey[o.key()] {
		if n.pruned || n.id > m.mark || m.void(n) || n.o.BlockNumber <= o.o.BlockNumber {
			continue
		}
		if succ == nil || n.o.BlockNumber < succ.o.BlockNumber {
			succ = n
		}
	}
	if succ != nil && succ.o.BlockTime.Before(h) {
		return true
	}
	for _, d := range m.byKey[o.key()] {
		if !d.pruned && d.id < o.id && d.o.BlockNumber == o.o.BlockNumber && d.o.BlockHash == o.o.BlockHash {
			return true
		}
	}
	return false
}

// twoCanonical names a block number of which two hashes carry observations and neither is
// orphaned: no chain has that (a sequence the minimiser shortens can, by leaving out the reorg
// between them), and the newest-by-block rules say nothing of which wins.
func (m *balModel) twoCanonical() string {
	seen := map[[2]string]string{}
	for _, o := range m.obs {
		if m.void(o) {
			continue
		}
		b := [2]string{o.o.Chain, fmt.Sprint(o.o.BlockNumber)}
		if h, ok := seen[b]; ok && h != o.o.BlockHash {
			return fmt.Sprintf("%s block %s has hashes %s and %s", b[0], b[1], h, o.o.BlockHash)
		}
		seen[b] = o.o.BlockHash
	}
	return ""
}
