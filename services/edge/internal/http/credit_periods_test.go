package http

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// periodsUsage answers CreditPeriods with fixed periods.
type periodsUsage struct{ periods []usage.Period }

func (f periodsUsage) CreditPeriods(context.Context, usage.Entity, int) ([]usage.Period, error) {
	return f.periods, nil
}

func (periodsUsage) Hourly(context.Context, usage.Scope, time.Time, time.Time) ([]usage.HourRoute, error) {
	return nil, nil
}

// The current period's creditsIncluded counts the calling key's tier, as the credit check and
// X-Credits-Period-Limit do, before the consumer has recorded a call of that tier; closed periods
// keep their recorded figure.
func TestCreditPeriodsCurrentCountsTheKeysTier(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	start, end := usage.PeriodOf(now)
	prevStart, _ := usage.PeriodOf(start.Add(-time.Hour))
	e := usage.BilledEntity("u1", "")
	fake := periodsUsage{periods: []usage.Period{ // a free key's calls recorded; the caller's key is basic
		{Entity: e, Start: start, End: end, Included: 1000, Used: 5000, ComputedAt: now},
		{Entity: e, Start: prevStart, End: start, Included: 1000, Used: 1500, ComputedAt: start},
	}}
	a := Analytics{Usage: fake, Tiers: tiers.Default(), Routes: routes.Table, Now: func() time.Time { return now }}
	code, body := serveAs(t, a.CreditPeriods(), "/analytics/credit-periods")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var ps []CreditPeriod
	if err := json.Unmarshal([]byte(body), &ps); err != nil {
		t.Fatal(err)
	}
	basic, _ := tiers.Default().Get("basic")
	if len(ps) != 2 || ps[0].CreditsIncluded != basic.IncludedCredits || ps[0].ExtraCredits != 0 || ps[0].Status != "open" {
		t.Fatalf("current period %s, want creditsIncluded %d and no extra credits", body, basic.IncludedCredits)
	}
	if ps[1].CreditsIncluded != 1000 || ps[1].ExtraCredits != 500 {
		t.Fatalf("closed period %+v, want its recorded 1000 included", ps[1])
	}
}
