package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

const (
	a3 = "0x3333333333333333333333333333333333333333"
	a4 = "0x4444444444444444444444444444444444444444"
)

// derived dumps every table a public answer reads (current balances, holders, supply, address
// and entity snapshots), whole and in a fixed order.
func derived(t *testing.T, s *store.Store) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"current", "address_daily", "entity_change", "entity_current", "token_supply", "top_holders", "top_floor"} {
		// The table names are this list's constants, not input.
		fmt.Fprintf(&b, "%s:\n%s\n", table, state(t, s, `SELECT coalesce(string_agg(r::text, E'\n' ORDER BY r::text), '') FROM balances.`+table+` r`))
	}
	return b.String()
}

// kept lists the stored observations (address, token, block, hash), one line per row, copies
// included.
func kept(t *testing.T, s *store.Store) string {
	return state(t, s, `SELECT coalesce(string_agg(concat_ws(' ', right(address, 2), coalesce(nullif(token, ''), '-'), block_number, block_hash),
		E'\n' ORDER BY address, token, block_number, block_hash), '') FROM balances.observations`)
}

// The pruning world on chain ethereum, day d at day0 + d days; entity x holds a2 and a4. Chain
// time ends at day 6 (block 21), so with a retention of 72 h the horizon is day 3: blocks 9 to
// 14 are before it, 20 to 22 after. Block 14 (before) and block 22 (after) are orphaned; blocks
// 11 and 13 of a1 are delivered twice; block 9 of a1 arrives late.
func pruneWorld(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	d := func(days, hours int) time.Time { return day0.Add(time.Duration(days*24+hours) * time.Hour) }
	x := &store.Entity{ID: "x", Name: "X", Type: "cex"}
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a2, Entity: x, Version: 1}, {ChainType: "evm", Address: a4, Entity: x, Version: 1}}))
	must(s.WriteObservations(ctx, []store.Observation{
		obs(a1, "", 10, d(0, 0), "100"), obs(a1, "", 11, d(1, 0), "110"), obs(a1, "", 12, d(2, 0), "120"), obs(a1, "", 13, d(2, 1), "130"),
		obs(a2, tok, 10, d(0, 0), "5"), obs(a2, tok, 12, d(2, 0), "7"),
		obs(a3, "", 11, d(1, 0), "1000"),
		obs(a4, "", 10, d(0, 0), "40"), obs(a4, "", 14, d(2, 2), "44"), obs(a1, "", 14, d(2, 2), "140"),
	}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 11, d(1, 0), "110"), obs(a1, "", 13, d(2, 1), "130")}))
	must(s.WriteObservations(ctx, []store.Observation{
		obs(a1, "", 20, d(5, 0), "200"), obs(a1, "", 21, d(6, 0), "210"),
		obs(a2, tok, 20, d(5, 0), "9"), obs(a2, tok, 22, d(6, 1), "11"),
		obs(a4, "", 20, d(5, 0), "45"),
	}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 9, d(0, -1), "90")}))
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(14), hashOf(22)}, nil))
}

// pruneReorgs are reorgs after the pruning: every observation of a1, a2 and a4 after the horizon
// is orphaned, so each falls back to its newest surviving observation before it (the kept base),
// then block 22 becomes canonical again. It returns the derived tables after each step.
func pruneReorgs(t *testing.T, s *store.Store) []string {
	t.Helper()
	ctx := context.Background()
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(20), hashOf(21)}, nil))
	out := []string{derived(t, s)}
	must(s.ApplyReorg(ctx, "ethereum", 0, nil, []string{hashOf(22)}))
	return append(out, derived(t, s))
}

const horizon = 72 * time.Hour

