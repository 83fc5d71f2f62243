package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// markTriggers are the triggers that mark entities for a tags refresh (migration 00009).
var markTriggers = [][2]string{{"address_tags", "address_tags_mark_insert"}, {"address_tags", "address_tags_mark_update"},
	{"address_tags", "address_tags_mark_delete"}, {"addresses", "addresses_mark_insert"}, {"addresses", "addresses_mark_update"},
	{"addresses", "addresses_mark_delete"}, {"tags", "tags_mark"}}

func setMarkTriggers(b *testing.B, on bool) {
	b.Helper()
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	for _, tr := range markTriggers {
		if _, err := pgtest.Pool(b).Exec(context.Background(), "ALTER TABLE intel."+tr[0]+" "+verb+" TRIGGER "+tr[1]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEntityTags imports INTEL_BENCH_TAGGED (default 50,000) addresses of one entity, each
// with a tag, then moves them all to another entity (a more confident source), with and without
// the marking triggers (what marking costs those writes), and times the one refresh that
// recomputes both entities' tags from all their addresses.
func BenchmarkEntityTags(b *testing.B) {
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("INTEL_BENCH_TAGGED")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	apply := func(st *store.Store, bt importer.Batch) time.Duration {
		t0 := time.Now()
		if _, err := st.ApplyBatch(ctx, bt); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	run := func(on bool) (*store.Store, time.Duration, time.Duration) {
		st := reset(b)
		setMarkTriggers(b, on)
		defer setMarkTriggers(b, true)
		bt := batch("bench", "big", 0, n)
		for i := range bt.Claims {
			bt.Claims[i].Tags = []importer.TagRef{{ID: "hot", Params: strconv.Itoa(i % 10)}}
		}
		imp := apply(st, bt)
		mv := batch("better", "big2", 0, n)
		for i := range mv.Claims {
			mv.Claims[i].Confidence = 1
		}
		return st, imp, apply(st, mv)
	}
	for range b.N {
		_, impOff, mvOff := run(false)
		st, impOn, mvOn := run(true)
		t0 := time.Now()
		r, err := st.RefreshEntityTags(ctx, 100)
		if err != nil || r != (store.TagsRefresh{Entities: 2, Changed: 1, Republished: 1}) {
			b.Fatalf("refresh %+v, %v", r, err)
		}
		refresh := time.Since(t0)
		b.ReportMetric(float64(impOff.Milliseconds()), "import_ms_unmarked")
		b.ReportMetric(float64(impOn.Milliseconds()), "import_ms_marked")
		b.ReportMetric(float64(mvOff.Milliseconds()), "move_ms_unmarked")
		b.ReportMetric(float64(mvOn.Milliseconds()), "move_ms_marked")
		b.ReportMetric(float64(refresh.Milliseconds()), "refresh_ms")
		b.Logf("%d tagged addresses of one entity: import %s without the marking triggers, %s with them; moving them all to "+
			"another entity %s without, %s with; the refresh recomputing both entities %s", n, impOff.Round(time.Millisecond),
			impOn.Round(time.Millisecond), mvOff.Round(time.Millisecond), mvOn.Round(time.Millisecond), refresh.Round(time.Millisecond))
	}
}
