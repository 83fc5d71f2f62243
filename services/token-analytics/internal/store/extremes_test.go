package store

import (
	"context"
	"io/fs"
	"maps"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func emptyPrices(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `TRUNCATE market.tokens, market.deployments, market.prices,
		market.price_extremes, market.outbox`); err != nil {
		t.Fatal(err)
	}
}

// historyExtremes is what the stored history says: the highest and lowest point of each id.
func historyExtremes(t *testing.T, pool *pgxpool.Pool) map[string]app.Extremes {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT pricing_id, max(price), min(price) FROM market.prices GROUP BY pricing_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]app.Extremes{}
	for rows.Next() {
		var id string
		var e app.Extremes
		if err := rows.Scan(&id, &e.High, &e.Low); err != nil {
			t.Fatal(err)
		}
		out[id] = e
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkExtremes compares what the store reads (the kept table) with want and with the history.
func checkExtremes(t *testing.T, st *Store, step string, want map[string]app.Extremes) {
	t.Helper()
	ids := []string{"alpha", "beta", "gamma", "nohistory"}
	got, err := st.PriceExtremes(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: extremes %v, want %v", step, got, want)
	}
	if h := historyExtremes(t, st.Pool()); !maps.Equal(got, h) {
		t.Errorf("%s: extremes %v, history's %v", step, got, h)
	}
}

// TestPriceExtremesKeptByWrites: the stored extremes follow every write of history points,
// including corrections that move a stored extreme inward (recomputed from the history) and
// re-imports of the same points (nothing changes); ticks are not history.
func TestPriceExtremesKeptByWrites(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyPrices(t, pool)
	st := New(pool)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	d := func(id string, i int, price float64) app.PricePoint {
		return app.PricePoint{PricingID: id, Granularity: app.Daily, Time: day.AddDate(0, 0, i), Price: price}
	}
	h := func(id string, i int, price float64) app.PricePoint {
		return app.PricePoint{PricingID: id, Granularity: app.Hourly, Time: day.AddDate(0, 0, 30).Add(time.Duration(i) * time.Hour), Price: price}
	}
	add := func(wantChanged int, ps ...app.PricePoint) {
		t.Helper()
		n, err := st.AddPrices(ctx, ps)
		if err != nil {
			t.Fatal(err)
		}
		if n != wantChanged {
			t.Errorf("%d points new or changed, want %d", n, wantChanged)
		}
	}
	history := []app.PricePoint{d("alpha", 0, 10), d("alpha", 1, 50), d("alpha", 2, 5), d("alpha", 3, 20),
		h("alpha", 0, 40), h("alpha", 1, 45), d("beta", 0, 1), d("beta", 1, 2)}
	add(len(history), append(history, app.PricePoint{PricingID: "gamma", Granularity: app.Tick, Time: day, Price: 7})...)
	checkExtremes(t, st, "after the inserts", map[string]app.Extremes{"alpha": {High: 50, Low: 5}, "beta": {High: 2, Low: 1}})

	add(0, history...)
	checkExtremes(t, st, "after a re-import of the same points", map[string]app.Extremes{"alpha": {High: 50, Low: 5}, "beta": {High: 2, Low: 1}})

	add(2, d("alpha", 1, 30), d("alpha", 2, 6)) // the high corrected down, the low up
	checkExtremes(t, st, "after corrections of both extremes", map[string]app.Extremes{"alpha": {High: 45, Low: 6}, "beta": {High: 2, Low: 1}})

	add(1, h("alpha", 1, 44)) // the new high corrected down again, in the hourly history
	checkExtremes(t, st, "after a correction of the hourly high", map[string]app.Extremes{"alpha": {High: 44, Low: 6}, "beta": {High: 2, Low: 1}})

	add(1, d("alpha", 3, 21)) // not an extreme: nothing to recompute
	checkExtremes(t, st, "after a correction inside the range", map[string]app.Extremes{"alpha": {High: 44, Low: 6}, "beta": {High: 2, Low: 1}})

	// The high corrected down in the batch that brings a higher point: the batch's point wins.
	add(2, h("alpha", 0, 1), d("alpha", 10, 100))
	checkExtremes(t, st, "after a correction beside a new high", map[string]app.Extremes{"alpha": {High: 100, Low: 1}, "beta": {High: 2, Low: 1}})

	add(2, d("beta", 0, 3), d("beta", 1, 3)) // every point replaced, both extremes move
	checkExtremes(t, st, "after replacing all of beta", map[string]app.Extremes{"alpha": {High: 100, Low: 1}, "beta": {High: 3, Low: 3}})

	add(1, d("gamma", 0, 8), app.PricePoint{PricingID: "gamma", Granularity: app.Tick, Time: day.AddDate(0, 0, 1), Price: 700})
	checkExtremes(t, st, "after gamma's first history point", map[string]app.Extremes{"alpha": {High: 100, Low: 1}, "beta": {High: 3, Low: 3}, "gamma": {High: 8, Low: 8}})
}

// TestPriceExtremesConcurrentWriters has one writer store points of a pricing id without
// committing while a second writes the same id: the second must wait for the first, then read
// its points, so the stored extremes are the history's whatever the first changed. Over a
// history of 100, 50 and 10:
//   - the first stores a point above the high, the second corrects the high down (recomputed
//     from a history that must include the first's point);
//   - the first corrects the high down to 45 (the high is then 50, the second point), the
//     second corrects that point down to 40: it replaced the high as the first left it, so the
//     high must be recomputed, though before the first committed 50 was not the high.
func TestPriceExtremesConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := New(pool)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := func(i int, price float64) app.PricePoint {
		return app.PricePoint{PricingID: "alpha", Granularity: app.Daily, Time: day.AddDate(0, 0, i), Price: price}
	}
	for _, c := range []struct {
		name          string
		first, second app.PricePoint
		want          app.Extremes
	}{
		{"a new high beside a correction of the old", p(3, 80), p(0, 60), app.Extremes{High: 80, Low: 10}},
		{"the high corrected down twice", p(0, 45), p(1, 40), app.Extremes{High: 45, Low: 10}},
	} {
		emptyPrices(t, pool)
		if _, err := st.AddPrices(ctx, []app.PricePoint{p(0, 100), p(1, 50), p(2, 10)}); err != nil {
			t.Fatal(err)
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, sqlPricesLock); err != nil {
			t.Fatal(err)
		}
		f := c.first
		if _, err := upsertHistory(ctx, tx, historyBatch{[]string{f.PricingID}, []int16{int16(f.Granularity)}, []time.Time{f.Time},
			[]float64{f.Price}, []*float64{nil}, []*float64{nil}}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := st.AddPrices(ctx, []app.PricePoint{c.second})
			done <- err
		}()
		waitUntilBlocked(t, pool, done, c.name+": the second writer")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got, err := st.PriceExtremes(ctx, []string{"alpha"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]app.Extremes{"alpha": c.want}
		if h := historyExtremes(t, pool); !maps.Equal(got, want) || !maps.Equal(h, want) {
			t.Errorf("%s: extremes %v, history's %v, want %v", c.name, got, h, want)
		}
	}
}

// TestMigrationBackfillsPriceExtremes migrates a database holding history to the version
// before the extremes table, stores points, and applies the rest: the table must hold each
// pricing id's highest and lowest stored point.
func TestMigrationBackfillsPriceExtremes(t *testing.T) {
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, "taextremes")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	pool, err := pgstore.Connect(ctx, url, pgstore.Options{MaxConns: 2, AppName: "pgtest"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const extremes = "00012_price_extremes.sql"
	before := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n >= extremes {
			continue
		}
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		before[n] = &fstest.MapFile{Data: b}
	}
	if len(before) == len(names) {
		t.Fatalf("no migration %s", extremes)
	}
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, before, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO market.prices (pricing_id, granularity, time, price)
		SELECT 'id-' || (i % 3), 1 + (i % 2), TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * interval '1 hour', (i * 37) % 101 + (i % 3) * 1000 + 0.5
		FROM generate_series(1, 3000) i`); err != nil {
		t.Fatal(err)
	}
	want := historyExtremes(t, pool)
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		t.Fatal(err)
	}
	got, err := New(pool).PriceExtremes(ctx, []string{"id-0", "id-1", "id-2", "id-3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !maps.Equal(got, want) {
		t.Errorf("backfilled %v, want %v", got, want)
	}
}

// TestPricesInForce reads the price in force of many ids in one statement: each id's newest
// point of any granularity at or before the time (the hourly one of two at the same time), ids
// without one left out, an id asked twice answered once.
func TestPricesInForce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyPrices(t, pool)
	st := New(pool)
	day := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	if _, err := st.AddPrices(ctx, []app.PricePoint{
		{PricingID: "alpha", Granularity: app.Daily, Time: day.AddDate(0, 0, -1), Price: 1},
		{PricingID: "alpha", Granularity: app.Hourly, Time: day.Add(-2 * time.Hour), Price: 2},
		{PricingID: "alpha", Granularity: app.Daily, Time: day, Price: 3}, // after the time asked
		{PricingID: "beta", Granularity: app.Daily, Time: day.Add(-time.Hour).Truncate(24 * time.Hour), Price: 4},
		{PricingID: "beta", Granularity: app.Hourly, Time: day.Add(-24 * time.Hour), Price: 5}, // same time as the daily: wins
		{PricingID: "gamma", Granularity: app.Hourly, Time: day, Price: 6},                     // only after the time asked
	}); err != nil {
		t.Fatal(err)
	}
	got, err := st.PricesInForce(ctx, []string{"alpha", "beta", "gamma", "nohistory", "alpha"}, day.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"alpha": 2, "beta": 5}; !maps.Equal(got, want) {
		t.Errorf("prices in force %v, want %v", got, want)
	}
}
