package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// keptWorld is a random world for top_flow's kept sums: two chains, three deployments (two on
// ethereum, so one chain's rank groups two contracts), 12 addresses (many ties in flow, ordered by
// chain and address), amounts in quarters (sums exact in any order, so answers compare exactly).
type keptWorld struct {
	r     *rand.Rand
	clock atomic.Int64
	seq   int
}

func (w *keptWorld) now() time.Time { return time.Unix(0, w.clock.Load()).UTC() }

var keptDeps = []app.Deployment{{Chain: "ethereum", Address: "0xt"}, {Chain: "base", Address: "0xt"}, {Chain: "ethereum", Address: "0xv"}}

// flows are n transfers in hours [from, to) of the world's deployments, in blocks of 5.
func (w *keptWorld) flows(from, to time.Time, n int) []app.Flow {
	fs := make([]app.Flow, n)
	hours := int(to.Sub(from) / time.Hour)
	for i := range fs {
		d := keptDeps[w.r.IntN(len(keptDeps))]
		h := from.Add(time.Duration(w.r.IntN(hours)) * time.Hour)
		w.seq++
		fs[i] = app.Flow{Chain: d.Chain, ID: fmt.Sprintf("0xk%d_0", w.seq), ChainType: "evm",
			BlockHash: fmt.Sprintf("0xblk%s%d_%d", d.Chain, h.Unix(), w.r.IntN(3)), Time: h.Add(time.Duration(w.r.IntN(60)) * time.Minute),
			Token: d.Address, From: fmt.Sprintf("0xa%02d", w.r.IntN(12)), To: fmt.Sprintf("0xa%02d", w.r.IntN(12)),
			Value: float64(w.r.IntN(40)) / 4, USD: float64(w.r.IntN(20)) / 4}
	}
	return fs
}

// sameTopFlows compares the kept store's answers with top_flow.sql's (the store keeping none)
// for each deployment set, window start and limit, and returns how many came from kept sums.
func sameTopFlows(t *testing.T, kept, plain *Store, froms []time.Time, step string) int {
	t.Helper()
	ctx := context.Background()
	before := kept.tf.hits.Load()
	sets := [][]app.Deployment{keptDeps, keptDeps[:1], keptDeps[1:2], {keptDeps[2], keptDeps[0]}}
	for _, deps := range sets {
		for _, from := range froms {
			for _, limit := range []int{1, 3, 8, 50} {
				got, err := kept.TopFlows(ctx, deps, from, limit)
				if err != nil {
					t.Fatal(err)
				}
				want, err := plain.TopFlows(ctx, deps, from, limit)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %v from %s limit %d:\n got %+v\nwant %+v", step, deps, from, limit, got, want)
				}
			}
		}
	}
	return int(kept.tf.hits.Load() - before)
}