// Pruning deletes exactly the applied observations before the horizon that are void, redelivered
// copies or superseded by a newer surviving one before it; every table a public answer reads is
// unchanged; a second pass deletes nothing; and reorgs after the pruning (falling back to the
// kept bases, then restoring an orphaned block after the horizon) give what they give without
// pruning.
func TestPruneKeepsEveryAnswer(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	before, all := derived(t, s), kept(t, s)
	unprunedReorgs := pruneReorgs(t, s)

	s = fresh(t)
	pruneWorld(t, s)
	if got := kept(t, s); got != all {
		t.Fatalf("the world is not the same twice:\n%s\nwant\n%s", got, all)
	}
	res := must(s.PrunePass(ctx, horizon, 1))
	if want := day0.Add(72 * time.Hour); !res.Horizons["ethereum"].Equal(want) || len(res.Horizons) != 1 {
		t.Fatalf("horizons = %v, want ethereum at %s", res.Horizons, want)
	}
	if res.Pruned != 9 {
		t.Errorf("pruned %d, want 9", res.Pruned)
	}
	// a1: the late block 9, 10, both copies of 11, 12 (superseded by 13), 13's second copy and
	// the void 14 go; 13 is its base. a2: 10 goes, 12 is its base, the void 22 is after the
	// horizon. a3: its only observation is its base. a4: the void 14 goes, 10 is its base.
	want := strings.Join([]string{
		"11 - 13 " + hashOf(13), "11 - 20 " + hashOf(20), "11 - 21 " + hashOf(21),
		"22 " + tok[40:] + " 12 " + hashOf(12), "22 " + tok[40:] + " 20 " + hashOf(20), "22 " + tok[40:] + " 22 " + hashOf(22),
		"33 - 11 " + hashOf(11),
		"44 - 10 " + hashOf(10), "44 - 20 " + hashOf(20),
	}, "\n")
	if got := kept(t, s); got != strings.ReplaceAll(want, tok[40:], tok) {
		t.Fatalf("kept after pruning:\n%s\nwant\n%s", got, strings.ReplaceAll(want, tok[40:], tok))
	}
	if got := derived(t, s); got != before {
		t.Fatalf("pruning changed an answer:\n%s\nwant\n%s", got, before)
	}
	again := must(s.PrunePass(ctx, horizon, 1))
	if again.Pruned != 0 || kept(t, s) != strings.ReplaceAll(want, tok[40:], tok) || derived(t, s) != before {
		t.Fatalf("a second pass pruned %d", again.Pruned)
	}
	for i, got := range pruneReorgs(t, s) {
		if got != unprunedReorgs[i] {
			t.Fatalf("reorg %d after pruning:\n%s\nwithout pruning:\n%s", i, got, unprunedReorgs[i])
		}
	}
	if got := current(t, s, a1, ""); got != "130" {
		t.Fatalf("a1 fell back to %s, want its base 130", got)
	}
}

// The comparison above can fail: with a key's newest surviving observation before the horizon
// (its base) deleted, the reorg falling back to it gives another answer.
func TestPruneBaseIsNeeded(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	unprunedReorgs := pruneReorgs(t, s)

	s = fresh(t)
	pruneWorld(t, s)
	must(s.PrunePass(ctx, horizon, 1))
	if _, err := s.Pool().Exec(ctx, `DELETE FROM balances.observations WHERE address = $1 AND block_number = 13`, a1); err != nil {
		t.Fatal(err)
	}
	if got := pruneReorgs(t, s); got[0] == unprunedReorgs[0] {
		t.Fatal("the reorg gave the same answer without a1's base")
	}
	if got := state(t, s, `SELECT count(*)::text FROM balances.current WHERE address = $1`, a1); got != "0" {
		t.Fatalf("a1 without its base has %s current rows, want none", got)
	}
}

// A chain with no horizon yet (none computed) keeps everything, and a horizon never moves back:
// after a reorg lowers the chain time, the stored horizon stays.
func TestPruneHorizonNeverMovesBack(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	if n := must(s.PruneRange(ctx, 0, 1000)); n != 0 {
		t.Fatalf("pruned %d with no horizon", n)
	}
	first := must(s.PrunePass(ctx, horizon, 1)).Horizons["ethereum"]
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(21)}, nil)) // chain time back to day 5
	res := must(s.PrunePass(ctx, horizon, 1))
	if _, ok := res.Horizons["ethereum"]; !ok || !res.Horizons["ethereum"].Equal(first) {
		t.Fatalf("horizon after the reorg = %v, want %s", res.Horizons, first)
	}
}

