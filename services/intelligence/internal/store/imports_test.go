package store_test

import (
	"context"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
)

// Importing the same file again (every start of the local stack imports its seed) changes no
// address tag: nothing deleted and written back, nothing in the change log that
// /intelligence/address_tags/updates serves, no entity marked for a tags refresh. A re-import
// that drops one tag and adds another logs exactly those.
func TestReimportChangesNoTag(t *testing.T) {
	ctx := context.Background()
	st := reset(t)
	pool := pgtest.Pool(t)
	b := batch("s", "acme", 0, 20, importer.TagRef{ID: "cex"}, importer.TagRef{ID: "hot", Params: "eth"})
	if _, err := st.ApplyBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RefreshEntityTags(ctx, 100); err != nil {
		t.Fatal(err)
	}
	logged := func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM intel.change_log WHERE kind = 'address_tag'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := logged()
	if _, err := st.ApplyBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := logged(); n != before {
		t.Fatalf("re-import of the same batch logged %d address tag changes, want none", n-before)
	}
	if d := dirty(t); d != "" {
		t.Fatalf("re-import of the same batch marked entities %q for a tags refresh", d)
	}
	// Address 0 drops "hot" and gains "cold".
	b.Claims[0].Tags = []importer.TagRef{{ID: "cex"}, {ID: "cold"}}
	b.Tags = append(b.Tags, b.Tags[0])
	b.Tags[len(b.Tags)-1].ID, b.Tags[len(b.Tags)-1].Label = "cold", "Cold"
	if _, err := st.ApplyBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := logged(); n != before+2 {
		t.Fatalf("re-import with one tag replaced logged %d address tag changes, want 2", n-before)
	}
}
