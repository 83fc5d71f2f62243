package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// fakeUsage answers Hourly from fixed rows, keeping those in [from, to) as the store does, and
// records the window it was asked for.
type fakeUsage struct {
	rows     []usage.HourRoute
	from, to time.Time
}

func (f *fakeUsage) CreditPeriods(context.Context, usage.Entity, int) ([]usage.Period, error) {
	return nil, nil
}

func (f *fakeUsage) Hourly(_ context.Context, _ usage.Scope, from, to time.Time) ([]usage.HourRoute, error) {
	f.from, f.to = from, to
	var out []usage.HourRoute
	for _, r := range f.rows {
		if !r.Hour.Before(from) && r.Hour.Before(to) {
			out = append(out, r)
		}
	}
	return out, nil
}

func serveAs(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	id := httpx.Identity{KeyID: "k", UserID: "u1", Role: httpx.RoleIndividual, Tier: "basic"}
	req = req.WithContext(httpx.WithIdentity(req.Context(), id))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, strings.TrimSpace(w.Body.String())
}

func usageFixture() *fakeUsage {
	h := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	return &fakeUsage{rows: []usage.HourRoute{
		{Hour: h("2026-03-09T10:00:00Z"), Route: "/intelligence/address/{address}", Calls: 3, Credits: 3},
		{Hour: h("2026-03-10T10:00:00Z"), Route: "/intelligence/address/{address}", Calls: 2, Credits: 2},
		{Hour: h("2026-03-10T10:00:00Z"), Route: "/transfers", Calls: 2, Credits: 150},
		{Hour: h("2026-03-10T11:00:00Z"), Route: "/balances/address/{address}", Calls: 4, Credits: 4},
	}}
}

// API.md: period is ignored when both dates are given; a lone start_date is a 400 naming it;
// each data point carries totalCostUnits (rows for per-row routes) and each pattern a colour.
func TestEndpointCallsPublicShape(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	a := Analytics{Usage: usageFixture(), Tiers: tiers.Default(), Routes: routes.Table, Now: func() time.Time { return now }}
	var transfersWeight int64
	for _, rt := range routes.Table {
		if rt.Pattern == "/transfers" {
			if rt.Unit != routes.PerRow {
				t.Fatalf("/transfers is expected to be billed per row, is %q", rt.Unit)
			}
			transfersWeight = rt.Credits
		}
	}
	if transfersWeight != 2 {
		t.Fatalf("this fixture assumes /transfers weighs 2 credits per row, it weighs %d", transfersWeight)
	}
	both := `{"period":"custom","startTime":"2026-03-10T10:00:00Z","endTime":"2026-03-10T11:00:00Z","dataPoints":[` +
		`{"hour":"2026-03-10T10:00:00Z","totalCalls":4,"totalCredits":152,"totalCostUnits":77,` +
		`"callBreakdown":{"/intelligence/address/{address}":2,"/transfers":2},"creditBreakdown":{"/intelligence/address/{address}":2,"/transfers":150}}],` +
		`"endpointInfos":[{"pattern":"/intelligence/address/{address}","color":"` + ColorOf("/intelligence/address/{address}") + `","weight":1,"unitType":"call"},` +
		`{"pattern":"/transfers","color":"` + ColorOf("/transfers") + `","weight":2,"unitType":"row"}]}`
	byDefault := `{"period":"24h","startTime":"2026-03-09T12:30:00Z","endTime":"2026-03-10T12:30:00Z","dataPoints":[` +
		`{"hour":"2026-03-10T10:00:00Z","totalCalls":4,"totalCredits":152,"totalCostUnits":77,` +
		`"callBreakdown":{"/intelligence/address/{address}":2,"/transfers":2},"creditBreakdown":{"/intelligence/address/{address}":2,"/transfers":150}},` +
		`{"hour":"2026-03-10T11:00:00Z","totalCalls":4,"totalCredits":4,"totalCostUnits":4,` +
		`"callBreakdown":{"/balances/address/{address}":4},"creditBreakdown":{"/balances/address/{address}":4}}],` +
		`"endpointInfos":[{"pattern":"/balances/address/{address}","color":"` + ColorOf("/balances/address/{address}") + `","weight":1,"unitType":"call"},` +
		`{"pattern":"/intelligence/address/{address}","color":"` + ColorOf("/intelligence/address/{address}") + `","weight":1,"unitType":"call"},` +
		`{"pattern":"/transfers","color":"` + ColorOf("/transfers") + `","weight":2,"unitType":"row"}]}`
	lone := `{"error":"start_date: needs end_date (a custom range takes both; for a period ending now, give period alone)"}`
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"period=30d&start_date=2026-03-10T10:00:00Z&end_date=2026-03-10T11:00:00Z", 200, both},
		{"", 200, byDefault},
		{"start_date=2026-01-01T00:00:00Z", 400, lone},
		{"period=7d&start_date=2026-01-01T00:00:00Z", 400, lone},
	} {
		code, body := serveAs(t, a.EndpointCalls(), "/analytics/endpoint-calls?"+c.query)
		if code != c.code || body != c.want {
			t.Errorf("%s:\n got %d %s\nwant %d %s", c.query, code, body, c.code, c.want)
		}
	}
	if c := ColorOf("/transfers"); len(c) != 7 || c[0] != '#' {
		t.Errorf("colour %q is not #rrggbb", c)
	}
}

// intel-usage counts the intelligence calls of the current billing period only.
func TestIntelUsage(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	f := usageFixture()
	f.rows = append(f.rows, usage.HourRoute{Hour: time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC),
		Route: "/intelligence/address/{address}", Calls: 100, Credits: 100})
	// A batch of 250 addresses is one call charged 250 credits; a refused lookup, a call charged
	// nothing: totalCount is credits, as totalLimit is.
	f.rows = append(f.rows, usage.HourRoute{Hour: time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC),
		Route: "/intelligence/address/batch", Calls: 1, Credits: 250},
		usage.HourRoute{Hour: time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC),
			Route: "/intelligence/entity/{entity}", Calls: 3, Credits: 0})
	a := Analytics{Usage: f, Tiers: tiers.Default(), Routes: routes.Table, Now: func() time.Time { return now }}
	code, body := serveAs(t, a.IntelUsage(), "/subscription/intel-usage?unknown=1")
	want := `{"totalCount":255,"totalLimit":100000,"chainUsage":null,"periodStart":"2026-03-01T00:00:00Z"}`
	if code != 200 || body != want {
		t.Errorf("got %d %s\nwant 200 %s", code, body, want)
	}
}
