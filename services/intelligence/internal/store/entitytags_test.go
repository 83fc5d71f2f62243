package store_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/inteltest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

func TestMain(m *testing.M) { os.Exit(inteltest.Main(m)) }

// reset empties the tables the tests write and returns a store over them.
func reset(tb testing.TB) *store.Store {
	tb.Helper()
	pool := pgtest.Pool(tb)
	if _, err := pool.Exec(context.Background(), `TRUNCATE intel.entities, intel.tags, intel.claims, intel.address_tags,
		intel.addresses, intel.change_log, intel.entity_tags_dirty CASCADE; UPDATE intel.publish_cursor SET version = 0`); err != nil {
		tb.Fatal(err)
	}
	return store.New(pool)
}

func addr(i int) string { return fmt.Sprintf("0x%040x", i) }

// batch claims n addresses (from first) for entity, each with tags.
func batch(source, entity string, first, n int, tags ...importer.TagRef) importer.Batch {
	b := importer.Batch{Source: source, Entities: []attribution.Entity{{ID: entity, Name: entity, Type: "cex"}},
		Tags: []attribution.Tag{{ID: "cex", Label: "Exchange", Rank: 1}, {ID: "hot", Label: "Hot {param}", Rank: 2}}}
	for i := first; i < first+n; i++ {
		b.Claims = append(b.Claims, importer.Claim{ChainType: "evm", Address: addr(i), EntityID: entity, Confidence: 0.9, Tags: tags})
	}
	return b
}

func dirty(t *testing.T) string {
	t.Helper()
	var s string
	if err := pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT COALESCE(string_agg(entity_id || ':' || republish, ',' ORDER BY entity_id), '') FROM intel.entity_tags_dirty`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func refresh(t *testing.T, st *store.Store, want store.TagsRefresh) {
	t.Helper()
	got, err := st.RefreshEntityTags(context.Background(), 100)
	if err != nil || got != want {
		t.Fatalf("refresh: %+v (%v), want %+v", got, err, want)
	}
}

func storedTags(t *testing.T, entity string) string {
	t.Helper()
	var s string
	if err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT populated_tags::text FROM intel.entities WHERE id = $1`, entity).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEntityTagsRecomputedOncePerEntity checks that however many addresses of an entity a
// statement tags, the entity is marked once and one round recomputes it once, matching what
// /intelligence/entity computes; and that tag definition changes and addresses leaving an
// entity mark it too.
func TestEntityTagsRecomputedOncePerEntity(t *testing.T) {
	st := reset(t)
	ctx := context.Background()
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 500)); err != nil {
		t.Fatal(err)
	}
	if got := dirty(t); got != "" {
		t.Fatalf("untagged addresses marked %q", got)
	}
	// Tag all 500 addresses: one mark, one recomputation, one re-versioned address.
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 500, importer.TagRef{ID: "cex"}, importer.TagRef{ID: "hot", Params: "eth"})); err != nil {
		t.Fatal(err)
	}
	if got := dirty(t); got != "acme:false" {
		t.Fatalf("dirty %q, want acme once", got)
	}
	refresh(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	refresh(t, st, store.TagsRefresh{})
	want := `[{"id": "cex", "rank": 1, "chain": "", "label": "Exchange", "params": "", "disablePage": false, "excludeEntities": false}, ` +
		`{"id": "hot", "rank": 2, "chain": "", "label": "Hot {param}", "params": "eth", "disablePage": false, "excludeEntities": false}]`
	if got := storedTags(t, "acme"); got != want {
		t.Fatalf("stored tags %s, want %s", got, want)
	}
	live, err := st.EntityTags(ctx, "acme")
	if err != nil || len(live) != 2 || live[0].Tag.ID != "cex" || live[1].Params != "eth" {
		t.Fatalf("EntityTags %+v, %v", live, err)
	}
	// The same batch again: no tag row changes, so nothing is marked (TestReimportChangesNoTag).
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 500, importer.TagRef{ID: "cex"}, importer.TagRef{ID: "hot", Params: "eth"})); err != nil {
		t.Fatal(err)
	}
	refresh(t, st, store.TagsRefresh{})
	// A tag's definition changes: the entities carrying it are marked.
	b := batch("other", "other", 1000, 0)
	b.Tags[1].Label = "Hot wallet {param}"
	if _, err := st.ApplyBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := dirty(t); got != "acme:false" {
		t.Fatalf("dirty after a tag definition change %q", got)
	}
	refresh(t, st, store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1})
	if got := storedTags(t, "acme"); !strings.Contains(got, `"Hot wallet {param}"`) {
		t.Fatalf("stored tags after the definition changed: %s", got)
	}
	// Two of three untagged addresses moving to another entity (a more confident source): the entity they
	// leave is marked for republication (the moved address may have carried its newest details),
	// the one they join is not (they bring no tags).
	plain := batch("s", "plain", 2000, 3)
	plain.Tags = nil
	if _, err := st.ApplyBatch(ctx, plain); err != nil {
		t.Fatal(err)
	}
	moved := batch("better", "kraken", 2000, 2)
	moved.Tags = nil
	for i := range moved.Claims {
		moved.Claims[i].Confidence = 1
	}
	if _, err := st.ApplyBatch(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if got := dirty(t); got != "plain:true" {
		t.Fatalf("dirty after moving untagged addresses %q, want plain:true", got)
	}
	refresh(t, st, store.TagsRefresh{Entities: 1, Republished: 1})
}

// TestPublisherReadsStoredTags checks that the publisher's query reads entities' tags from the
// entity row: its plan touches no address tags and no other address than the published ones.
func TestPublisherReadsStoredTags(t *testing.T) {
	st := reset(t)
	ctx := context.Background()
	if _, err := st.ApplyBatch(ctx, batch("s", "acme", 0, 50, importer.TagRef{ID: "cex"})); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"WHERE a.version > 0 ORDER BY a.version LIMIT 1000",
		"WHERE (a.chain_type, a.address) > ('', '') ORDER BY a.chain_type, a.address LIMIT 1000"} {
		var plan string
		if err := pgtest.Pool(t).QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+store.AttributionSelect+where).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plan, `"address_tags"`) || strings.Count(plan, `"Relation Name": "addresses"`) != 1 {
			t.Fatalf("publisher plan reads more than the published addresses and their entities:\n%s", plan)
		}
	}
}
