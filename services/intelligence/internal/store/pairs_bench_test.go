package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// pairTriggers are the triggers that move entities' internal figures on relabels (migration 13).
var pairTriggers = []string{"addresses_queue_move_insert", "addresses_queue_move_update", "addresses_queue_move_delete", "addresses_apply_moves"}

func setPairTriggers(b *testing.B, on bool) {
	b.Helper()
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	for _, tr := range pairTriggers {
		if _, err := pgtest.Pool(b).Exec(context.Background(), "ALTER TABLE intel.addresses "+verb+" TRIGGER "+tr); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkEntityMoves measures what the entities' internal figures cost: importing
// INTEL_BENCH_ENTITY_ADDRESSES (50,000) addresses of one entity whose pairs are already counted
// (each address paid the next; address 0, a hot wallet, also paid INTEL_BENCH_PAIRS, 500,000,
// unattributed addresses), with and without the triggers; moving the hot wallet alone to another
// entity (its pairs are read); and the summary's query over the entity's remaining addresses.
func BenchmarkEntityMoves(b *testing.B) {
	n, m := benchEnv("INTEL_BENCH_ENTITY_ADDRESSES", 50_000), benchEnv("INTEL_BENCH_PAIRS", 500_000)
	ctx := context.Background()
	pool := pgtest.Pool(b)
	seed := func() *store.Store {
		st := reset(b)
		if _, err := pool.Exec(ctx, `TRUNCATE intel.pair_activity, intel.entity_internal, intel.address_activity`); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO intel.pair_activity
			SELECT 'evm', '0x' || lpad(to_hex(i), 40, '0'), '0x' || lpad(to_hex(i + 1), 40, '0'), 1, 1 FROM generate_series(0, $1 - 2) i
			UNION ALL SELECT 'evm', '0x' || lpad(to_hex(0), 40, '0'), '0x' || lpad(to_hex(268435456 + j), 40, '0'), 2, 1 FROM generate_series(1, $2) j`, n, m); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO intel.address_activity
			SELECT 'evm', '0x' || lpad(to_hex(i), 40, '0'), 3, 2, 1000, 2000 FROM generate_series(0, $1 - 1) i`, n); err != nil {
			b.Fatal(err)
		}
		return st
	}
	timed := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for range b.N {
		st := seed()
		setPairTriggers(b, false)
		off := timed(func() error { _, err := st.ApplyBatch(ctx, batch("bench", "big", 0, n)); return err })
		setPairTriggers(b, true)
		st = seed()
		on := timed(func() error { _, err := st.ApplyBatch(ctx, batch("bench", "big", 0, n)); return err })
		hot := batch("better", "hot", 0, 1)
		hot.Claims[0].Confidence = 1
		move := timed(func() error { _, err := st.ApplyBatch(ctx, hot); return err })
		var a store.EntityActivity
		summary := timed(func() error { var err error; a, err = st.EntityActivity(ctx, "big"); return err })
		// big keeps addresses 1..n-1: 3 USD each, less the n-2 transfers between two of them.
		if a.NumAddresses != int64(n-1) || a.VolumeUSD != float64(3*(n-1)-(n-2)) || a.TransferCount != int64(2*(n-1)-(n-2)) {
			b.Fatalf("big: %+v", a)
		}
		b.ReportMetric(float64(off.Milliseconds()), "import_ms_untriggered")
		b.ReportMetric(float64(on.Milliseconds()), "import_ms_triggered")
		b.ReportMetric(float64(move.Milliseconds()), "hot_move_ms")
		b.ReportMetric(float64(summary.Microseconds())/1000, "summary_ms")
		b.Logf("%d addresses of one entity, %d pairs: import %s without the pair triggers, %s with them; moving the hot wallet (%d pairs) %s; summary %s",
			n, n-1+m, off.Round(time.Millisecond), on.Round(time.Millisecond), m+1, move.Round(time.Millisecond), summary.Round(time.Microsecond))
	}
}