// TestKeptTopFlowsEqualStatement: top_flow answered from kept sums equals top_flow.sql after
// every step of random worlds: batches of open and closed hours, hour closes (kept sums then
// behind a close, and read again), late copies of closed hours, a reorg of closed and open hours
// and back, class changes, the clock's next hour; answers come from the kept sums once read, and
// never from sums whose closed rows changed.
func TestKeptTopFlowsEqualStatement(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for seed := range uint64(3) {
		emptyFlows(t, pool)
		w := &keptWorld{r: rand.New(rand.NewPCG(seed, 7))}
		w.clock.Store(closeClock.UnixNano())
		// no rebuild interval: the steps read the sums again at the same instant of the clock
		kept := New(pool, Retention(0, w.now), KeepTopFlows(1, 1<<20), TopFlowRebuildInterval(0))
		plain := New(pool, Retention(0, w.now), KeepTopFlows(0, 0))
		hour := closeClock.Truncate(time.Hour)
		froms := []time.Time{hour.Add(-24 * time.Hour), hour.Add(-3 * time.Hour), hour.Add(-7 * 24 * time.Hour), hour}
		apply := func(fs []app.Flow) {
			t.Helper()
			if err := kept.ApplyFlows(ctx, fs); err != nil {
				t.Fatal(err)
			}
		}
		refresh := func() {
			t.Helper()
			if _, err := kept.RefreshTopFlows(ctx); err != nil {
				t.Fatal(err)
			}
		}
		apply(w.flows(hour.Add(-30*time.Hour), hour.Add(time.Hour), 400))
		if _, err := kept.CloseHours(ctx); err != nil {
			t.Fatal(err)
		}
		sameTopFlows(t, kept, plain, froms, "closed, nothing kept yet")
		refresh()
		if n := sameTopFlows(t, kept, plain, froms, "kept"); n == 0 {
			t.Fatalf("seed %d: no answer came from kept sums", seed)
		}
		apply(w.flows(hour, hour.Add(time.Hour), 60)) // open hour
		sameTopFlows(t, kept, plain, froms, "open hour's batch")
		late := w.flows(hour.Add(-5*time.Hour), hour, 30)
		apply(late)
		if n := sameTopFlows(t, kept, plain, froms[:2], "late copies of closed hours"); n != 0 {
			t.Fatalf("seed %d: %d answers from kept sums whose closed rows changed", seed, n)
		}
		refresh()
		sameTopFlows(t, kept, plain, froms, "kept again after late copies")
		// a reorg orphaning a block of a closed hour and one of the open hour, its ids moved to
		// other blocks (copies first stored uncounted), then the reorg back
		moved := []app.Flow{}
		for _, f := range late[:10] {
			f.BlockHash += "r"
			moved = append(moved, f)
		}
		apply(moved)
		orphaned := []string{late[0].BlockHash, late[1].BlockHash}
		if err := kept.ApplyReorg(ctx, late[0].Chain, orphaned, nil); err != nil {
			t.Fatal(err)
		}
		sameTopFlows(t, kept, plain, froms, "reorg")
		refresh()
		sameTopFlows(t, kept, plain, froms, "kept after the reorg")
		if err := kept.ApplyReorg(ctx, late[0].Chain, nil, orphaned); err != nil {
			t.Fatal(err)
		}
		sameTopFlows(t, kept, plain, froms, "reorg back")
		if err := kept.ApplyClasses(ctx, []app.ClassChange{{ChainType: "evm", Address: "0xa03", EntityType: "cex", SetsEntity: true, Version: 1,
			Info: &app.AddressAttribution{Label: "X hot wallet"}}}); err != nil {
			t.Fatal(err)
		}
		sameTopFlows(t, kept, plain, froms, "class change")
		// the next hour: its transfers, the hour before closed; the kept sums are behind that
		// close (answers read the hour from market.flows) until read again
		refresh()
		w.clock.Store(closeClock.Add(time.Hour).UnixNano())
		apply(w.flows(hour.Add(time.Hour), hour.Add(2*time.Hour), 50))
		if _, err := kept.CloseHours(ctx); err != nil {
			t.Fatal(err)
		}
		if n := sameTopFlows(t, kept, plain, froms, "behind a close"); n == 0 {
			t.Fatalf("seed %d: kept sums behind a close were not used", seed)
		}
		refresh()
		next := append(froms, hour.Add(-23*time.Hour), hour.Add(-2*time.Hour))
		sameTopFlows(t, kept, plain, next, "next hour")
		refresh()
		sameTopFlows(t, kept, plain, next, "next hour, kept")
	}
}

// TestFlowMergeTopEqualsSorting: the merge of random open transfers into random kept sums gives
// the first limit rows of sorting every address's total, ties (quarters, few values) by chain
// rank and address, for limits below, at and above the number of addresses; an address whose
// sums are all zero (transfers of nothing) is left out.
func TestFlowMergeTopEqualsSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for round := range 300 {
		key := func() addrKey { return addrKey{n: int32(1 + r.IntN(2)), addr: fmt.Sprintf("0x%02d", r.IntN(30))} }
		q := func() float64 { return float64(r.IntN(6)) / 4 }
		all := map[addrKey]flowSum{}
		e := &keptFlows{index: []map[string]int32{{}, {}}}
		for range r.IntN(40) {
			k := key()
			if _, ok := all[k]; ok {
				continue
			}
			s := flowSum{inUSD: q(), inValue: q(), outUSD: q(), outValue: q()}
			if s == (flowSum{}) {
				continue // top_flow_closed.sql keeps no address whose sums are all zero
			}
			all[k] = s
			e.rows = append(e.rows, flowRow{key: k, sum: s, total: s.inUSD + s.outUSD})
		}
		slices.SortFunc(e.rows, flowRowCmp)
		for i, row := range e.rows {
			e.index[row.key.n-1][row.key.addr] = int32(i)
		}
		m := newFlowMerge(e)
		m.transfers = 1 // the window counts transfers; no volume: only exact zeros are zero
		for range r.IntN(30) {
			n, from, to, usd, value := int32(1+r.IntN(2)), fmt.Sprintf("0x%02d", r.IntN(30)), fmt.Sprintf("0x%02d", r.IntN(30)), q(), q()
			m.add(n, []byte(to), flowSum{inUSD: usd, inValue: value})
			m.add(n, []byte(from), flowSum{outUSD: usd, outValue: value})
			for _, l := range []struct {
				k addrKey
				d flowSum
			}{{addrKey{n, to}, flowSum{inUSD: usd, inValue: value}}, {addrKey{n, from}, flowSum{outUSD: usd, outValue: value}}} {
				s := all[l.k]
				s.add(l.d)
				all[l.k] = s
			}
		}
		var want []flowRow
		for k, s := range all {
			if s != (flowSum{}) { // moved nothing: left out, as top_flow.sql leaves it out
				want = append(want, flowRow{key: k, sum: s, total: s.inUSD + s.outUSD})
			}
		}
		slices.SortFunc(want, flowRowCmp)
		for _, limit := range []int{1, 2, 5, len(all), len(all) + 3} {
			if limit == 0 {
				continue
			}
			got := m.top(limit)
			if w := want[:min(limit, len(want))]; !reflect.DeepEqual(got, w) && len(got)+len(w) > 0 {
				t.Fatalf("round %d limit %d:\n got %+v\nwant %+v", round, limit, got, w)
			}
		}
	}
}

