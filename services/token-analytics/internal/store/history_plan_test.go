package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The price routes' statements read a token's rows they answer, through the primary key, never
// its whole history: three tokens with ten years of daily points and two of hourly ones (about
// 64,000 rows) stored.
func TestPriceRoutesReadTheirRows(t *testing.T) {
	ctx := context.Background()
	pool := pricedHistory(t)
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	day := 24 * time.Hour
	for _, c := range []struct {
		name string
		sql  string
		args []any
		max  float64
	}{
		// 720 hourly points and the 30 daily ones at the same times (DISTINCT ON keeps the hourly).
		{"price_history_recent", sqlPriceHistoryRecent, []any{"b", ago(30 * day), now, 10000}, 760},
		{"price_history_newest", sqlPriceHistoryNewest, []any{"b", int16(1), 1000}, 1000},
		{"price_in_force_times", sqlPriceInForceTimes, []any{"b", []time.Time{ago(day), ago(7 * day), ago(30 * day), ago(180 * day)}}, 8},
		{"price_window_extremes", sqlPriceWindowExtremes, []any{"b", ago(day), now}, 26},
		{"price_first_time", sqlPriceFirstTime, []any{"b"}, 2},
	} {
		var plan []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+c.sql, c.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if read := rowsRead(t, plan, "prices"); read > c.max {
			t.Errorf("%s read %.0f rows of market.prices, want at most %.0f: %s", c.name, read, c.max, plan)
		}
		rows, err := pool.Query(ctx, "EXPLAIN (COSTS OFF) "+c.sql, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		t.Logf("%s:\n%s", c.name, strings.Join(lines, "\n"))
	}
}

// pricedHistory stores, for the pricing ids a, b and c, daily points from 2016-01-11 and hourly
// ones from 2024-01-11 up to 2026-01-10 12:00.
func pricedHistory(t *testing.T) *pgxpool.Pool {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.prices;
		INSERT INTO market.prices (pricing_id, granularity, time, price)
		SELECT id, 1, d, 1 + random() FROM unnest('{a,b,c}'::text[]) AS id,
			generate_series(timestamptz '2016-01-11 00:00+00', timestamptz '2026-01-10 00:00+00', interval '1 day') AS d;
		INSERT INTO market.prices (pricing_id, granularity, time, price)
		SELECT id, 2, h, 1 + random() FROM unnest('{a,b,c}'::text[]) AS id,
			generate_series(timestamptz '2024-01-11 00:00+00', timestamptz '2026-01-10 12:00+00', interval '1 hour') AS h;
		ANALYZE market.prices`); err != nil {
		t.Fatal(err)
	}
	return pool
}
