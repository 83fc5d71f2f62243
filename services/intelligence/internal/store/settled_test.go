package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migration 18 settles the activity the journal does not hold (transfers pruned before it): c4,
// whose only transfer was pruned, and c1 and d1, which also have one in the journal. A reorg
// after the migration taking back the journal transfers falls back to the settled times, and c5,
// whose only transfer it takes back, goes away.
func TestSettledActivityMigration(t *testing.T) {
	ctx := context.Background()
	retention := store.JournalRetention
	store.JournalRetention = time.Hour
	t.Cleanup(func() { store.JournalRetention = retention })
	const hour = int64(time.Hour / time.Millisecond)
	pool, p := pgtest.MigrationDB(t, "intel_migrate18", migrations.Schema, migrations.FS, 4)
	if _, err := p.UpTo(ctx, 17); err != nil {
		t.Fatal(err)
	}
	c1, c4, c5, d1, e1, e2 := addr(0xc1), addr(0xc4), addr(0xc5), addr(0xd1), addr(0xe1), addr(0xe2)
	var offset int64
	tr := func(block, from, to string, ms int64) store.TransferFact {
		offset++
		return store.TransferFact{Offset: store.Offset{Topic: "chain.transfers.v1", Offset: offset}, Chain: "ethereum", ChainType: "evm",
			BlockHash: block, ID: fmt.Sprint(offset), From: from, To: to, TimeMs: ms, USD: 1}
	}
	st := store.New(pool)
	for _, batch := range [][]store.TransferFact{
		{tr("0xq1", c1, d1, 1000), tr("0xq1", c4, d1, 1000)},
		{tr("0xq2", c1, d1, 2*hour), tr("0xq2", c5, d1, 2*hour), tr("0xq2", e1, e2, 2*hour)}, // prunes 0xq1
	} {
		if err := st.ApplyTransfers(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.UpTo(ctx, 18); err != nil {
		t.Fatal(err)
	}
	if got, want := settledRows(t, pool), fmt.Sprintf("%s 1 1000 1000|%s 1 1000 1000|%s 2 1000 1000", c1, c4, d1); got != want {
		t.Fatalf("settled activity after the migration: %s, want %s", got, want)
	}
	if err := st.ApplyReorg(ctx, "ethereum", []string{"0xq2"}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := activityRows(t, pool), fmt.Sprintf("%s 1 1000 1000|%s 1 1000 1000|%s 2 1000 1000", c1, c4, d1); got != want {
		t.Fatalf("activity after the reorg: %s, want %s", got, want)
	}
}

func settledRows(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	return rowsText(t, pool, `SELECT address, transfer_count, first_ms, last_ms FROM intel.settled_activity ORDER BY address`)
}

func activityRows(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	return rowsText(t, pool, `SELECT address, transfer_count, first_ms, last_ms FROM intel.address_activity ORDER BY address`)
}

// rowsText renders a query's rows, values separated by spaces, rows by "|".
func rowsText(t *testing.T, pool *pgxpool.Pool, q string) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(vals), "["), "]"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "|")
}
