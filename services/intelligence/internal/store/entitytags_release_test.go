package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// A failed round ends only the leases still carrying the marks and leases it claimed: a row
// marked again since (possibly another refresher's lease now), or whose lease expired and
// another refresher took at the same mark, keeps its lease.
func TestEntityTagsReleaseOwnLeasesOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	lease := time.Now().Add(-20 * time.Minute).Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.entity_tags_dirty (entity_id, republish, mark, claimed_at)
		VALUES ('a', false, 100, $1), ('b', false, 200, now()), ('c', false, 300, now())`, lease); err != nil {
		t.Fatal(err)
	}
	// The round claimed a at mark 100, b at mark 150 (marked again since: 200), and c at mark
	// 300 (its lease expired and another refresher holds it now), all with lease.
	if _, err := pool.Exec(ctx, entityTagsReleaseSQL, []string{"a", "b", "c"}, []int64{100, 150, 300},
		[]time.Time{lease, lease, lease}, false); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := pool.QueryRow(ctx, `SELECT string_agg(entity_id || ':' || (claimed_at IS NULL), ',' ORDER BY entity_id)
		FROM intel.entity_tags_dirty`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "a:true,b:false,c:false" {
		t.Fatalf("leases ended %q, want a's only (a:true,b:false,c:false)", got)
	}
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`); err != nil {
		t.Fatal(err)
	}
}

// A mark gives the row a new mark token and ends its lease even when the row's marked_by is the
// marking transaction's own id, as a row restored from a dump may carry (transaction ids start
// again low in the restored cluster): whether the transaction already marked the row is read
// from the row's xmin, not from marked_by.
func TestEntityTagsMarkAfterXidReuse(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	t.Cleanup(func() { _, _ = pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`) })
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.entity_tags_dirty (entity_id, mark, claimed_at) VALUES ('a', 100, now())`); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var xid string
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	// The "restored" row carries the id of the transaction about to mark it.
	if _, err := pool.Exec(ctx, `UPDATE intel.entity_tags_dirty SET marked_by = $1::xid8`, xid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT intel.mark_entity_tags(ARRAY['a'], false)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var mark int64
	var leased bool
	if err := pool.QueryRow(ctx, `SELECT mark, claimed_at IS NOT NULL FROM intel.entity_tags_dirty`).Scan(&mark, &leased); err != nil {
		t.Fatal(err)
	}
	if mark == 100 || leased {
		t.Fatalf("after a mark: token %d, leased %v; want a new token and no lease", mark, leased)
	}
}

// rowsState is each dirty row's failures, round failures, whether it is leased and whether it
// waits for a retry_at to come.
func rowsState(t *testing.T) string {
	t.Helper()
	var got string
	if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT string_agg(format('%s:%s/%s/%s/%s', entity_id, failures,
		round_failures, claimed_at IS NOT NULL, COALESCE(retry_at > now(), false)), ',' ORDER BY entity_id)
		FROM intel.entity_tags_dirty`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	return got
}

// A slow refresher's failure counts only on rows it still holds, or marked again since and not
// backed off since its claim: a row whose lease expired and that another refresher took and
// already backed off (at the same mark, or marked again) is not counted twice.
func TestEntityTagsBackoffOwnClaimOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	t.Cleanup(func() { _, _ = pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`) })
	lease := time.Now().Add(-20 * time.Minute).Truncate(time.Microsecond)
	// a: still ours. b: taken over (same mark) and backed off by another refresher. c: marked
	// again and backed off by another refresher. d: marked again, nobody's since. e: taken
	// over at the same mark, still leased by the other refresher.
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.entity_tags_dirty (entity_id, mark, claimed_at, failures, retry_at) VALUES
		('a', 1, $1, 0, NULL), ('b', 2, NULL, 1, now() + interval '30 seconds'),
		('c', 30, NULL, 1, now() + interval '30 seconds'), ('d', 40, NULL, 0, NULL), ('e', 5, now(), 0, NULL)`, lease); err != nil {
		t.Fatal(err)
	}
	ids, marks := []string{"a", "b", "c", "d", "e"}, []int64{1, 2, 3, 4, 5}
	leases := []time.Time{lease, lease, lease, lease, lease}
	if _, err := pool.Exec(ctx, entityTagsBackoffSQL, ids, marks, leases, 30.0, 3600.0); err != nil {
		t.Fatal(err)
	}
	if got, want := rowsState(t), "a:1/0/f/t,b:1/0/f/t,c:1/0/f/t,d:1/0/f/t,e:0/0/t/f"; got != want {
		t.Fatalf("after a slow refresher's backoff: %s, want %s", got, want)
	}
}

// A slow refresher's success on an entity marked again meanwhile ends only the failures counted
// before its claim: not one another refresher counted since.
func TestEntityTagsSucceededOwnClaimOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	t.Cleanup(func() { _, _ = pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`) })
	lease := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	// a failed before the claim (its backoff ended by then); b was marked again, then another
	// refresher claimed it and failed after this claim.
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.entity_tags_dirty (entity_id, mark, failures, round_failures, retry_at) VALUES
		('a', 10, 2, 1, $1::timestamptz - interval '1 second'), ('b', 20, 3, 0, now() + interval '30 seconds')`, lease); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, entityTagsSucceededSQL, []string{"a", "b"}, []time.Time{lease, lease}); err != nil {
		t.Fatal(err)
	}
	if got, want := rowsState(t), "a:0/0/f/f,b:3/0/f/t"; got != want {
		t.Fatalf("after a slow refresher's success: %s, want %s", got, want)
	}
}
