package store_test

import (
	"context"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// fresh empties every table so each test owns a known world.
func fresh(t testing.TB) *store.Store {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), `TRUNCATE balances.observations, balances.orphaned_blocks, balances.current,
		balances.token_supply, balances.address_daily, balances.entity_change, balances.entity_current, balances.observed_tokens,
		balances.market_tokens, balances.deployments, balances.prices, balances.price_days, balances.attributions, balances.entities,
		balances.top_holders, balances.top_floor, balances.prune_horizon`); err != nil {
		t.Fatal(err)
	}
	return store.New(pool)
}

func big10(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

var day0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func obs(addr, token string, block int64, at time.Time, bal string) store.Observation {
	return store.Observation{Chain: "ethereum", Address: addr, Token: token, BlockNumber: block, BlockHash: hashOf(block),
		BlockTime: at, Balance: big10(bal), TokenDecimals: 18}
}

func hashOf(block int64) string { return "0x" + big.NewInt(block).Text(16) + "aa" }

// state reads one value with SQL.
func state(t *testing.T, s *store.Store, sql string, args ...any) string {
	t.Helper()
	var v *string
	if err := s.Pool().QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if v == nil {
		return "<null>"
	}
	return *v
}

func current(t *testing.T, s *store.Store, addr, token string) string {
	return state(t, s, `SELECT balance::text FROM balances.current WHERE chain='ethereum' AND address=$1 AND token=$2`, addr, token)
}

// snapshot is an address's balance of token at the end of UTC day day, as history and portfolio
// reads see it (the sum of its snapshots' day-over-day changes up to day).
func snapshot(t *testing.T, s *store.Store, addr, token, day string) string {
	t.Helper()
	d, err := time.Parse("2006-01-02", day)
	if err != nil {
		t.Fatal(err)
	}
	sum := new(big.Int)
	for _, c := range must(s.SetChanges(context.Background(), []store.Ref{{ChainType: "evm", Address: addr}}, []string{"ethereum"})) {
		if c.Token == token && !c.Day.After(d) {
			sum.Add(sum, c.Delta)
		}
	}
	return sum.String()
}

func entityAt(t *testing.T, s *store.Store, entity, day string) string {
	return state(t, s, `SELECT coalesce(sum(delta),0)::text FROM balances.entity_change WHERE entity_id=$1 AND day <= $2::date`, entity, day)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const (
	a1  = "0x1111111111111111111111111111111111111111"
	a2  = "0x2222222222222222222222222222222222222222"
	tok = "0x9999999999999999999999999999999999999999"
)

// Above 2^64 with 18 decimals, late and duplicated observations, and the newest by block wins.
func TestNewestByBlockExactLateAndDuplicate(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	huge := "123456789012345678901234567890123456789" // > 2^128
	if n := must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 10, day0, "5"), obs(a1, tok, 20, day0.Add(time.Hour), huge)})); n != 2 {
		t.Fatalf("applied = %d, want 2", n)
	}
	if got := current(t, s, a1, tok); got != huge {
		t.Fatalf("current = %s, want %s", got, huge)
	}
	// Late older and duplicated observations are applied (observations is append-only) and change
	// nothing.
	if n := must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 15, day0.Add(30*time.Minute), "7"), obs(a1, tok, 20, day0.Add(time.Hour), huge)})); n != 2 {
		t.Fatalf("applied = %d, want 2", n)
	}
	if got := current(t, s, a1, tok); got != huge {
		t.Fatalf("after late: current = %s, want %s", got, huge)
	}
	if got := state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=$1`, tok); got != huge {
		t.Fatalf("supply = %s, want %s", got, huge)
	}
	if got := snapshot(t, s, a1, tok, "2026-03-01"); got != huge {
		t.Fatalf("snapshot = %s, want %s", got, huge)
	}
}

// A reorg voids the orphaned block's observation and falls back to the newest surviving one;
// the block becoming canonical again restores it.
func TestReorgFallsBackAndRestores(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "100"), obs(a1, "", 11, day0.Add(24*time.Hour), "300")}))
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	res := must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(11)}, nil))
	if res.Voided != 1 || res.Keys != 1 {
		t.Fatalf("reorg = %+v", res)
	}
	if got := current(t, s, a1, ""); got != "100" {
		t.Fatalf("after reorg current = %s, want 100", got)
	}
	if got := entityAt(t, s, "x", "2026-03-02"); got != "100" {
		t.Fatalf("entity on day 2 = %s, want 100", got)
	}
	if got := state(t, s, `SELECT balance::text FROM balances.entity_current WHERE entity_id='x'`); got != "100" {
		t.Fatalf("entity current = %s, want 100", got)
	}
	// Twice is once.
	if res := must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(11)}, nil)); res.Voided != 0 {
		t.Fatalf("second reorg voided %d", res.Voided)
	}
	// A late observation of the orphaned block stays void.
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 11, day0.Add(24*time.Hour), "300")}))
	if got := current(t, s, a1, ""); got != "100" {
		t.Fatalf("orphaned observation applied: %s", got)
	}
	must(s.ApplyReorg(ctx, "ethereum", 0, nil, []string{hashOf(11)}))
	if got := current(t, s, a1, ""); got != "300" {
		t.Fatalf("after restore current = %s, want 300", got)
	}
	if got := entityAt(t, s, "x", "2026-03-02"); got != "300" {
		t.Fatalf("entity on day 2 after restore = %s, want 300", got)
	}
	if got := state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=''`); got != "300" {
		t.Fatalf("supply = %s, want 300", got)
	}
}

