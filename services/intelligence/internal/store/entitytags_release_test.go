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
		INSERT INTO intel.entity_tags_dirty (entity_id, republish, marked_by, claimed_at)
		VALUES ('a', false, '100', now()), ('b', false, '200', now())`); err != nil {
		t.Fatal(err)
	}
	// The round claimed a at mark 100 and b at mark 150; b was marked again (200) since.
	if _, err := pool.Exec(ctx, entityTagsReleaseSQL, []string{"a", "b"}, []string{"100", "150"}); err != nil {
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
