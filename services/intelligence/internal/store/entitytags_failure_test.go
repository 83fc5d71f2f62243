package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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

	refreshAll(t, st, store.TagsRefresh{Entities: 150, Changed: 149, Republished: 149, Failed: 1, BackedOff: 1})
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
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Failed: 1, BackedOff: 1})
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
	refreshAll(t, st, store.TagsRefresh{Entities: 10, Changed: 9, Republished: 9, Failed: 1, BackedOff: 1})
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

// remark marks entity again from a transaction of its own, as a writer changing one of its
// addresses would while a round computes it.
func remark(ctx context.Context, pool *pgxpool.Pool, id string) error {
	_, err := pool.Exec(ctx, `SELECT intel.mark_entity_tags(ARRAY[$1], false)`, id)
	return err
}

// backoffOf is entity's consecutive failures and whether it waits for a retry_at to come.
func backoffOf(t *testing.T, id string) (int, bool) {
	t.Helper()
	var n int
	var waiting bool
	if err := pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT failures, COALESCE(retry_at > now(), false) FROM intel.entity_tags_dirty WHERE entity_id = $1`, id).Scan(&n, &waiting); err != nil {
		t.Fatal(err)
	}
	return n, waiting
}

// TestEntityTagsRemarkedFailureBackedOff checks that an entity marked again during each attempt,
// whose computation always fails, is still backed off and reported: the new mark no longer
// carries the claimed one, which only a row no refresher claimed since may lack.
func TestEntityTagsRemarkedFailureBackedOff(t *testing.T) {
	reset(t)
	var failures []store.TagsFailure
	var attempts atomic.Int64
	st := store.New(pgtest.Pool(t),
		store.WithTagsComputeCheck(func(ctx context.Context, id string) error {
			if id != "bad" {
				return nil
			}
			attempts.Add(1)
			if err := remark(ctx, pgtest.Pool(t), id); err != nil {
				return err
			}
			return errors.New("boom")
		}),
		store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }),
		store.WithTagsRetry(time.Minute, time.Hour))
	tagEntities(t, st, "bad", "good")
	refreshAll(t, st, store.TagsRefresh{Entities: 2, Changed: 1, Republished: 1, Failed: 1, BackedOff: 1})
	if n, waiting := backoffOf(t, "bad"); n != 1 || !waiting {
		t.Fatalf("bad: %d failures, waiting %v; want 1, backed off", n, waiting)
	}
	if len(failures) != 1 || failures[0].EntityID != "bad" || failures[0].Backoff != time.Minute {
		t.Fatalf("failures reported %+v, want bad's first", failures)
	}
	refreshAll(t, st, store.TagsRefresh{})
	if attempts.Load() != 1 {
		t.Fatalf("bad attempted %d times within its backoff, want once", attempts.Load())
	}
}

// TestEntityTagsRemarkedSuccessResetsFailures checks that a computation that succeeded ends the
// entity's run of failures even when the entity was marked again meanwhile (left for a later
// round): its next failure is backed off from the first step, not doubled.
func TestEntityTagsRemarkedSuccessResetsFailures(t *testing.T) {
	reset(t)
	var failures []store.TagsFailure
	var step atomic.Int64 // 0: fail; 1: succeed, marked again meanwhile; 2: fail
	st := store.New(pgtest.Pool(t),
		store.WithTagsComputeCheck(func(ctx context.Context, id string) error {
			switch step.Load() {
			case 1:
				return remark(ctx, pgtest.Pool(t), id)
			default:
				return errors.New("boom")
			}
		}),
		store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }),
		store.WithTagsRetry(time.Minute, time.Hour))
	tagEntities(t, st, "e")
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Failed: 1, BackedOff: 1})
	step.Store(1)
	endBackoffs(t)
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Remarked: 1})
	if n, waiting := backoffOf(t, "e"); n != 0 || waiting {
		t.Fatalf("after a success marked again: %d failures, waiting %v; want none", n, waiting)
	}
	step.Store(2)
	refreshAll(t, st, store.TagsRefresh{Entities: 1, Failed: 1, BackedOff: 1})
	if len(failures) != 2 || failures[1].Failures != 1 || failures[1].Backoff != time.Minute {
		t.Fatalf("failures reported %+v; want the last a first failure, backed off a minute", failures)
	}
}

// refusedConnection is the error pgx returns when the server refuses a connection (here to a
// missing database, SQLSTATE 3D000; too many clients, 53300, comes the same way): a
// ConnectError holding a PgError whose code says nothing of a connection.
func refusedConnection(t *testing.T) error {
	t.Helper()
	cfg, err := pgconn.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "chainintel_no_such_database"
	c, err := pgconn.ConnectConfig(context.Background(), cfg)
	if err == nil {
		_ = c.Close(context.Background())
		t.Fatal("connected to a missing database")
	}
	return err
}

// TestEntityTagsTransientStoreFailureRetriedWhole checks that a store failing in a way no entity
// explains (a statement timeout failing the round and both its halves; a broken or refused
// connection at once) is not bisected down to every entity: the round fails after at most 3 transactions,
// backs off no entity and ends its leases, and the next round stores everything. A timeout one
// entity causes is still isolated to it.
func TestEntityTagsTransientStoreFailureRetriedWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		tries int64
	}{
		{"statement timeout", &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, 3},
		{"connection lost", &pgconn.PgError{Code: "08006", Message: "connection failure"}, 1},
		{"connection refused", refusedConnection(t), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t)
			var failing atomic.Bool
			failing.Store(true)
			var tries atomic.Int64
			st := store.New(pgtest.Pool(t), store.WithTagsStoreCheck(func(context.Context, []string) error {
				if !failing.Load() {
					return nil
				}
				tries.Add(1)
				return tc.err
			}))
			var ids []string
			for i := range 10 {
				ids = append(ids, fmt.Sprintf("e%d", i))
			}
			tagEntities(t, st, ids...)
			if _, err := st.RefreshEntityTags(context.Background(), 100); !errors.Is(err, tc.err) {
				t.Fatalf("round: %v, want %v", err, tc.err)
			}
			var held int
			if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT count(*) FROM intel.entity_tags_dirty
				WHERE failures > 0 OR retry_at IS NOT NULL OR claimed_at IS NOT NULL`).Scan(&held); err != nil {
				t.Fatal(err)
			}
			if tries.Load() != tc.tries || held != 0 {
				t.Fatalf("%d store transactions, %d entities backed off or leased; want %d, none", tries.Load(), held, tc.tries)
			}
			failing.Store(false)
			refreshAll(t, st, store.TagsRefresh{Entities: 10, Changed: 10, Republished: 10})
		})
	}
	t.Run("one entity's timeout", func(t *testing.T) {
		reset(t)
		st := store.New(pgtest.Pool(t), store.WithTagsStoreCheck(func(_ context.Context, ids []string) error {
			if slices.Contains(ids, "e3") {
				return &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}
			}
			return nil
		}))
		var ids []string
		for i := range 10 {
			ids = append(ids, fmt.Sprintf("e%d", i))
		}
		tagEntities(t, st, ids...)
		refreshAll(t, st, store.TagsRefresh{Entities: 10, Changed: 9, Republished: 9, Failed: 1, BackedOff: 1})
		if d := dirty(t); d != "e3:false" {
			t.Fatalf("dirty %q, want e3 alone", d)
		}
	})
}

