package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The previous release's statements that store or settle transfer copies (its transfer batches
// and reorgs), as it sends them: replicas of that release run beside this one during a rolling
// upgrade, after the migrations, without the close lock.
var (
	previousCopyColumns = []string{"chain", "id", "chain_type", "block_hash", "hour", "token", "from_addr", "to_addr", "value", "usd", "counted"}
	previousFlowsInsert = `INSERT INTO market.flows (chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd, counted)
SELECT chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd, false
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
            $7::text[], $8::text[], $9::float8[], $10::float8[])
    AS t(chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd)
ON CONFLICT (chain, id, block_hash) DO NOTHING`
	previousKeysBlocks = `WITH keys AS (
    SELECT DISTINCT chain, id FROM market.flows WHERE chain = $1 AND block_hash = ANY($2::text[])
)
SELECT count(*) FROM keys`
)

// TestMigrationFailsPreviousWriters runs the previous release's transfer writes (the first
// copies' COPY, the other copies' insert) and its reorg's settling against the migrated schema:
// each must fail on the renamed column, so a batch or reorg of a previous-release replica is
// rolled back and retried by a replica of this release, never committed beside a close's build.
func TestMigrationFailsPreviousWriters(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	hour := closeClock.Truncate(time.Hour)
	row := []any{"ethereum", "0xold_0", "evm", "0xbold", hour, "0xt", "0xa", "0xb", 1.0, 1.0, true}
	arrays := make([]any, 10)
	for i := range arrays {
		switch v := row[i].(type) {
		case string:
			arrays[i] = []string{v}
		case time.Time:
			arrays[i] = []time.Time{v}
		case float64:
			arrays[i] = []float64{v}
		}
	}
	writes := map[string]func(pgx.Tx) error{
		"COPY of first copies": func(tx pgx.Tx) error {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"market", "flows"}, previousCopyColumns, pgx.CopyFromRows([][]any{row}))
			return err
		},
		"insert of other copies": func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, previousFlowsInsert, arrays...)
			return err
		},
		"reorg's settling": func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, previousKeysBlocks, "ethereum", []string{"0xbold"})
			return err
		},
	}
	for name, write := range writes {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = write(tx)
		_ = tx.Rollback(ctx)
		if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42703" {
			t.Errorf("the previous release's %s: %v, want an undefined column", name, err)
		}
	}
}

// TestMigrationDropsFlowClass: migration 00020 drops market.flow_class, the class rule before
// deposit addresses. The class lookup of this release and the previous one (classes_of.sql,
// unchanged since 00019) names market.address_class only and still runs.
func TestMigrationDropsFlowClass(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	var gone bool
	if err := pool.QueryRow(ctx, `SELECT to_regprocedure('market.flow_class(text,boolean)') IS NULL`).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if !gone {
		t.Error("market.flow_class is still there after the migrations")
	}
	rows, err := pool.Query(ctx, sqlClassesOf, []string{"evm"}, []string{"0xa"})
	if err == nil {
		_, err = pgx.CollectRows(rows, pgx.RowToMap)
	}
	if err != nil {
		t.Errorf("the class lookup of this and the previous release: %v", err)
	}
}

// TestFlowTimesOfPreviousWriters: migration 00021 adds market.flows.block_time, which the
// previous release's COPY does not name: its writes still succeed, and the copies it stores (no
// block time) are read as at their hour's start, so a window starting inside their hour leaves
// them out, a window from the hour's start counts them, on top_flow (open and closed hours) and
// volume alike.
func TestFlowTimesOfPreviousWriters(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	hour := clockHour.Add(-2 * time.Hour)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"market", "flows"}, flowsCopyColumns[:len(flowsCopyColumns)-1],
		pgx.CopyFromRows([][]any{{"ethereum", "0xold_0", "evm", "0xbold", hour, "0xt", "0xa", "0xb", 1.0, 1.0, true}}))
	_ = tx.Rollback(ctx)
	if err != nil {
		t.Fatalf("the previous release's COPY: %v", err)
	}
	flow := func(id string, minute int, usd float64) app.Flow {
		return app.Flow{Chain: "ethereum", ID: id, ChainType: "evm", BlockHash: "0xb" + id, Time: hour.Add(time.Duration(minute) * time.Minute),
			Token: "0xt", From: "0xa", To: "0xb", Value: usd, USD: usd}
	}
	if err := st.ApplyFlows(ctx, []app.Flow{flow("0x10_0", 10, 1), flow("0x40_0", 40, 2), flow("0x50_0", 50, 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE market.flows SET block_time = NULL WHERE id = '0x50_0'`); err != nil {
		t.Fatal(err)
	}
	deps := []app.Deployment{{Chain: "ethereum", Address: "0xt"}}
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			from time.Time
			usd  float64
		}{{hour, 7}, {hour.Add(30 * time.Minute), 2}, {hour.Add(45 * time.Minute), 0}} {
			fs, err := st.TopFlows(ctx, deps, c.from, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := 0.0
			for _, f := range fs {
				got += f.InUSD
			}
			bs, err := st.Volume(ctx, deps, c.from, clockHour.Add(time.Hour), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			vol := 0.0
			for _, b := range bs {
				vol += b.USD
			}
			if got != c.usd || vol != c.usd {
				t.Errorf("%s, from %s: top_flow %v, volume %v, want %v", when, c.from.Format(time.TimeOnly), got, vol, c.usd)
			}
		}
	}
	check("open hours")
	if _, err := st.CloseAllHours(ctx); err != nil {
		t.Fatal(err)
	}
	check("closed hours")
}
