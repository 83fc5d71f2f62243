package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
)

// Migration 17 removes the contract records earlier ingest releases published for EIP-7702
// delegated EOAs and their contract mark, with a new version the outbox relay publishes; a real
// contract keeps its record and mark, and so does a delegated address another record of which
// holds a contract's code.
func TestMigrationUnmarksDelegatedEOAs(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "intel_migrate17", migrations.Schema, migrations.FS, 4)
	if _, err := p.UpTo(ctx, 16); err != nil {
		t.Fatal(err)
	}
	const eoa, both, contract = "0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222", "0x3333333333333333333333333333333333333333"
	delegation := "0xef0100" + "4444444444444444444444444444444444444444"
	code := "0x6080604052348015600f57600080fd5b50"
	rec := func(chain, addr, bytecode string) store.Contract {
		return store.Contract{Chain: chain, ChainType: "evm", Address: addr, CodeKnown: true, Bytecode: bytecode, BytecodeSize: (len(bytecode) - 2) / 2}
	}
	st := store.New(pool)
	// What an earlier release stored; store.ApplyContracts takes records as given.
	if err := st.ApplyContracts(ctx, []store.Contract{rec("ethereum", eoa, delegation), rec("base", eoa, delegation),
		rec("ethereum", both, delegation), rec("base", both, code), rec("ethereum", contract, code)}); err != nil {
		t.Fatal(err)
	}
	got := changedByMigration(t, pool, p, 17, func(a attribution.Address) string {
		return fmt.Sprintf("%s contract=%v", a.Address, a.IsContract)
	})
	if want := "[" + eoa + " contract=false]"; fmt.Sprint(got) != want {
		t.Errorf("attributions changed: %v, want %s", got, want)
	}
	rows, err := pool.Query(ctx, `SELECT chain || ' ' || address FROM intel.contracts ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]string{"base " + both, "ethereum " + contract}); fmt.Sprint(left) != want {
		t.Errorf("contract records left: %v, want %s", left, want)
	}
}

// changedByMigration migrates to version and returns, in version order, the attributions the
// migration gave a new version, each as show renders it: what the outbox relay publishes.
func changedByMigration(t *testing.T, pool *pgxpool.Pool, p *goose.Provider, version int64, show func(attribution.Address) string) []string {
	t.Helper()
	ctx := context.Background()
	var before int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM intel.addresses`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	changed, err := store.New(pool).AddressesSince(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range changed {
		got = append(got, show(a))
	}
	return got
}