// Day-boundary snapshots: a day's snapshot is its newest observation, days without one carry
// the previous, and a late observation of a past day moves only that day's entity figure.
func TestDayBoundaryAndLatePastDay(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	end := time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC)
	next := time.Date(2026, 3, 2, 0, 0, 1, 0, time.UTC)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, end, "10"), obs(a1, "", 12, next, "20"), obs(a1, "", 20, next.Add(48*time.Hour), "40")}))
	for day, want := range map[string]string{"2026-02-28": "0", "2026-03-01": "10", "2026-03-02": "20", "2026-03-03": "20", "2026-03-04": "40"} {
		if got := entityAt(t, s, "x", day); got != want {
			t.Errorf("entity on %s = %s, want %s", day, got, want)
		}
	}
	// Block 11 was read late: it is still day 1 (before block 12), older than day 1's newest? No:
	// newer than block 10, so day 1 ends at its balance.
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 11, end.Add(500*time.Millisecond), "15")}))
	for day, want := range map[string]string{"2026-03-01": "15", "2026-03-02": "20", "2026-03-04": "40"} {
		if got := entityAt(t, s, "x", day); got != want {
			t.Errorf("after late: entity on %s = %s, want %s", day, got, want)
		}
	}
	if got := current(t, s, a1, ""); got != "40" {
		t.Fatalf("current = %s, want 40", got)
	}
}

// A relabel moves an address's balance and history from one entity to another.
func TestRelabelMovesBalancesAndHistory(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	x := &store.Entity{ID: "x", Name: "X", Type: "cex"}
	y := &store.Entity{ID: "y", Name: "Y", Type: "fund"}
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: x, Version: 1}, {ChainType: "evm", Address: a2, Entity: x, Version: 1}}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day0, "10"), obs(a2, "", 10, day0, "5"), obs(a1, "", 30, day0.Add(48*time.Hour), "70")}))
	if got := entityAt(t, s, "x", "2026-03-03"); got != "75" {
		t.Fatalf("x = %s, want 75", got)
	}
	if n := must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: y, Version: 2}})); n != 1 {
		t.Fatalf("moved %d, want 1", n)
	}
	// An older version arriving late moves nothing back.
	if n := must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: x, Version: 1}})); n != 0 {
		t.Fatalf("stale version moved %d", n)
	}
	for _, c := range []struct{ e, day, want string }{{"x", "2026-03-01", "5"}, {"x", "2026-03-03", "5"}, {"y", "2026-03-01", "10"}, {"y", "2026-03-03", "70"}} {
		if got := entityAt(t, s, c.e, c.day); got != c.want {
			t.Errorf("%s on %s = %s, want %s", c.e, c.day, got, c.want)
		}
	}
	if got := state(t, s, `SELECT balance::text FROM balances.entity_current WHERE entity_id='y'`); got != "70" {
		t.Fatalf("y current = %s, want 70", got)
	}
	// A tombstone takes the address out of every entity.
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Tombstone: true}}))
	if got := entityAt(t, s, "y", "2026-03-03"); got != "0" {
		t.Fatalf("y after tombstone = %s, want 0", got)
	}
}

