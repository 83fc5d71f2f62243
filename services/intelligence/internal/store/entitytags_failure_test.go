package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// tagEntities imports one tagged address for each of the entities.
func tagEntities(t *testing.T, st *store.Store, ids ...string) {
	t.Helper()
	b := importer.Batch{Source: "s", Tags: []attribution.Tag{{ID: "cex", Label: "Exchange", Rank: 1}}}
	for i, id := range ids {
		b.Entities = append(b.Entities, attribution.Entity{ID: id, Name: id, Type: "cex"})
		b.Claims = append(b.Claims, importer.Claim{ChainType: "evm", Address: addr(5000 + i), EntityID: id, Confidence: 0.9,
			Tags: []importer.TagRef{{ID: "cex"}}})
	}
	if _, err := st.ApplyBatch(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// endBackoffs makes the backed-off entities due now, as if their backoff had run out.
func endBackoffs(t *testing.T) {
	t.Helper()
	if _, err := pgtest.Pool(t).Exec(context.Background(), `UPDATE intel.entity_tags_dirty SET retry_at = now() - interval '1 second'
		WHERE retry_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
}

func tagged(t *testing.T) int {
	t.Helper()
	var n int
	if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT count(*) FROM intel.entities WHERE populated_tags <> '[]'`).
		Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func refreshAll(t *testing.T, st *store.Store, want store.TagsRefresh) {
	t.Helper()
	got, err := publish.RefreshTags(context.Background(), st)
	if err != nil || got != want {
		t.Fatalf("refresh: %+v (%v), want %+v", got, err, want)
	}
}

// TestEntityTagsFailingEntityIsolated checks that an entity whose computation always fails does
// not hold back the others of its round or later rounds: they are all stored, the failing one is
// backed off (reported with a doubling backoff), not retried before its backoff ends, retried
// once it has, and stored once it succeeds.
func TestEntityTagsFailingEntityIsolated(t *testing.T) {
	reset(t)
	var failing atomic.Bool
	failing.Store(true)
	var attempts atomic.Int64
	var failures []store.TagsFailure
	st := store.New(pgtest.Pool(t),
		store.WithTagsComputeCheck(func(_ context.Context, id string) error {
			if id != "bad" {
				return nil
			}
			attempts.Add(1)
			if failing.Load() {
				return errors.New("boom")
			}
			return nil
		}),
		store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }),
		store.WithTagsRetry(time.Minute, time.Hour))
	// 150 entities: "bad" sorts first, so it is in the first round of 100 with 99 others.
	ids := []string{"bad"}
	for i := range 149 {
		ids = append(ids, fmt.Sprintf("e%03d", i))
	}
	tagEntities(t, st, ids...)

	refreshAll(t, st, store.TagsRefresh{Entities: 150, Changed: 149, Republished: 149, Failed: 1})
	if n, d := tagged(t), dirty(t); n != 149 || d != "bad:false" {
		t.Fatalf("after a round with a failing entity: %d entities tagged, dirty %q; want 149, bad:false", n, d)
	}
	if len(failures) != 1 || failures[0].EntityID != "bad" || failures[0].Failures != 1 || failures[0].Backoff != time.Minute ||
		!strings.Contains(fmt.Sprint(failures[0].Err), "boom") {
		t.Fatalf("failures reported %+v, want bad's first, backed off a minute", failures)
	}
	// Backed off: the next refresh does not try it.
	refreshAll(t, st, store.TagsRefresh{})
	if attempts.Load() != 1 {
		t.Fatalf("bad attempted %d times within its backoff, want once", attempts.Load())
	}
	// Due again: retried, fails again, backed off twice as long.
	endBackoffs(t)
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Failed: 1})
	if len(failures) != 2 || failures[1].Failures != 2 || failures[1].Backoff != 2*time.Minute {
		t.Fatalf("failures reported %+v, want bad's second, backed off two minutes", failures)
	}
	// It works now: stored at its next attempt, and no longer marked.
	failing.Store(false)
	endBackoffs(t)
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	if n, d := tagged(t), dirty(t); n != 150 || d != "" || attempts.Load() != 3 {
		t.Fatalf("after bad succeeded: %d tagged, dirty %q, %d attempts; want 150, none, 3", n, d, attempts.Load())
	}
}

// TestEntityTagsFailingStoreIsolated checks that an entity whose store fails (here a trigger
// refuses its row) is found by storing the round in halves: the others are stored, it is backed
// off.
func TestEntityTagsFailingStoreIsolated(t *testing.T) {
	reset(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE FUNCTION intel.test_refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused %', NEW.id; END $$;
		CREATE TRIGGER test_refuse_bad BEFORE UPDATE ON intel.entities FOR EACH ROW
		WHEN (NEW.id = 'e3' AND NEW.populated_tags <> '[]') EXECUTE FUNCTION intel.test_refuse_bad()`); err != nil {
		t.Fatal(err)
	}
	dropped := false
	drop := func() {
		if !dropped {
			dropped = true
			if _, err := pool.Exec(ctx, `DROP TRIGGER test_refuse_bad ON intel.entities; DROP FUNCTION intel.test_refuse_bad()`); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(drop)
	var failures []store.TagsFailure
	st := store.New(pool, store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }))
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("e%d", i))
	}
	tagEntities(t, st, ids...)
	refreshAll(t, st, store.TagsRefresh{Entities: 10, Changed: 9, Republished: 9, Failed: 1})
	if n, d := tagged(t), dirty(t); n != 9 || d != "e3:false" {
		t.Fatalf("after a round with a failing store: %d tagged, dirty %q; want 9, e3:false", n, d)
	}
	if len(failures) != 1 || failures[0].EntityID != "e3" || failures[0].Backoff != store.TagsRetryFirst ||
		!strings.Contains(fmt.Sprint(failures[0].Err), "refused e3") {
		t.Fatalf("failures reported %+v, want e3's", failures)
	}
	drop()
	endBackoffs(t)
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	if d := dirty(t); d != "" {
		t.Fatalf("dirty %q after e3 was stored", d)
	}
}