// concurrentWorld appends ten days of observations of 60 keys (three a day, every third day's
// batch twice), applies them in rounds of 500, and orphans a block of day 2 and one of day 9
// when they are new; after each day it calls after(day).
func concurrentWorld(t *testing.T, s *store.Store, after func(day int)) {
	t.Helper()
	ctx := context.Background()
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: keyAddr(0), Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	for day := 0; day < 10; day++ {
		var batch []store.Observation
		for j := 0; j < 3; j++ {
			block := int64(day*100 + j)
			for i := 0; i < 60; i++ {
				batch = append(batch, obs(keyAddr(i), "", block, day0.Add(time.Duration(day*24+j*6)*time.Hour), fmt.Sprint(i*1000+day*10+j)))
			}
		}
		for range 1 + btoi(day%3 == 0) {
			if err := s.AppendObservations(ctx, batch); err != nil {
				t.Error(err)
				return
			}
		}
		for {
			taken, _, err := s.ApplyPending(ctx, 500)
			if err != nil {
				t.Error(err)
				return
			}
			if taken == 0 {
				break
			}
		}
		switch day {
		case 2:
			must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(201)}, nil))
		case 9:
			must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(902)}, nil))
		}
		after(day)
	}
}

func keyAddr(i int) string { return fmt.Sprintf("0x%040x", i+1) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A pruner running passes beside the appends, the applier and the reorgs loses nothing: the
// tables a public answer reads, and the observations kept after a last pass, are those of the
// same world pruned once at its end against the same horizon (the concurrent passes' horizon
// may be later: one was taken before the reorg of day 9 moved the chain time back, and a
// horizon never moves back).
func TestPruneBesideApplier(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	stop, passDone := make(chan struct{}), make(chan struct{}, 1)
	var during int64
	done := make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			res, err := s.PrunePass(ctx, 24*time.Hour, 1)
			if err != nil {
				done <- err
				return
			}
			during += res.Pruned
			select {
			case passDone <- struct{}{}:
			default:
			}
		}
	}()
	concurrentWorld(t, s, func(day int) {
		if day == 5 { // at least one whole pass runs with prunable rows (days 0 to 3 before the horizon)
			<-passDone
			<-passDone
		}
	})
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatal("the pruner beside the writers pruned nothing")
	}
	must(s.PrunePass(ctx, 24*time.Hour, 1))
	gotDerived, gotKept := derived(t, s), kept(t, s)
	h := state(t, s, `SELECT horizon::text FROM balances.prune_horizon WHERE chain = 'ethereum'`)

	s = fresh(t)
	concurrentWorld(t, s, func(int) {})
	if _, err := s.Pool().Exec(ctx, `INSERT INTO balances.prune_horizon (chain, horizon) VALUES ('ethereum', $1::timestamptz)`, h); err != nil {
		t.Fatal(err)
	}
	must(s.PrunePass(ctx, 24*time.Hour, 1))
	if want := derived(t, s); gotDerived != want {
		t.Fatalf("derived tables with a pruner beside the writers:\n%s\nwant\n%s", gotDerived, want)
	}
	if want := kept(t, s); gotKept != want {
		t.Fatalf("kept observations with a pruner beside the writers:\n%s\nwant\n%s", gotKept, want)
	}
}

// A reorg is told when it reaches observations older than the pruning horizon (deeper than the
// retention): orphaning a1's base (block 13, before the horizon) counts it, and its day's
// snapshot is rebuilt from the kept observations only (block 12, the one the fallback would
// read without pruning, is gone). A reorg after the horizon counts nothing.
func TestPruneReorgBeforeHorizonReported(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	if res := must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(13)}, nil)); res.BeforeHorizon != 0 {
		t.Fatalf("before any pruning: %+v", res)
	}
	unpruned := snapshot(t, s, a1, "", "2026-03-03")

	s = fresh(t)
	pruneWorld(t, s)
	must(s.PrunePass(ctx, horizon, 1))
	if res := must(s.ApplyReorg(ctx, "ethereum", 21, []string{hashOf(21)}, nil)); res.BeforeHorizon != 0 || res.PastPruned || res.Voided != 1 {
		t.Fatalf("reorg after the horizon: %+v", res)
	}
	res := must(s.ApplyReorg(ctx, "ethereum", 13, []string{hashOf(13)}, nil))
	if res.BeforeHorizon != 1 || !res.PastPruned || res.Voided != 1 {
		t.Fatalf("reorg before the horizon: %+v, want one observation before it", res)
	}
	if got := snapshot(t, s, a1, "", "2026-03-03"); unpruned != "120" || got != "110" {
		t.Fatalf("day 2 of a1: %s after pruning, %s without; want 110 and 120", got, unpruned)
	}
	if got := current(t, s, a1, ""); got != "200" {
		t.Fatalf("a1 = %s, want 200 (block 20 survives)", got)
	}
}