// TestKeptTopFlowsBesideWritesAndRefresh: requests and the refresh loop running beside batches
// of open and closed hours and closes (under -race, the kept sums' sharing). Each answer given
// while they run equals top_flow.sql's over one of the states the writes went through while it
// ran: a batch is one transaction, a close changes no answer (amounts in quarters sum exactly
// in any order), and the writer computes top_flow.sql's answers after each batch before the
// next, so a request that began after batch a was counted and ended before batch b+1 was
// counted (b+1 may have committed before its count) equals one of batches a..b+1's. Then answers
// equal top_flow.sql's, and come from the kept sums once read again.
func TestKeptTopFlowsBesideWritesAndRefresh(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	w := &keptWorld{r: rand.New(rand.NewPCG(9, 9))}
	w.clock.Store(closeClock.UnixNano())
	kept := New(pool, Retention(0, w.now), KeepTopFlows(1, 1<<20), TopFlowRebuildInterval(0))
	plain := New(pool, Retention(0, w.now), KeepTopFlows(0, 0))
	hour := closeClock.Truncate(time.Hour)
	froms := []time.Time{hour.Add(-24 * time.Hour), hour.Add(-3 * time.Hour)}
	if err := kept.ApplyFlows(ctx, w.flows(hour.Add(-30*time.Hour), hour.Add(time.Hour), 300)); err != nil {
		t.Fatal(err)
	}
	var expected [][][]app.AddressFlow // per batch applied, per window start: top_flow.sql's answer
	expect := func() {
		t.Helper()
		var ws [][]app.AddressFlow
		for _, from := range froms {
			want, err := plain.TopFlows(ctx, keptDeps, from, 5)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, want)
		}
		expected = append(expected, ws)
	}
	expect()
	var applied atomic.Int64
	type answer struct {
		from, first, last int
		got               []app.AddressFlow
	}
	var answers []answer
	stop := make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			case <-kept.TopFlowsWake(): // as the service's loop, without its interval
			}
			if _, err := kept.RefreshTopFlows(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			first := int(applied.Load())
			got, err := kept.TopFlows(ctx, keptDeps, froms[i%2], 5)
			if err != nil {
				errs <- err
				return
			}
			answers = append(answers, answer{from: i % 2, first: first, last: int(applied.Load()) + 1, got: got})
		}
	}()
	batches := [][]app.Flow{}
	for range 6 {
		batches = append(batches, w.flows(hour.Add(-6*time.Hour), hour.Add(time.Hour), 20))
	}
	for _, fs := range batches {
		if err := kept.ApplyFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		expect()
		applied.Add(1)
		if _, err := kept.CloseHours(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range froms {
		if reflect.DeepEqual(expected[0][i], expected[len(expected)-1][i]) {
			t.Fatalf("the batches left top_flow from %s unchanged: nothing compared", froms[i])
		}
	}
	for _, a := range answers {
		ok := false
		for s := a.first; s <= min(a.last, len(expected)-1) && !ok; s++ {
			ok = reflect.DeepEqual(a.got, expected[s][a.from])
		}
		if !ok {
			t.Fatalf("an answer from %s between batches %d and %d equals none of top_flow.sql's:\n got %+v",
				froms[a.from], a.first, a.last, a.got)
		}
	}
	t.Logf("%d answers beside the writes, each equal to top_flow.sql's of a state they ran in", len(answers))
	sameTopFlows(t, kept, plain, froms, "after writes beside requests and refreshes")
	if _, err := kept.RefreshTopFlows(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sameTopFlows(t, kept, plain, froms, "read again"); n == 0 {
		t.Fatal("no answer came from kept sums")
	}
}

// TestKeptTopFlowsBuildBackoff (the clock injected): a set whose read fails is not read again
// before its retry (a minute, then two), its requests answered by top_flow.sql without waking
// the loop, while the other set of the same pass is read and answers from its sums; once the
// read succeeds its answers come from the sums. Sums a late copy left behind are read again at
// most once per rebuild interval, requests in between answered by top_flow.sql.
func TestKeptTopFlowsBuildBackoff(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	w := &keptWorld{r: rand.New(rand.NewPCG(11, 3))}
	t0 := closeClock
	w.clock.Store(t0.UnixNano())
	kept := New(pool, Retention(0, w.now), KeepTopFlows(1, 1<<20), TopFlowRebuildInterval(time.Minute))
	plain := New(pool, Retention(0, w.now), KeepTopFlows(0, 0))
	hour := t0.Truncate(time.Hour)
	if err := kept.ApplyFlows(ctx, w.flows(hour.Add(-30*time.Hour), hour.Add(time.Hour), 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	failing, good := keptDeps[:1], keptDeps
	failKey := setKey(deploymentArrays(failing))
	calls := map[string]int{}
	fail := true
	read := kept.tf.read
	kept.tf.read = func(ctx context.Context, chains, tokens []string, from time.Time) (*keptFlows, error) {
		k := setKey(chains, tokens)
		calls[k]++
		if k == failKey && fail {
			return nil, fmt.Errorf("injected failure")
		}
		return read(ctx, chains, tokens, from)
	}
	from := hour.Add(-24 * time.Hour)
	ask := func(deps []app.Deployment, fromKept bool, step string) {
		t.Helper()
		before := kept.tf.hits.Load()
		got, err := kept.TopFlows(ctx, deps, from, 8)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.TopFlows(ctx, deps, from, 8)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v:\n got %+v\nwant %+v", step, deps, got, want)
		}
		if hit := kept.tf.hits.Load() > before; hit != fromKept {
			t.Fatalf("%s: %v answered from kept sums %v, want %v", step, deps, hit, fromKept)
		}
	}
	refresh := func(at time.Duration, wantFailed, wantReads int, step string) TopFlowsRefreshed {
		t.Helper()
		w.clock.Store(t0.Add(at).UnixNano())
		r, err := kept.RefreshTopFlows(ctx)
		if (err != nil) != (wantFailed > 0) || r.Failed != wantFailed {
			t.Fatalf("%s: %+v, error %v; want %d failed", step, r, err, wantFailed)
		}
		if calls[failKey] != wantReads {
			t.Fatalf("%s: the failing set read %d times, want %d", step, calls[failKey], wantReads)
		}
		return r
	}
	ask(failing, false, "first request")
	ask(good, false, "first request")
	if r := refresh(0, 1, 1, "first pass"); r.Built != 1 {
		t.Fatalf("first pass: %+v, want the other set read", r)
	}
	ask(good, true, "the other set kept")
	select {
	case <-kept.TopFlowsWake():
	default:
	}
	ask(failing, false, "before the retry")
	select {
	case <-kept.TopFlowsWake():
		t.Fatal("a request for a set waiting for its retry woke the loop")
	default:
	}
	refresh(0, 0, 1, "same instant")
	refresh(59*time.Second, 0, 1, "before the retry")
	refresh(time.Minute, 1, 2, "at the retry")
	refresh(2*time.Minute, 0, 2, "before the second retry (two minutes)")
	fail = false
	refresh(3*time.Minute, 0, 3, "at the second retry")
	ask(failing, true, "read at last")

	// a late copy of closed hours: the sums read at 3m are read again from 4m on
	if err := kept.ApplyFlows(ctx, w.flows(hour.Add(-5*time.Hour), hour, 30)); err != nil {
		t.Fatal(err)
	}
	ask(failing, false, "behind a late copy")
	refresh(3*time.Minute+30*time.Second, 0, 3, "within the rebuild interval")
	ask(failing, false, "behind a late copy, not read again yet")
	refresh(4*time.Minute, 0, 4, "after the rebuild interval")
	ask(failing, true, "read again")
}
