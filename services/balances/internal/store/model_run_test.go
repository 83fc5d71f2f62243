package store_test

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// TestStoreAgainstModel runs random sequences of appends (in and out of block order, late,
// redelivered, of orphaned hashes), applier rounds of random sizes, reorgs (recent, deeper than
// the retention, redelivered), attribution changes (moves, no entity, tombstones, stale
// versions) and pruning passes against the store, and after every step compares what the
// store's reads answer with the model (model_test.go). A failing sequence is shortened to a
// minimal one that still fails, which the failure prints.
func TestStoreAgainstModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		ops := newModelGen(seed).ops(150)
		s := fresh(t)
		step, err := runModel(s, ops)
		if err == nil {
			continue
		}
		short := minimise(t, ops[:step+1])
		var b strings.Builder
		for i, op := range short {
			fmt.Fprintf(&b, "\n  %2d %s", i, op)
		}
		_, merr := runModel(fresh(t), short)
		t.Fatalf("seed %d, step %d: %v\nminimal sequence (%d steps):%s\nits failure: %v", seed, step, err, len(short), b.String(), merr)
	}
}

// minimise drops steps from a failing sequence while it still fails the same check.
func minimise(t *testing.T, ops []modelOp) []modelOp {
	_, err := runModel(fresh(t), ops)
	what := checkName(err)
	for chunk := len(ops) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(ops); {
			try := append(append([]modelOp{}, ops[:i]...), ops[i+chunk:]...)
			if _, err := runModel(fresh(t), try); err != nil && checkName(err) == what {
				ops = try
				continue
			}
			i++
		}
	}
	return ops
}

func checkName(err error) string {
	if err == nil {
		return ""
	}
	name, _, _ := strings.Cut(err.Error(), ":")
	return name
}

// runModel runs ops on s and the model and returns the first step after which they disagree.
func runModel(s *store.Store, ops []modelOp) (int, error) {
	ctx := context.Background()
	m := newBalModel()
	for i, op := range ops {
		if err := modelStep(ctx, s, m, op); err != nil {
			return i, err
		}
		if two := m.twoCanonical(); two != "" {
			return i, fmt.Errorf("invalid sequence: %s", two)
		}
		if err := compare(ctx, s, m, i); err != nil {
			return i, err
		}
	}
	return len(ops), nil
}

func modelStep(ctx context.Context, s *store.Store, m *balModel, op modelOp) error {
	switch op.kind {
	case opAppend:
		m.appendObs(op.obs)
		return s.AppendObservations(ctx, op.obs)
	case opApply:
		return applyStep(ctx, s, m, op.limit)
	case opReorg:
		want := m.reorg(op.chain, op.from, op.orphaned, op.canonical)
		got, err := s.ApplyReorg(ctx, op.chain, op.from, op.orphaned, op.canonical)
		if err == nil && got != want {
			err = fmt.Errorf("reorg result: store %+v, model %+v", got, want)
		}
		return err
	case opAttr:
		want := m.attributions(op.attrs)
		got, err := s.ApplyAttributions(ctx, op.attrs)
		if err == nil && got != want {
			err = fmt.Errorf("attributions moved: store %d, model %d", got, want)
		}
		return err
	default:
		horizons, n := m.prune(modelRetention)
		res, err := s.PrunePass(ctx, modelRetention, op.pages)
		if err != nil {
			return err
		}
		if res.Pruned != n || fmt.Sprint(utcTimes(res.Horizons)) != fmt.Sprint(horizons) {
			return fmt.Errorf("prune: store pruned %d with horizons %v, model %d with %v", res.Pruned, res.Horizons, n, horizons)
		}
		return nil
	}
}

func utcTimes(m map[string]time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for k, v := range m {
		out[k] = v.UTC()
	}
	return out
}

