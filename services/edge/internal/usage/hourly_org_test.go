package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/migrations"
)

// An alert's payer org changes within an hour (its key id alert:<id> stays): each org's hourly
// usage shows the credits its billing period counted, and the individual's the rest. Migrated
// down, the hour's rows merge into one row under the least org id with the sums kept.
func TestHourlyUsageFollowsThePayer(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "edge_hourly_org", migrations.Schema, migrations.FS, 2)
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	s := usage.NewStore(pool)
	at := time.Now().UTC().Truncate(time.Hour).Add(time.Minute)
	route := "/user/alerts/webhook"
	for i, c := range []usage.Call{
		{EventID: "e1", KeyID: "alert:7", UserID: "u1", Route: route, Credits: 10, Time: at},
		{EventID: "e2", KeyID: "alert:7", UserID: "u1", OrgID: "org1", Route: route, Credits: 30, Time: at.Add(time.Minute)},
		{EventID: "e3", KeyID: "alert:7", UserID: "u1", OrgID: "org1", Route: route, Credits: 5, Time: at.Add(2 * time.Minute)},
	} {
		if _, err := s.Apply(ctx, []usage.Call{c}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	start, _ := usage.PeriodOf(at)
	hourly := func(sc usage.Scope) int64 {
		hrs, err := s.Hourly(ctx, sc, at.Add(-time.Hour), at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, h := range hrs {
			n += h.Credits
		}
		return n
	}
	for _, c := range []struct {
		e  usage.Entity
		sc usage.Scope
	}{
		{usage.Entity{Type: usage.EntityOrg, ID: "org1"}, usage.Scope{OrgID: "org1"}},
	} {
		tot, err := s.PeriodTotal(ctx, c.e, start)
		if err != nil {
			t.Fatal(err)
		}
		if got := hourly(c.sc); got != tot.Used || got != 35 {
			t.Errorf("%s: hourly usage %d credits, billing period %d; want 35 both", c.e.ID, got, tot.Used)
		}
	}
	if got := hourly(usage.Scope{UserID: "u1"}); got != 45 {
		t.Errorf("the user's hourly usage %d credits, want 45 (every row is theirs)", got)
	}
	if _, err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	var rows int
	var org string
	var calls, credits int64
	if err := pool.QueryRow(ctx, `SELECT count(*) OVER (), org_id, calls, credits FROM edge.usage_hourly`).Scan(&rows, &org, &calls, &credits); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || org != "" || calls != 3 || credits != 45 {
		t.Errorf("migrated down: %d rows, org %q, %d calls, %d credits; want 1 row, org \"\", 3 calls, 45 credits", rows, org, calls, credits)
	}
}
