package store_test

import (
	"context"
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
	}
}

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