// Chain time is capped at the clock: an observation stamped ten years ahead does not move the
// horizon past now less the retention.
func TestPruneHorizonCappedAtClock(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "1"), obs(a2, "", 11, time.Now().AddDate(10, 0, 0), "2")}))
	res := must(s.PrunePass(ctx, horizon, 1))
	if h := res.Horizons["ethereum"]; !h.Before(time.Now().Add(-horizon).Add(time.Minute)) {
		t.Fatalf("horizon %s is past now less the retention", h)
	}
}

// Observations past the applier's mark are never pruned, however old or redundant: a late old
// reading and a copy of a key's base wait for the applier, and go in the first pass after it.
func TestPruneLeavesUnappliedObservations(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	must(s.PrunePass(ctx, horizon, 1))
	pruned := kept(t, s)
	if err := s.AppendObservations(ctx, []store.Observation{obs(a1, "", 8, day0.Add(-2*time.Hour), "80"), obs(a1, "", 13, day0.Add(49*time.Hour), "130")}); err != nil {
		t.Fatal(err)
	}
	if res := must(s.PrunePass(ctx, horizon, 1)); res.Pruned != 0 {
		t.Fatalf("pruned %d observations past the mark", res.Pruned)
	}
	drain(t, s, 100)
	if res := must(s.PrunePass(ctx, horizon, 1)); res.Pruned != 2 || kept(t, s) != pruned {
		t.Fatalf("after the applier: pruned %d, kept\n%s\nwant\n%s", res.Pruned, kept(t, s), pruned)
	}
}

// Block time may go back (a bitcoin block may be stamped up to about 2 h before its parent): a1's
// block 11 is stamped just after the horizon and block 12 just before it. Block 10 stays (its
// successor, 11, is after the horizon), so a reorg of block 11 (within the retention by its
// time) falls back to it as without pruning.
func TestPruneBlockTimeGoingBack(t *testing.T) {
	ctx := context.Background()
	d := func(days, hours int) time.Time { return day0.Add(time.Duration(days*24+hours) * time.Hour) }
	world := func(s *store.Store) {
		must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 9, d(0, -1), "90"), obs(a1, "", 10, d(0, 0), "100"),
			obs(a1, "", 11, d(3, 1), "110"), obs(a1, "", 12, d(2, 23), "120"), obs(a1, "", 20, d(6, 0), "200")}))
	}
	reorg := func(s *store.Store) string {
		must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(11), hashOf(12), hashOf(20)}, nil))
		return derived(t, s)
	}
	s := fresh(t)
	world(s)
	unpruned := reorg(s)

	s = fresh(t)
	world(s)
	if res := must(s.PrunePass(ctx, horizon, 1)); res.Pruned != 1 {
		t.Errorf("pruned %d, want 1 (block 9)", res.Pruned)
	}
	want := strings.Join([]string{"11 - 10 " + hashOf(10), "11 - 11 " + hashOf(11), "11 - 12 " + hashOf(12), "11 - 20 " + hashOf(20)}, "\n")
	if got := kept(t, s); got != want {
		t.Fatalf("kept after pruning:\n%s\nwant\n%s", got, want)
	}
	if got := reorg(s); got != unpruned {
		t.Fatalf("reorg of block 11 after pruning:\n%s\nwithout pruning:\n%s", got, unpruned)
	}
	if got := current(t, s, a1, ""); got != "100" {
		t.Fatalf("a1 fell back to %s, want 100", got)
	}
}

