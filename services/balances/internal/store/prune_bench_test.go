package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// benchPruneWorld appends keys × 25 observations, one a day for 25 days (every 20th key's
// readings delivered twice), and 10 busy keys read every 15 minutes (2,400 each), orphans a block of day 23,
// marks them applied and gives each key its current row (the chain time is day 24). Nothing
// else is derived: the pruner reads only the mark, current's block times and orphaned_blocks.
// It returns how many observations it stored.
func benchPruneWorld(b *testing.B, s *store.Store, keys int) int {
	b.Helper()
	ctx := context.Background()
	n := 0
	for day := 0; day < 25; day++ {
		var batch []store.Observation
		for i := 0; i < keys; i++ {
			o := obs(keyAddr(i), "", int64(day*100), day0.Add(time.Duration(day*24)*time.Hour), strconv.Itoa(i*100+day))
			batch = append(batch, o)
			if i%20 == 0 {
				batch = append(batch, o)
			}
		}
		for i := 0; i < 10; i++ {
			for q := 0; q < 96; q++ {
				batch = append(batch, obs(keyAddr(keys+i), "", int64(day*100+q), day0.Add(time.Duration(day*96+q)*15*time.Minute), strconv.Itoa(q)))
			}
		}
		for len(batch) > 0 {
			m := min(len(batch), 5000)
			if err := s.AppendObservations(ctx, batch[:m]); err != nil {
				b.Fatal(err)
			}
			n += m
			batch = batch[m:]
		}
	}
	for _, sql := range []string{
		`INSERT INTO balances.orphaned_blocks (chain, hash) VALUES ('ethereum', '` + hashOf(2300) + `')`,
		`UPDATE balances.apply_mark SET id = (SELECT max(id) FROM balances.observations)`,
		`INSERT INTO balances.current (chain, address, token, block_number, block_hash, block_time, balance)
		 SELECT DISTINCT ON (address) chain, address, token, block_number, block_hash, block_time, balance
		 FROM balances.observations ORDER BY address, block_number DESC`,
		`VACUUM ANALYZE balances.observations`,
	} {
		if _, err := s.Pool().Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// BenchmarkPrune prints the pruner's rate (observations deleted per second, and observations
// walked per second) on a world of BENCH_PRUNE_KEYS keys (default 20,000: 549,000
// observations) with a retention of 72 h, a second pass's (nothing left to delete: the steady
// state's walk), beside the baseline: an unconditional DELETE of the same pages in the same
// ranges. BENCH_PRUNE_EXPLAIN=1 prints the plan of one range.
//
//	go test -run '^$' -bench Prune -benchtime 1x ./services/balances/internal/store/
func BenchmarkPrune(b *testing.B) {
	ctx := context.Background()
	keys := 20000
	if v, err := strconv.Atoi(os.Getenv("BENCH_PRUNE_KEYS")); err == nil && v > 0 {
		keys = v
	}
	const pages = 256
	for range b.N {
		b.StopTimer()
		s := fresh(b)
		stored := benchPruneWorld(b, s, keys)
		if os.Getenv("BENCH_PRUNE_EXPLAIN") != "" {
			must(s.PrunePass(ctx, 1000*time.Hour, pages)) // only stores the horizon: nothing is that old
			explainPrune(b, s, pages)
		}
		b.StartTimer()
		start := time.Now()
		res := must(s.PrunePass(ctx, 72*time.Hour, pages))
		took := time.Since(start)
		b.StopTimer()
		start = time.Now()
		again := must(s.PrunePass(ctx, 72*time.Hour, pages))
		againTook := time.Since(start)

		s = fresh(b)
		benchPruneWorld(b, s, keys)
		base := time.Now()
		var deleted int64
		for from := int64(0); from < res.Pages; from += pages {
			tag := must(s.Pool().Exec(ctx, `DELETE FROM balances.observations WHERE ctid >= $1 AND ctid < $2`,
				pgtype.TID{BlockNumber: uint32(from), Valid: true}, pgtype.TID{BlockNumber: uint32(from + pages), Valid: true}))
			deleted += tag.RowsAffected()
		}
		baseTook := time.Since(base)
		fmt.Printf("prune world: %d keys, %d observations on %d pages, retention 72h, ranges of %d pages (%d statements)\n",
			keys, stored, res.Pages, pages, res.Batches)
		fmt.Printf("%-58s %10s %12s %10s\n", "", "rows", "rows/s", "seconds")
		fmt.Printf("%-58s %10d %12.0f %10.2f\n", "pruner: observations deleted", res.Pruned, float64(res.Pruned)/took.Seconds(), took.Seconds())
		fmt.Printf("%-58s %10d %12.0f %10.2f\n", "pruner: observations walked", stored, float64(stored)/took.Seconds(), took.Seconds())
		fmt.Printf("%-58s %10d %12.0f %10.2f\n", "second pass: observations walked (none to delete)", int64(stored)-res.Pruned,
			float64(int64(stored)-res.Pruned)/againTook.Seconds(), againTook.Seconds())
		if again.Pruned != 0 {
			b.Fatalf("second pass pruned %d", again.Pruned)
		}
		fmt.Printf("%-58s %10d %12.0f %10.2f\n", "baseline: unconditional DELETE of the same page ranges", deleted, float64(deleted)/baseTook.Seconds(), baseTook.Seconds())
		b.ReportMetric(float64(res.Pruned)/took.Seconds(), "pruned/s")
		benchPruneBusy(b, pages)
	}
}

// benchBusyWorld stores, for each of keys busy keys, one reading an hour for ten days before the
// horizon and rows readings after it (72 h at equal steps, one block each), in time order (a
// page holds one reading of many keys), marks them applied and gives each key its current row.
func benchBusyWorld(b *testing.B, s *store.Store, keys, rows int) int64 {
	b.Helper()
	ctx := context.Background()
	var n int64
	for _, sql := range []string{
		`INSERT INTO balances.observations (chain, address, token, block_number, block_hash, block_time, balance)
		 SELECT 'ethereum', '0x' || lpad(to_hex(k), 40, '0'), '', i, to_hex(i) || 'aa',
		   CASE WHEN i < 240 THEN $3::timestamptz + i * interval '1 hour'
		        ELSE $3::timestamptz + interval '240 hours' + (i - 240) * (interval '72 hours' / $2::int) END,
		   i
		 FROM generate_series(0, 239 + $2::int) i, generate_series(1, $1::int) k ORDER BY i, k`,
		`UPDATE balances.apply_mark SET id = (SELECT max(id) FROM balances.observations)`,
		`INSERT INTO balances.current (chain, address, token, block_number, block_hash, block_time, balance)
		 SELECT DISTINCT ON (address) chain, address, token, block_number, block_hash, block_time, balance
		 FROM balances.observations ORDER BY address, block_number DESC`,
		`VACUUM ANALYZE balances.observations`,
	} {
		var args []any
		if n == 0 {
			args = []any{keys, rows, day0}
		}
		tag, err := s.Pool().Exec(ctx, sql, args...)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			n = tag.RowsAffected()
		}
	}
	return n
}

// benchPruneBusy prints a pass over a world of busy keys (BENCH_PRUNE_BUSY_KEYS, default 100,
// each with BENCH_PRUNE_BUSY_ROWS, default 20,000, readings after the horizon) beside the same
// pass with the previous statement (testdata/prune_observations_before.sql), whose probe from
// each key's base read every reading after the horizon; the previous statement's pass is rolled
// back and runs first.
func benchPruneBusy(b *testing.B, pages int64) {
	ctx := context.Background()
	keys, rows := 100, 20000
	if v, err := strconv.Atoi(os.Getenv("BENCH_PRUNE_BUSY_KEYS")); err == nil && v > 0 {
		keys = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_PRUNE_BUSY_ROWS")); err == nil && v > 0 {
		rows = v
	}
	before, err := os.ReadFile("testdata/prune_observations_before.sql")
	if err != nil {
		b.Fatal(err)
	}
	s := fresh(b)
	stored := benchBusyWorld(b, s, keys, rows)
	must(s.PrunePass(ctx, 1000*time.Hour, pages)) // stores the horizon only
	if _, err := s.Pool().Exec(ctx, `UPDATE balances.prune_horizon SET horizon = $1`, day0.Add(240*time.Hour)); err != nil {
		b.Fatal(err)
	}
	total := must(s.PrunePagesForTest(ctx))
	var prev rangeTimes
	err = pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, store.QueryText("prune_settings")); err != nil {
			return err
		}
		prev = timeRanges(total, pages, func(from int64) (int64, error) {
			tag, err := tx.Exec(ctx, string(before), tid(from), tid(from+pages))
			return tag.RowsAffected(), err
		})
		if prev.err != nil {
			return prev.err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		b.Fatal(err)
	}
	now := timeRanges(total, pages, func(from int64) (int64, error) { return s.PruneRange(ctx, from, from+pages) })
	if now.err != nil {
		b.Fatal(now.err)
	}
	fmt.Printf("busy world: %d keys, 240 readings before the horizon and %d after each, %d observations on %d pages\n",
		keys, rows, stored, total)
	fmt.Printf("%-58s %10s %10s %14s\n", "", "pruned", "seconds", "slowest range")
	fmt.Printf("%-58s %10d %10.2f %14.3f\n", "pruner: a pass", now.pruned, now.took.Seconds(), now.slowest.Seconds())
	fmt.Printf("%-58s %10d %10.2f %14.3f\n", "baseline: previous statement (searched past each base)", prev.pruned, prev.took.Seconds(), prev.slowest.Seconds())
}

// rangeTimes is what a pass of page ranges took: in all, and its slowest range.
type rangeTimes struct {
	pruned        int64
	took, slowest time.Duration
	err           error
}

func timeRanges(total, pages int64, prune func(from int64) (int64, error)) rangeTimes {
	var r rangeTimes
	start := time.Now()
	for from := int64(0); from < total; from += pages {
		t0 := time.Now()
		n, err := prune(from)
		if err != nil {
			r.err = err
			return r
		}
		r.slowest = max(r.slowest, time.Since(t0))
		r.pruned += n
	}
	r.took = time.Since(start)
	return r
}

var errRollback = errors.New("rollback")

func tid(p int64) pgtype.TID { return pgtype.TID{BlockNumber: uint32(p), Valid: true} }

// explainPrune prints the plan of the pruning statement over the first range, with its settings.
func explainPrune(b *testing.B, s *store.Store, pages uint32) {
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, store.QueryText("prune_settings")); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN `+store.QueryText("prune_observations"), pgtype.TID{BlockNumber: 0, Valid: true},
			pgtype.TID{BlockNumber: pages, Valid: true})
		if err != nil {
			return err
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, l := range lines {
			fmt.Println(l)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}