// timeoutsOf is a store check failing, as a statement timeout would, every store holding one of
// the entities bad.
func timeoutsOf(bad ...string) func(context.Context, []string) error {
	return func(_ context.Context, ids []string) error {
		for _, b := range bad {
			if slices.Contains(ids, b) {
				return &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}
			}
		}
		return nil
	}
}

// TestEntityTagsFailingRoundDoesNotStarve checks that a round failing whole (two entities that
// each always time out, one in each half) does not hold back the other dirty entities: the next
// refresh takes the entities it held after the others, and rounds no longer holding both
// isolate each one.
func TestEntityTagsFailingRoundDoesNotStarve(t *testing.T) {
	reset(t)
	var failures []store.TagsFailure
	st := store.New(pgtest.Pool(t), store.WithTagsStoreCheck(timeoutsOf("e010", "e060")),
		store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }))
	var ids []string
	for i := range 150 {
		ids = append(ids, fmt.Sprintf("e%03d", i))
	}
	tagEntities(t, st, ids...)
	// The first 100, holding both, fail whole.
	var pe *pgconn.PgError
	if r, err := publish.RefreshTags(context.Background(), st); !errors.As(err, &pe) || pe.Code != "57014" || r.Entities != 100 {
		t.Fatalf("first refresh: %+v (%v), want 100 entities and the timeout", r, err)
	}
	// The next takes the 50 never tried first, with e000-e049 (e010), then e050-e099 (e060).
	refreshAll(t, st, store.TagsRefresh{Entities: 150, Changed: 148, Republished: 148, Failed: 2, BackedOff: 2})
	if n, d := tagged(t), dirty(t); n != 148 || d != "e010:false,e060:false" {
		t.Fatalf("after the second refresh: %d tagged, dirty %q; want 148, e010 and e060", n, d)
	}
	if len(failures) != 2 {
		t.Fatalf("failures reported %+v, want e010's and e060's", failures)
	}
}