// pruneClaims counts the sessions holding or waiting for the pruning pass's claim
// (prune_lock.sql) in the test's database.
const pruneClaims = `SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = 'balances.prune_horizon'::regclass`

// One pass runs at a time: while a pass is held up (the test locks prune_horizon's row, which
// the pass's horizon update waits for), a second pass, as another replica runs it, does nothing
// and says so; the first then prunes as alone, and a pass after it runs again.
func TestPruneOnePassAtATime(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	pruneWorld(t, s)
	must(s.PrunePass(ctx, 1000*time.Hour, 1)) // a horizon row (nothing that old) to lock
	all := kept(t, s)
	hold := must(s.Pool().Begin(ctx))
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, `SELECT 1 FROM balances.prune_horizon FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type pass struct {
		res store.PruneResult
		err error
	}
	first := make(chan pass)
	go func() {
		res, err := s.PrunePass(ctx, horizon, 1)
		first <- pass{res, err}
	}()
	for state(t, s, pruneClaims+` AND granted`) != "1" {
		time.Sleep(10 * time.Millisecond)
	}
	other := store.New(s.Pool())
	// Without the claim this pass would wait for the test's row lock: the guard turns that into
	// a failure instead of a hang.
	guard, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := other.PrunePass(guard, horizon, 1)
	if err != nil || !res.Skipped || res.Pruned != 0 || res.Batches != 0 {
		t.Fatalf("second pass beside the first: %+v, %v; want skipped", res, err)
	}
	if got := kept(t, s); got != all {
		t.Fatalf("the skipped pass deleted:\n%s\nwant\n%s", got, all)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if p := <-first; p.err != nil || p.res.Skipped || p.res.Pruned != 9 {
		t.Fatalf("first pass: %+v, %v; want 9 pruned", p.res, p.err)
	}
	if res := must(other.PrunePass(ctx, horizon, 1)); res.Skipped || res.Batches == 0 || res.Pruned != 0 {
		t.Fatalf("a pass after the first: %+v, want a run that prunes nothing", res)
	}
	if got := state(t, s, pruneClaims); got != "0" {
		t.Fatalf("%s advisory locks left after the passes", got)
	}
}

// A range that fails does not stop the pass: with the delete of one row of the first page
// refused (a trigger), the pass reports the failure and prunes every other page as a pass
// without it does; once the trigger is gone, the next pass prunes the first page's rows too.
func TestPruneRangeFailureGoesOn(t *testing.T) {
	ctx := context.Background()
	world := func() *store.Store {
		s := fresh(t)
		concurrentWorld(t, s, func(int) {})
		return s
	}
	s := world()
	must(s.PrunePass(ctx, 24*time.Hour, 2))
	want := kept(t, s)

	s = world()
	for _, sql := range []string{
		`CREATE FUNCTION balances.refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
		`CREATE TRIGGER refuse_delete BEFORE DELETE ON balances.observations FOR EACH ROW
		 WHEN (OLD.ctid < '(1,0)'::tid AND OLD.block_number = 0) EXECUTE FUNCTION balances.refuse_delete()`,
	} {
		if _, err := s.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = s.Pool().Exec(ctx, `DROP TRIGGER IF EXISTS refuse_delete ON balances.observations; DROP FUNCTION IF EXISTS balances.refuse_delete()`)
	})
	res, err := s.PrunePass(ctx, 24*time.Hour, 2)
	if err == nil || !strings.Contains(err.Error(), "refused by the test") || !strings.Contains(err.Error(), fmt.Sprintf("1 of %d page ranges failed", res.Batches)) {
		t.Fatalf("pass with a refused row: %v", err)
	}
	if res.Failed != 1 || res.Batches < 3 || res.Pruned == 0 {
		t.Fatalf("pass with a refused row: %+v, want one range failed and the others pruned", res)
	}
	if _, err := s.Pool().Exec(ctx, `DROP TRIGGER refuse_delete ON balances.observations`); err != nil {
		t.Fatal(err)
	}
	again := must(s.PrunePass(ctx, 24*time.Hour, 2))
	if again.Failed != 0 || again.Pruned == 0 || kept(t, s) != want {
		t.Fatalf("pass after the trigger: %+v, kept\n%s\nwant\n%s", again, kept(t, s), want)
	}
}

