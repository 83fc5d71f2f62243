package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/migrations"
)

// Migration 00003 over a version 2 database: a period counted before through_ms existed gets
// the time of the transaction that last counted it (no call it counts is later), or the
// period's last millisecond when that came after the period ended; a period with nothing used
// keeps 0. PeriodTotal then reads a pair in which "through" covers "used".
func TestMigration3BackfillsThrough(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "edge_migrate", migrations.Schema, migrations.FS, 2)
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	march := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	april := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	computed := time.Date(2026, 3, 14, 9, 26, 53, 589_793_000, time.UTC)
	late := time.Date(2026, 4, 1, 0, 0, 2, 0, time.UTC) // the consumer counted March's last calls in April
	for _, r := range []struct {
		id       string
		used     int64
		computed time.Time
	}{{"counted", 120, computed}, {"late", 40, late}, {"nothing", 0, computed}} {
		if _, err := pool.Exec(ctx, `INSERT INTO edge.credit_periods
			(entity_type, entity_id, period_start, period_end, credits_included, credits_used, computed_at)
			VALUES ('org', $1, $2, $3, 1000, $4, $5)`, r.id, march, april, r.used, r.computed); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	s := usage.NewStore(pool)
	for _, c := range []struct {
		id   string
		want usage.Total
	}{
		{"counted", usage.Total{Used: 120, ThroughMs: computed.UnixMilli()}},
		{"late", usage.Total{Used: 40, ThroughMs: april.UnixMilli() - 1}},
		{"nothing", usage.Total{}},
	} {
		got, err := s.PeriodTotal(ctx, usage.Entity{Type: usage.EntityOrg, ID: c.id}, march)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.id, got, c.want)
		}
	}
}