// TestEntityTagsPersistentTimeoutsIsolated checks that two entities that each always time out,
// one in each half of their round, do not fail every round holding them forever: once rounds
// holding them failed whole twice, their round isolates down to the two, stores the others and
// backs the two off; due again, they are isolated at once.
func TestEntityTagsPersistentTimeoutsIsolated(t *testing.T) {
	reset(t)
	var failures []store.TagsFailure
	st := store.New(pgtest.Pool(t), store.WithTagsStoreCheck(timeoutsOf("e2", "e7")),
		store.OnTagsFailure(func(f store.TagsFailure) { failures = append(failures, f) }),
		store.WithTagsRetry(time.Minute, time.Hour))
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("e%d", i))
	}
	tagEntities(t, st, ids...)
	for i := range 2 {
		var pe *pgconn.PgError
		if _, err := st.RefreshEntityTags(context.Background(), 100); !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("round %d: %v, want the timeout failing it whole", i+1, err)
		}
	}
	if len(failures) != 0 || tagged(t) != 0 {
		t.Fatalf("after rounds failing whole: failures %+v, %d tagged; want none", failures, tagged(t))
	}
	refreshAll(t, st, store.TagsRefresh{Entities: 10, Changed: 8, Republished: 8, Failed: 2, BackedOff: 2})
	if n, d := tagged(t), dirty(t); n != 8 || d != "e2:false,e7:false" {
		t.Fatalf("after the isolating round: %d tagged, dirty %q; want 8, e2 and e7", n, d)
	}
	if len(failures) != 2 || failures[0].EntityID != "e2" || failures[1].EntityID != "e7" ||
		!strings.Contains(fmt.Sprint(failures[0].Err), "57014") {
		t.Fatalf("failures reported %+v, want e2's and e7's timeouts", failures)
	}
	endBackoffs(t)
	refreshAll(t, st, store.TagsRefresh{Entities: 2, Failed: 2, BackedOff: 2})
	if len(failures) != 4 || failures[2].Failures != 2 || failures[3].Failures != 2 {
		t.Fatalf("failures reported %+v, want both a second time", failures)
	}
}

// TestEntityTagsFailedRoundCounts checks that a round failing midway (here its connection, after
// one half of its store committed) returns, with the error, the counts of what it stored.
func TestEntityTagsFailedRoundCounts(t *testing.T) {
	reset(t)
	lost := &pgconn.PgError{Code: "08006", Message: "connection failure"}
	st := store.New(pgtest.Pool(t), store.WithTagsStoreCheck(func(_ context.Context, ids []string) error {
		switch {
		case len(ids) == 10:
			return errors.New("refused")
		case slices.Contains(ids, "e9"):
			return lost
		}
		return nil
	}))
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("e%d", i))
	}
	tagEntities(t, st, ids...)
	got, err := st.RefreshEntityTags(context.Background(), 100)
	if want := (store.TagsRefresh{Entities: 10, Changed: 5, Republished: 5}); !errors.Is(err, lost) || got != want {
		t.Fatalf("round: %+v (%v), want %+v and the connection failure", got, err, want)
	}
	if n := tagged(t); n != 5 {
		t.Fatalf("%d entities tagged, want the first half's 5", n)
	}
}

// TestEntityTagsShutdownBacksOffNothing checks that a round whose context is canceled (shutdown)
// while it computes stops without backing off any entity and ends its leases.
func TestEntityTagsShutdownBacksOffNothing(t *testing.T) {
	reset(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := store.New(pgtest.Pool(t), store.WithTagsComputeCheck(func(ctx context.Context, id string) error {
		if id == "e5" {
			cancel()
			_, err := pgtest.Pool(t).Exec(ctx, `SELECT pg_sleep(5)`)
			return err
		}
		return nil
	}))
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("e%d", i))
	}
	tagEntities(t, st, ids...)
	if _, err := st.RefreshEntityTags(ctx, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("round: %v, want context.Canceled", err)
	}
	var held int
	if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT count(*) FROM intel.entity_tags_dirty
		WHERE failures > 0 OR retry_at IS NOT NULL OR claimed_at IS NOT NULL OR round_failures > 0`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Fatalf("%d entities backed off or leased after shutdown, want none", held)
	}
}