// A reorg of a block whose observations were all pruned finds no row to count, and is still told
// it reached pruned history: its lowest block is at or below the newest block the pruner deleted
// (a1's blocks 10 and 11 go, 12 is its base). A reorg after it is not, nor the same reorg
// delivered again (it changes nothing).
func TestPruneReorgOfPrunedBlockReported(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	d := func(days int) time.Time { return day0.AddDate(0, 0, days) }
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, d(0), "100"), obs(a1, "", 11, d(1), "110"),
		obs(a1, "", 12, d(2), "120"), obs(a1, "", 20, d(6), "200")}))
	if res := must(s.PrunePass(ctx, horizon, 1)); res.Pruned != 2 {
		t.Fatalf("pruned %d, want 2", res.Pruned)
	}
	if got := state(t, s, `SELECT pruned_block::text FROM balances.prune_horizon WHERE chain = 'ethereum'`); got != "11" {
		t.Fatalf("pruned_block = %s, want 11", got)
	}
	if res := must(s.ApplyReorg(ctx, "ethereum", 11, []string{hashOf(11)}, nil)); res != (store.ReorgResult{PastPruned: true}) {
		t.Fatalf("reorg of the pruned block 11: %+v, want only PastPruned", res)
	}
	if res := must(s.ApplyReorg(ctx, "ethereum", 11, []string{hashOf(11)}, nil)); res.PastPruned {
		t.Fatalf("the same reorg again: %+v", res)
	}
	if res := must(s.ApplyReorg(ctx, "ethereum", 12, []string{hashOf(13)}, nil)); res.PastPruned || res.BeforeHorizon != 0 {
		t.Fatalf("a reorg above the pruned blocks: %+v", res)
	}
	if res := must(s.ApplyReorg(ctx, "ethereum", 20, []string{hashOf(20)}, nil)); res.PastPruned || res.Voided != 1 {
		t.Fatalf("a reorg within the retention: %+v", res)
	}
}

// A reorg deeper than the retention that leaves a key no surviving observation (it orphans the
// key's base, and the pruner deleted the key's older readings) takes the key's whole history
// with its current row: the days before the rebuilt ones held a pruned reading's balance that no
// current row backs, and the key's entity's totals (moved by the snapshots' changes) would have
// kept it while the summed addresses did not (the model-based test's minimal case).
func TestPruneDeepReorgLeavingNothingClearsHistory(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	const big = "3608580670741770498339917"
	x := &store.Entity{ID: "x", Name: "X", Type: "cex"}
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: x, Version: 1}}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 14, day0.AddDate(0, 0, 1), big), obs(a1, tok, 19, day0.AddDate(0, 0, 2), "0"),
		obs(a2, "", 41, day0.AddDate(0, 0, 5), "5")}))
	// Chain time is day 5, the horizon day 4: block 14 is superseded by block 19 before it.
	if res := must(s.PrunePass(ctx, 24*time.Hour, 1)); res.Pruned != 1 {
		t.Fatalf("pruned %d, want block 14's reading", res.Pruned)
	}
	if res := must(s.ApplyReorg(ctx, "ethereum", 19, []string{hashOf(19)}, nil)); res.BeforeHorizon != 1 || res.Keys != 1 {
		t.Fatalf("reorg = %+v, want one key and one observation before the horizon", res)
	}
	chains := []string{"ethereum"}
	for _, c := range []struct{ what, got, want string }{
		{"a1 current", state(t, s, `SELECT count(*)::text FROM balances.current WHERE address = $1 AND token = $2`, a1, tok), "0"},
		{"a1 on day 1", snapshot(t, s, a1, tok, "2026-03-02"), "0"},
		{"a1 on day 2", snapshot(t, s, a1, tok, "2026-03-03"), "0"},
		{"x on day 1", entityAt(t, s, "x", "2026-03-02"), "0"},
		{"x totals", holdingsText(must(s.EntityBalances(ctx, "x", chains))), "[]"},
		{"x summed", holdingsText(must(s.SummedEntityBalances(ctx, "x", chains))), "[]"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
}
