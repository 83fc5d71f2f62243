package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5"
)

// waitForLockWait reports whether, within a minute (a hang guard), a session of the package database waits
// for a lock matching cond (a condition on pg_locks l).
func waitForLockWait(t *testing.T, cond string) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var waiting bool
		if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks l
			WHERE NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND `+cond+`)`).
			Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

const (
	waitsForTags          = "l.locktype = 'relation' AND l.relation = 'intel.tags'::regclass"
	waitsForAdvisoryLock  = "l.locktype = 'advisory'"
	lockTagsInTransaction = "LOCK TABLE intel.tags IN ACCESS EXCLUSIVE MODE"
)

type refreshResult struct {
	r   store.TagsRefresh
	err error
}

// bgRefresh is one refresh round run in the background.
type bgRefresh struct {
	st      *store.Store
	done    chan refreshResult
	running bool
}

// newBgRefresh returns a round to start later. Call it before opening the test's transactions:
// its cleanup, which waits for a round a failed test left running, then runs after theirs (the
// rollbacks that let the round finish), so the round never outlives the test.
func newBgRefresh(t *testing.T, st *store.Store) *bgRefresh {
	t.Helper()
	b := &bgRefresh{st: st, done: make(chan refreshResult, 1)}
	t.Cleanup(func() {
		if b.running {
			<-b.done
		}
	})
	return b
}

func (b *bgRefresh) start() {
	b.running = true
	go func() {
		r, err := b.st.RefreshEntityTags(context.Background(), 100)
		b.done <- refreshResult{r, err}
	}()
}

func (b *bgRefresh) wait() refreshResult {
	res := <-b.done
	b.running = false
	return res
}

func begin(t *testing.T) pgx.Tx {
	t.Helper()
	tx, err := pgtest.Pool(t).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

// TestEntityTagsComputedWithoutVersionLock checks that the refresh reads an entity's addresses'
// tags without holding the version lock every versioned writer (imports, heuristics, contracts)
// takes: while its computation is held (a transaction locks intel.tags), another transaction
// takes the version lock at once.
func TestEntityTagsComputedWithoutVersionLock(t *testing.T) {
	st := reset(t)
	ctx := context.Background()
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 3, importer.TagRef{ID: "cex"})); err != nil {
		t.Fatal(err)
	}
	bg := newBgRefresh(t, st)
	hold := begin(t)
	if _, err := hold.Exec(ctx, lockTagsInTransaction); err != nil {
		t.Fatal(err)
	}
	bg.start()
	if !waitForLockWait(t, waitsForTags) {
		t.Fatal("the refresh never read the tags")
	}
	other := begin(t)
	var free bool
	if err := other.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(store.VersionLock)).Scan(&free); err != nil {
		t.Fatal(err)
	}
	_ = other.Rollback(ctx)
	_ = hold.Rollback(ctx)
	res := bg.wait()
	if !free {
		t.Fatal("the version lock was held while the refresh computed an entity's tags")
	}
	if want := (store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1}); res.err != nil || res.r != want {
		t.Fatalf("refresh: %+v (%v), want %+v", res.r, res.err, want)
	}
}

// TestEntityTagsChangeDuringRefreshIsKept checks that a tag change a versioned writer commits
// after the refresh computed an entity's tags, before the refresh stores them, is not lost: the
// refresh does not store the tags it computed without the change, the entity stays marked, and
// the next round stores its current tags.
func TestEntityTagsChangeDuringRefreshIsKept(t *testing.T) {
	st := reset(t)
	ctx := context.Background()
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 3, importer.TagRef{ID: "cex"})); err != nil {
		t.Fatal(err)
	}
	refresh(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	before := storedTags(t, "acme")
	if _, err := st.ApplyBatch(ctx, batch("t", "acme", 2, 1, importer.TagRef{ID: "hot", Params: "eth"})); err != nil {
		t.Fatal(err)
	}
	// A writer holds the version lock throughout; the refresh must compute meanwhile.
	bg := newBgRefresh(t, st)
	writer := begin(t)
	if _, err := writer.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(store.VersionLock)); err != nil {
		t.Fatal(err)
	}
	hold := begin(t)
	if _, err := hold.Exec(ctx, lockTagsInTransaction); err != nil {
		t.Fatal(err)
	}
	bg.start()
	if !waitForLockWait(t, waitsForTags) {
		t.Fatal("the refresh did not compute an entity's tags while a writer held the version lock")
	}
	_ = hold.Rollback(ctx)
	if !waitForLockWait(t, waitsForAdvisoryLock) {
		t.Fatal("the refresh did not wait for the version lock to store the tags it computed")
	}
	// The computation is over: the writer tags another address of the entity and commits.
	if _, err := writer.Exec(ctx, `INSERT INTO intel.address_tags (chain_type, address, tag_id, params, source)
		VALUES ('evm', $1, 'hot', 'btc', 'u')`, addr(1)); err != nil {
		t.Fatal(err)
	}
	if err := writer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res := bg.wait()
	if got, d := storedTags(t, "acme"), dirty(t); got != before || d != "acme:false" {
		t.Fatalf("after a change during the refresh: stored %s, dirty %q; want the previous tags %s and acme still marked", got, d, before)
	}
	if want := (store.TagsRefresh{Entities: 1, Remarked: 1}); res.err != nil || res.r != want {
		t.Fatalf("refresh: %+v (%v), want %+v", res.r, res.err, want)
	}
	refresh(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	want := `[{"id": "cex", "rank": 1, "chain": "", "label": "Exchange", "params": "", "disablePage": false, "excludeEntities": false}, ` +
		`{"id": "hot", "rank": 2, "chain": "", "label": "Hot {param}", "params": "btc", "disablePage": false, "excludeEntities": false}, ` +
		`{"id": "hot", "rank": 2, "chain": "", "label": "Hot {param}", "params": "eth", "disablePage": false, "excludeEntities": false}]`
	if got, d := storedTags(t, "acme"), dirty(t); got != want || d != "" {
		t.Fatalf("next round: stored %s, dirty %q; want %s, nothing marked", got, d, want)
	}
}

// TestEntityTagsRoundsSplitEntities checks that concurrent refreshers (replicas, an import
// command) neither wait for each other's computation nor recompute the entities another one
// claimed: while one round computes, another returns at once with nothing to do.
func TestEntityTagsRoundsSplitEntities(t *testing.T) {
	st := reset(t)
	ctx := context.Background()
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 3, importer.TagRef{ID: "cex"})); err != nil {
		t.Fatal(err)
	}
	bg := newBgRefresh(t, st)
	hold := begin(t)
	if _, err := hold.Exec(ctx, lockTagsInTransaction); err != nil {
		t.Fatal(err)
	}
	bg.start()
	if !waitForLockWait(t, waitsForTags) {
		t.Fatal("the refresh never read the tags")
	}
	// Were the second round to wait for the first, it would wait for the lock the test holds
	// until this deadline: generous, so that only waiting can reach it.
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	other, err := st.RefreshEntityTags(tctx, 100)
	_ = hold.Rollback(ctx)
	if err != nil || other != (store.TagsRefresh{}) {
		t.Fatalf("a second round while the first computes: %+v (%v), want nothing done at once", other, err)
	}
	if want := (store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1}); bg.wait() != (refreshResult{r: want}) {
		t.Fatalf("the first round did not store acme's tags")
	}
	if d := dirty(t); d != "" {
		t.Fatalf("dirty %q after both rounds", d)
	}
}

// A claim leases its entities: a round leaves an entity another refresher claimed less than
// TagsClaimLease ago, and takes it once the lease has run out (its refresher died holding it).
func TestEntityTagsLeaseExpires(t *testing.T) {
	ctx := context.Background()
	st := reset(t)
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 3, importer.TagRef{ID: "cex"})); err != nil {
		t.Fatal(err)
	}
	lease := func(ago time.Duration) {
		t.Helper()
		if _, err := pgtest.Pool(t).Exec(ctx, `UPDATE intel.entity_tags_dirty SET claimed_at = now() - make_interval(secs => $1)`, ago.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
	lease(store.TagsClaimLease - time.Minute)
	if r, err := st.RefreshEntityTags(ctx, 100); err != nil || r.Entities != 0 {
		t.Fatalf("an entity leased %s ago: round %+v (%v), want it left to its lease", store.TagsClaimLease-time.Minute, r, err)
	}
	lease(store.TagsClaimLease + time.Minute)
	if r, err := st.RefreshEntityTags(ctx, 100); err != nil || r.Entities != 1 || r.Changed != 1 {
		t.Fatalf("an entity leased %s ago: round %+v (%v), want it taken and stored", store.TagsClaimLease+time.Minute, r, err)
	}
	if d := dirty(t); d != "" {
		t.Fatalf("dirty after the round %q", d)
	}
}