// A later batch moves an existing key no entity holds: a newer block replaces the current row
// and the supply moves by the difference; an older one in the same batch as a new key changes
// nothing of the existing key.
func TestLaterBatchUpdatesExistingKey(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 10, day0, "5"), obs(a2, tok, 10, day0, "7")}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, tok, 12, day0.Add(time.Hour), "11"), obs(a2, tok, 9, day0, "100"),
		obs("0x3333333333333333333333333333333333333333", tok, 12, day0.Add(time.Hour), "1")}))
	for _, c := range []struct{ what, got, want string }{
		{"a1", current(t, s, a1, tok), "11"},
		{"a2 (older block)", current(t, s, a2, tok), "7"},
		{"supply", state(t, s, `SELECT supply::text FROM balances.token_supply WHERE token=$1`, tok), "19"},
		{"a1 snapshot", snapshot(t, s, a1, tok, "2026-03-01"), "11"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
}

// Snapshots of a key no entity holds, across days: a day's snapshot is its newest observation,
// whether it arrived in its own batch, in one batch with later days, or late; the current row
// is today's snapshot and a reorg of it falls back on the same day.
func TestUnheldSnapshotsAcrossDays(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	day := func(d int) time.Time { return day0.AddDate(0, 0, d) }
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 10, day(0), "10")}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 12, day(1), "20")}))
	// Late: newer than day 0's snapshot, older than the current row.
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 11, day(0).Add(time.Hour), "15")}))
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 20, day(3), "40"), obs(a1, "", 19, day(2), "30"),
		obs(a1, "", 21, day(3).Add(time.Hour), "45")}))
	// Late and older than the current row, on its day; and a duplicate.
	must(s.WriteObservations(ctx, []store.Observation{obs(a1, "", 18, day(2).Add(-time.Hour), "28"), obs(a1, "", 20, day(3), "40")}))
	want := map[string]string{"2026-02-28": "0", "2026-03-01": "15", "2026-03-02": "20", "2026-03-03": "30", "2026-03-04": "45", "2026-03-05": "45"}
	for d, w := range want {
		if got := snapshot(t, s, a1, "", d); got != w {
			t.Errorf("snapshot on %s = %s, want %s", d, got, w)
		}
	}
	if got := current(t, s, a1, ""); got != "45" {
		t.Fatalf("current = %s, want 45", got)
	}
	must(s.ApplyReorg(ctx, "ethereum", 0, []string{hashOf(21)}, nil))
	for d, w := range map[string]string{"2026-03-03": "30", "2026-03-04": "40"} {
		if got := snapshot(t, s, a1, "", d); got != w {
			t.Errorf("after reorg: snapshot on %s = %s, want %s", d, got, w)
		}
	}
	if got := current(t, s, a1, ""); got != "40" {
		t.Fatalf("after reorg: current = %s, want 40", got)
	}
	// A relabel into an entity takes the whole history, today's snapshot (the current row) included.
	must(s.ApplyAttributions(ctx, []store.Attribution{{ChainType: "evm", Address: a1, Entity: &store.Entity{ID: "x", Name: "X", Type: "cex"}, Version: 1}}))
	for d, w := range map[string]string{"2026-03-01": "15", "2026-03-03": "30", "2026-03-04": "40"} {
		if got := entityAt(t, s, "x", d); got != w {
			t.Errorf("entity on %s = %s, want %s", d, got, w)
		}
	}
}
