package store

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// A failed round ends only the leases still carrying the marks it claimed: a row marked again
// since (possibly another refresher's lease now) keeps its lease.
func TestEntityTagsReleaseOwnLeasesOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty;
		INSERT INTO intel.entity_tags_dirty (entity_id, republish, mark, claimed_at)
		VALUES ('a', false, 100, now()), ('b', false, 200, now())`); err != nil {
		t.Fatal(err)
	}
	// The round claimed a at mark 100 and b at mark 150; b was marked again (200) since.
	if _, err := pool.Exec(ctx, entityTagsReleaseSQL, []string{"a", "b"}, []int64{100, 150}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := pool.QueryRow(ctx, `SELECT string_agg(entity_id || ':' || (claimed_at IS NULL), ',' ORDER BY entity_id)
		FROM intel.entity_tags_dirty`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "a:true,b:false" {
		t.Fatalf("leases ended %q, want a's only (a:true,b:false)", got)
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
	if _, err := pool.Exec(ctx, `TRUNCATE intel.entity_tags_dirty;
		INSERT INTO intel.entity_tags_dirty (entity_id, mark, claimed_at) VALUES ('a', 100, now())`); err != nil {
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