// applyStep runs applier rounds of limit observations (0: rounds of 1,000 until none waits).
func applyStep(ctx context.Context, s *store.Store, m *balModel, limit int) error {
	for {
		n := limit
		if n == 0 {
			n = 1000
		}
		wantTaken := min(n, m.backlog())
		wantFresh := m.applyPending(wantTaken)
		taken, fresh, err := s.ApplyPending(ctx, n)
		if err != nil {
			return err
		}
		if taken != wantTaken || fresh != wantFresh {
			return fmt.Errorf("apply round: store took %d (%d not void), model %d (%d)", taken, fresh, wantTaken, wantFresh)
		}
		if limit > 0 || taken == 0 {
			return nil
		}
	}
}

// figures renders per (chain, token) values, leaving zeros out, sorted.
type figures map[[2]string]*big.Int

func (f figures) add(chain, token string, v *big.Int) {
	if x, ok := f[[2]string{chain, token}]; ok {
		x.Add(x, v)
		return
	}
	f[[2]string{chain, token}] = new(big.Int).Set(v)
}

func (f figures) String() string {
	var out []string
	for k, v := range f {
		if v.Sign() != 0 {
			out = append(out, fmt.Sprintf("%s/%s=%s", k[0], tokenName(k[1]), v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func holdingFigures(hs []store.Holding) figures {
	f := figures{}
	for _, h := range hs {
		f.add(h.Chain, h.Token, h.Balance)
	}
	return f
}

// series renders the balance at the end of every day of days from day-over-day changes.
func changeSeries(cs []store.Change, days []time.Time) string {
	var out []string
	for _, d := range days {
		f := figures{}
		for _, c := range cs {
			if !c.Day.After(d) {
				f.add(c.Chain, c.Token, c.Delta)
			}
		}
		if s := f.String(); s != "" {
			out = append(out, d.Format("01-02")+":"+s)
		}
	}
	return strings.Join(out, "; ")
}

// modelSeries renders the model's snapshots of the keys of addrs like changeSeries.
func (m *balModel) series(addrs []string, days []time.Time) string {
	var out []string
	for _, d := range days {
		if s := m.sumAt(addrs, d).String(); s != "" {
			out = append(out, d.Format("01-02")+":"+s)
		}
	}
	return strings.Join(out, "; ")
}

// sumAt sums the snapshots of addrs at the end of day d (far in the future: the last).
func (m *balModel) sumAt(addrs []string, d time.Time) figures {
	f := figures{}
	for _, a := range addrs {
		for _, c := range modelChains {
			for _, tok := range modelTokens {
				f.add(c, tok, snapAt(m.points(store.Key{Chain: c, Address: a, Token: tok}), d))
			}
		}
	}
	return f
}

// currentSum sums the current balances of addrs (only positive ones, as the reads do).
func (m *balModel) currentSum(addrs []string) figures {
	f := figures{}
	for _, a := range addrs {
		for _, c := range modelChains {
			for _, tok := range modelTokens {
				if o := m.current(store.Key{Chain: c, Address: a, Token: tok}); o != nil && o.o.Balance.Sign() > 0 {
					f.add(c, tok, o.o.Balance)
				}
			}
		}
	}
	return f
}

// days is every UTC day from the day before the first block to the day after the newest
// observation.
func (m *balModel) days() []time.Time {
	last := store.Day(modelStart)
	for _, o := range m.obs {
		if o.day.After(last) {
			last = o.day
		}
	}
	var out []time.Time
	for d := store.Day(modelStart).AddDate(0, 0, -1); !d.After(last.AddDate(0, 0, 1)); d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

func modelRefs(addrs []string) []store.Ref {
	out := make([]store.Ref, len(addrs))
	for i, a := range addrs {
		out[i] = store.Ref{ChainType: "evm", Address: a}
	}
	return out
}

func same(what, got, want string) error {
	if got != want {
		return fmt.Errorf("%s:\n    store %s\n    model %s", what, got, want)
	}
	return nil
}

// compare checks every read of the store against the model.
func compare(ctx context.Context, s *store.Store, m *balModel, i int) error {
	backlog, err := s.Backlog(ctx)
	if err != nil {
		return err
	}
	if err := same("backlog", fmt.Sprint(backlog), fmt.Sprint(m.backlog())); err != nil {
		return err
	}
	days := m.days()
	for a := range modelAddrs {
		if err := compareAddresses(ctx, s, m, []string{modelAddr(a)}, days); err != nil {
			return err
		}
	}
	set := []string{modelAddr(i % modelAddrs), modelAddr((i + 3) % modelAddrs), modelAddr((i + 7) % modelAddrs)}
	if err := compareAddresses(ctx, s, m, set, days); err != nil {
		return err
	}
	for _, e := range modelEntities {
		if err := compareEntity(ctx, s, m, e, days, days[i%len(days)]); err != nil {
			return err
		}
	}
	return compareHolders(ctx, s, m, i)
}

// compareAddresses checks the current balances and the history of a set of addresses (one
// address, or a user entity's).
func compareAddresses(ctx context.Context, s *store.Store, m *balModel, addrs []string, days []time.Time) error {
	var got figures
	if len(addrs) == 1 {
		hs, err := s.AddressBalances(ctx, addrs[0], modelChains)
		if err != nil {
			return err
		}
		got = holdingFigures(hs)
	} else {
		hs, err := s.SetBalances(ctx, modelRefs(addrs), modelChains)
		if err != nil {
			return err
		}
		got = holdingFigures(hs)
	}
	if err := same(fmt.Sprintf("current balances of %v", addrs), got.String(), m.currentSum(addrs).String()); err != nil {
		return err
	}
	cs, err := s.SetChanges(ctx, modelRefs(addrs), modelChains)
	if err != nil {
		return err
	}
	return same(fmt.Sprintf("history of %v", addrs), changeSeries(cs, days), m.series(addrs, days))
}

// compareEntity checks an operator entity's members, maintained totals, summed addresses,
// history, and its balances at the end of day (summed up and counted back).
func compareEntity(ctx context.Context, s *store.Store, m *balModel, e string, days []time.Time, day time.Time) error {
	members := m.members(e)
	gotMembers, err := s.EntityMembers(ctx, e, []string{"evm"}, 100)
	if err != nil {
		return err
	}
	var gm []string
	for _, r := range gotMembers {
		gm = append(gm, r.Address)
	}
	if err := same("members of "+e, fmt.Sprint(gm), fmt.Sprint(members)); err != nil {
		return err
	}
	reads := []struct {
		what string
		read func() ([]store.Holding, error)
		want figures
	}{
		{"totals of " + e, func() ([]store.Holding, error) { return s.EntityBalances(ctx, e, modelChains) }, m.currentSum(members)},
		{"summed addresses of " + e, func() ([]store.Holding, error) { return s.SummedEntityBalances(ctx, e, modelChains) }, m.currentSum(members)},
		{fmt.Sprintf("%s at %s", e, day.Format("01-02")), func() ([]store.Holding, error) { return s.EntityBalancesAt(ctx, e, modelChains, day) }, m.sumAt(members, day)},
		{fmt.Sprintf("%s back at %s", e, day.Format("01-02")), func() ([]store.Holding, error) { return s.EntityBalancesBack(ctx, e, modelChains, day) }, m.sumAt(members, day)},
	}
	for _, r := range reads {
		hs, err := r.read()
		if err != nil {
			return err
		}
		if err := same(r.what, holdingFigures(hs).String(), r.want.String()); err != nil {
			return err
		}
	}
	if err := compareRanking(ctx, s, m, e, members, day); err != nil {
		return err
	}
	cs, err := s.EntityChanges(ctx, e, modelChains)
	if err != nil {
		return err
	}
	return same("history of "+e, changeSeries(cs, days), m.series(members, days))
}

// compareRanking checks the entity's rows of the balance ranking (read_entity_ranking.sql):
// its totals now and at the end of day, and no row zero both now and then.
func compareRanking(ctx context.Context, s *store.Store, m *balModel, e string, members []string, day time.Time) error {
	rows, err := s.EntityRanking(ctx, store.RankingQuery{Chains: modelChains, Day: day, EntityIDs: []string{e}})
	if err != nil {
		return err
	}
	now, prev := figures{}, figures{}
	for _, r := range rows {
		if r.Entity != e || r.Now.Sign() == 0 && r.Prev.Sign() == 0 {
			return fmt.Errorf("ranking of %s: row %+v", e, r)
		}
		now.add(r.Chain, r.Token, r.Now)
		prev.add(r.Chain, r.Token, r.Prev)
	}
	if err := same("ranking of "+e+" now", now.String(), m.currentSum(members).String()); err != nil {
		return err
	}
	return same(fmt.Sprintf("ranking of %s at %s", e, day.Format("01-02")), prev.String(), m.sumAt(members, day).String())
}

// compareHolders checks every token's supply, address holders (with their entities) and
// entity holders on both chains, and one page further down.
func compareHolders(ctx context.Context, s *store.Store, m *balModel, i int) error {
	var keys [][2]string
	for _, c := range modelChains {
		for _, tok := range modelTokens {
			keys = append(keys, [2]string{c, tok})
		}
	}
	pages, err := s.HolderPages(ctx, store.HolderQuery{Keys: keys, Now: time.Now(), Limit: 100, Entities: true})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := same(fmt.Sprintf("holders of %s/%s", k[0], tokenName(k[1])), renderPage(pages.Pages[k]), renderPage(m.holders(k, 100, 0))); err != nil {
			return err
		}
	}
	k := keys[i%len(keys)]
	paged, err := s.HolderPages(ctx, store.HolderQuery{Keys: [][2]string{k}, Now: time.Now(), Limit: 2, Offset: 1, Entities: true})
	if err != nil {
		return err
	}
	return same(fmt.Sprintf("holders of %s/%s limit 2 offset 1", k[0], tokenName(k[1])), renderPage(paged.Pages[k]), renderPage(m.holders(k, 2, 1)))
}

func renderPage(p store.HolderPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "supply %s; addresses", p.Supply)
	for _, r := range p.Addresses {
		e := "-"
		if v, ok := p.Attrs[store.Ref{ChainType: "evm", Address: r.ID}]; ok && v.Entity != nil {
			e = v.Entity.ID
		}
		fmt.Fprintf(&b, " %s(%s)=%s", r.ID[len(r.ID)-2:], e, r.Balance)
	}
	b.WriteString("; entities")
	for _, r := range p.Entities {
		fmt.Fprintf(&b, " %s=%s", r.ID, r.Balance)
	}
	return b.String()
}

// holders is the model's page of a token's holders on a chain.
func (m *balModel) holders(k [2]string, limit, offset int) store.HolderPage {
	p := store.HolderPage{Supply: new(big.Int), Attrs: map[store.Ref]store.AttributionView{}}
	var addrs []store.Ranked
	for a := range modelAddrs {
		addr := modelAddr(a)
		o := m.current(store.Key{Chain: k[0], Address: addr, Token: k[1]})
		if o == nil {
			continue
		}
		p.Supply.Add(p.Supply, o.o.Balance)
		if o.o.Balance.Sign() > 0 {
			addrs = append(addrs, store.Ranked{ID: addr, Balance: o.o.Balance})
		}
		if at, ok := m.attrs[addr]; ok && at.entity != "" {
			p.Attrs[store.Ref{ChainType: "evm", Address: addr}] = store.AttributionView{Entity: &store.Entity{ID: at.entity}}
		}
	}
	var ents []store.Ranked
	for _, e := range modelEntities {
		if v := m.currentSum(m.members(e))[k]; v != nil && v.Sign() > 0 {
			ents = append(ents, store.Ranked{ID: e, Balance: v})
		}
	}
	p.Addresses, p.Entities = rankPage(addrs, limit, offset), rankPage(ents, limit, offset)
	return p
}

// rankPage sorts by balance, largest first, ties by id, and cuts a page.
func rankPage(rs []store.Ranked, limit, offset int) []store.Ranked {
	sort.Slice(rs, func(i, j int) bool {
		if c := rs[i].Balance.Cmp(rs[j].Balance); c != 0 {
			return c > 0
		}
		return rs[i].ID < rs[j].ID
	})
	if offset >= len(rs) {
		return nil
	}
	return rs[offset:min(len(rs), offset+limit)]
}
