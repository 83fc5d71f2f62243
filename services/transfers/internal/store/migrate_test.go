package store_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
)

// A database written by the version 2 schema (rows, the per-address rollups it kept) migrates to
// the current schema with the same rows and rollups, and the attribution groups' rollups built by
// Reconcile: exactly the state of loading the world into the current schema.
func TestMigrationFromVersion2(t *testing.T) {
	ctx := context.Background()
	pool, p := migrationDB(t, "transfers_migrate")
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}

	// The world as version 2 stored it: rows, blocks, attributions, and its four rollups.
	var trs []store.TransferRow
	for _, m := range tw.Transfers() {
		r, err := events.TransferRow(m)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, r)
		if _, err := pool.Exec(ctx, `SELECT transfers.ensure_partition('transfers', $1)`, r.BlockTime); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"transfers", "transfers"}, store.TransferColumns(), pgx.CopyFromSlice(len(trs), func(i int) ([]any, error) {
		return store.TransferValues(trs[i]), nil
	})); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO transfers.blocks SELECT DISTINCT chain, block_hash, block_number, block_time FROM transfers.transfers`,
		`INSERT INTO transfers.pair_hourly SELECT from_addr, to_addr, date_trunc('hour', block_time, 'UTC'), chain, token, min(token_id),
		   count(*), sum(coalesce(usd, 0)::numeric), sum(unit_value::numeric) FROM transfers.transfers GROUP BY 1, 2, 3, 4, 5`,
		`INSERT INTO transfers.chain_hourly SELECT date_trunc('hour', block_time, 'UTC'), chain, token, min(token_id), count(*),
		   sum(coalesce(usd, 0)::numeric) FROM transfers.transfers GROUP BY 1, 2, 3`,
		`INSERT INTO transfers.addr_hourly SELECT a, date_trunc('hour', block_time, 'UTC'), chain, token, min(token_id),
		   sum(i), sum(i * coalesce(usd, 0)::numeric), sum(i * unit_value::numeric),
		   sum(1 - i), sum((1 - i) * coalesce(usd, 0)::numeric), sum((1 - i) * unit_value::numeric)
		 FROM transfers.transfers, LATERAL (VALUES (from_addr, 0), (to_addr, 1)) v(a, i) GROUP BY 1, 2, 3, 4`,
		`INSERT INTO transfers.addr_daily SELECT address, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), sum(in_n),
		   sum(in_usd), sum(in_value), sum(out_n), sum(out_usd), sum(out_value) FROM transfers.addr_hourly GROUP BY 1, 2, 3, 4`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range tw.Attributions() {
		// Version 2 had no group tables: write its read model directly.
		var eid, etype string
		if a.Entity != nil {
			eid, etype = a.Entity.Id, a.Entity.Type
		}
		if _, err := pool.Exec(ctx, `INSERT INTO transfers.attributions (chain_type, address, entity_id, entity_type, label,
			predicted_id, deposit_service_id, is_contract, version, updated_at) VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, now())`,
			a.ChainType, a.Address, eid, etype, a.Label, a.DepositServiceId, a.IsContract, a.Version); err != nil {
			t.Fatal(err)
		}
	}

	// Migrate, then build the groups.
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		t.Fatal(err)
	}
	v3 := newStore(pool, withGroupMin(0))
	if err := v3.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, pool)

	// The same world loaded into the current schema (attributions and rows only: transactions
	// and swaps were not part of the version 2 load above).
	fresh := pgtest.Pool(t)
	reset(t, fresh)
	defer func(m int) { groupMin = m }(groupMin)
	groupMin = 0
	hf, _ := handlers(fresh)
	if err := hf.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	if err := hf.Transfers(ctx, tw.Msgs(tw.Transfers())); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, fresh)
	if got != want {
		t.Fatalf("migrated:\n%s\nwant (loaded into the current schema):\n%s", got, want)
	}
	if !strings.Contains(got, "e:binance|3|true") {
		t.Fatalf("groups not built:\n%s", got)
	}
	var uids int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers WHERE uid = transfers.transfer_uid(tx_hash, chain, id, block_hash)`).Scan(&uids); err != nil || uids != len(trs) {
		t.Fatalf("%d rows with their natural id (%v), want %d", uids, err, len(trs))
	}
}

// Migration 8 turns the group pair rollups a version 7 writer kept (entity pairs only, a group's
// pairs with itself included) into the current ones (every pair of two different live groups):
// the world loaded into the current schema, taken down to version 7 and up again, is unchanged,
// and at version 7 it holds only entity pairs.
func TestMigrationOfGroupPairs(t *testing.T) {
	ctx := context.Background()
	pool, p := migrationDB(t, "transfers_migrate8")
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	st := newStore(pool, withGroupMin(0))
	h := events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)}
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(tw.Transfers())); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, pool)
	var mixed, self int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE from_grp LIKE 't:%' OR to_grp LIKE 't:%'),
		count(*) FILTER (WHERE from_grp = to_grp) FROM transfers.grp_pair_hourly`).Scan(&mixed, &self); err != nil {
		t.Fatal(err)
	}
	if mixed == 0 || self != 0 {
		t.Fatalf("current writer: %d pair rows with a type group (want some), %d of a group with itself (want 0)", mixed, self)
	}

	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE from_grp LIKE 't:%' OR to_grp LIKE 't:%'),
		count(*) FILTER (WHERE from_grp = to_grp) FROM transfers.grp_pair_hourly`).Scan(&mixed, &self); err != nil {
		t.Fatal(err)
	}
	if mixed != 0 || self == 0 {
		t.Fatalf("version 7: %d pair rows with a type group (want 0), %d of a group with itself (want some)", mixed, self)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, pool); got != want {
		t.Fatalf("migrated:\n%s\nwant (written by the current writer):\n%s", got, want)
	}
}

// Migration 18 turns the rows a version 17 writer queued for the rollups (their columns) into
// keys of transfers, and back: the world loaded with its rollups queued (with a twin of a
// transfer, identical in every queued column), taken down to version 17 and up again, still has
// every row queued once, and applied it is the state of loading it inline.
func TestMigrationOfQueuedRows(t *testing.T) {
	ctx := context.Background()
	pool, p := migrationDB(t, "transfers_migrate18")
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { queuedRollups = false }()
	twin, err := events.TransferRow(tw.Transfers()[0])
	if err != nil {
		t.Fatal(err)
	}
	twin.ID += "-twin"
	load := func(queued bool) {
		_, st := loadWorld(t, pool, queued)
		if _, err := st.WriteTransfers(ctx, []store.TransferRow{twin}); err != nil {
			t.Fatal(err)
		}
	}
	load(false)
	want := snapshot(t, pool)

	load(true)
	stored := int64(len(tw.Transfers()) + 1)
	count := func(table string) (n int64) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.`+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("rollup_keys"); n != stored {
		t.Fatalf("%d keys queued, want %d", n, stored)
	}
	if _, err := p.DownTo(ctx, 17); err != nil {
		t.Fatal(err)
	}
	if n := count("rollup_queue"); n != stored {
		t.Fatalf("version 17: %d rows queued, want %d", n, stored)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var distinct int64
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT (k.block_time, k.uid)) FROM transfers.rollup_keys k
		JOIN transfers.transfers t USING (block_time, uid)`).Scan(&distinct); err != nil || distinct != stored {
		t.Fatalf("%d distinct stored transfers queued (%v), want %d", distinct, err, stored)
	}
	if got := snapshot(t, pool); got != want {
		t.Fatalf("queued across migration 18 and back, applied:\n%s\nwant (inline):\n%s", got, want)
	}
}

// migrationDB creates a scratch database with an empty transfers schema and returns a pool on
// it and a goose provider of the transfers migrations; both go at the end of the test.
func migrationDB(t *testing.T, name string) (*pgxpool.Pool, *goose.Provider) {
	t.Helper()
	return pgtest.MigrationDB(t, name, migrations.Schema, migrations.FS, 2)
}
