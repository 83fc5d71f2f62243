package http

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// UsageReader reads the metering rollups (usage.Store).
type UsageReader interface {
	CreditPeriods(ctx context.Context, e usage.Entity, limit int) ([]usage.Period, error)
	Hourly(ctx context.Context, sc usage.Scope, from, to time.Time) ([]usage.HourRoute, error)
}

// Analytics serves GET /analytics/credit-periods and GET /analytics/endpoint-calls.
type Analytics struct {
	Usage  UsageReader
	Tiers  tiers.Table
	Routes []routes.Route
	Now    func() time.Time // default time.Now
}

func (a Analytics) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// CreditPeriod is one element of GET /analytics/credit-periods.
type CreditPeriod struct {
	PeriodStart     time.Time `json:"periodStart"`
	PeriodEnd       time.Time `json:"periodEnd"`
	CreditsIncluded int64     `json:"creditsIncluded"`
	CreditsUsed     int64     `json:"creditsUsed"`
	ExtraCredits    int64     `json:"extraCredits"`
	EntityID        string    `json:"entityId"`
	EntityType      string    `json:"entityType"`
	Status          string    `json:"status"`
	ComputedAt      time.Time `json:"computedAt"`
}

// CreditPeriods answers the last 12 billing periods of the caller's org (org admins) or of the
// caller (individuals), newest first; the current period is always listed.
func (a Analytics) CreditPeriods() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := httpx.IdentityFrom(r.Context())
		if !ok {
			proxy.WriteError(w, http.StatusUnauthorized, "error validating API key")
			return
		}
		if id.Role == httpx.RoleOrgMember {
			proxy.WriteError(w, http.StatusForbidden, "credit periods are visible to org admins only")
			return
		}
		e := usage.BilledEntity(id.UserID, id.OrgID)
		stored, err := a.Usage.CreditPeriods(r.Context(), e, 12)
		if err != nil {
			httpx.WriteFailure(w, err) // PostgreSQL down: 503 naming it, with Retry-After
			return
		}
		now := a.now().UTC()
		start, end := usage.PeriodOf(now)
		tr, _ := a.Tiers.Get(id.Tier)
		if len(stored) == 0 || stored[0].Start.Before(start) {
			current := usage.Period{Entity: e, Start: start, End: end, ComputedAt: now}
			stored = append([]usage.Period{current}, stored...)
			if len(stored) > 12 {
				stored = stored[:12]
			}
		}
		// The current period's included credits as the credit check counts them (Metering): the
		// calling key's tier is among those used in it even before the consumer has recorded it.
		if stored[0].Start.Equal(start) {
			stored[0].Included = max(stored[0].Included, tr.IncludedCredits)
		}
		out := make([]CreditPeriod, len(stored))
		for i, p := range stored {
			status := "closed"
			if now.Before(p.End) {
				status = "open"
			}
			out[i] = CreditPeriod{
				PeriodStart: p.Start.UTC(), PeriodEnd: p.End.UTC(), CreditsIncluded: p.Included, CreditsUsed: p.Used,
				ExtraCredits: max(p.Used-p.Included, 0), EntityID: e.ID, EntityType: e.Type, Status: status,
				ComputedAt: p.ComputedAt.UTC().Truncate(time.Second),
			}
		}
		writeJSON(w, out)
	})
}

// EndpointCalls is the body of GET /analytics/endpoint-calls.
type EndpointCalls struct {
	Period        string         `json:"period"`
	StartTime     time.Time      `json:"startTime"`
	EndTime       time.Time      `json:"endTime"`
	DataPoints    []HourlyUsage  `json:"dataPoints"`
	EndpointInfos []EndpointInfo `json:"endpointInfos"`
}

// HourlyUsage is one data point.
type HourlyUsage struct {
	Hour            time.Time        `json:"hour"`
	TotalCalls      int64            `json:"totalCalls"`
	TotalCredits    int64            `json:"totalCredits"`
	TotalCostUnits  int64            `json:"totalCostUnits"`
	CallBreakdown   map[string]int64 `json:"callBreakdown"`
	CreditBreakdown map[string]int64 `json:"creditBreakdown"`
}

// EndpointInfo is a route pattern's credit weight.
type EndpointInfo struct {
	Pattern  string `json:"pattern"`
	Color    string `json:"color"`
	Weight   int64  `json:"weight"`
	UnitType string `json:"unitType"`
}

// palette is the chart colours endpoint patterns are given; a pattern's colour is fixed by its
// name (FNV-1a), so one endpoint keeps its colour across windows and callers.
var palette = [...]string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#17becf"}

// ColorOf returns the chart colour of a route pattern.
func ColorOf(pattern string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pattern))
	return palette[h.Sum32()%uint32(len(palette))]
}

// costUnits is what a route's credits counted: rows for per-row routes (credits / weight),
// calls otherwise (and for free routes, which have no weight to divide by).
func costUnits(rt routes.Route, known bool, calls, credits int64) int64 {
	if known && rt.Unit == routes.PerRow && rt.Credits > 0 {
		return credits / rt.Credits
	}
	return calls
}

// Window is a resolved reporting window.
type Window struct {
	Period     string
	Start, End time.Time
}

// MaxCustomRange bounds a start_date/end_date range.
const MaxCustomRange = 366 * 24 * time.Hour

var periods = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// ParseWindow reads period, start_date and end_date as API.md gives them: start_date and
// end_date together are a custom range of at most 366 days and period is then ignored;
// otherwise period 24h|7d|30d (default 24h) ends at end_date or now. A lone start_date is a 400:
// the custom range needs both, and answering the default window instead would hand the caller
// figures for a range it did not ask for.
func ParseWindow(q url.Values, now time.Time) (Window, error) {
	for _, k := range []string{"period", "start_date", "end_date"} {
		if len(q[k]) > 1 {
			return Window{}, httpx.BadRequest("%s: give it once", k)
		}
	}
	parse := func(k string) (time.Time, bool, error) {
		v := q.Get(k)
		if v == "" {
			return time.Time{}, false, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, false, httpx.BadRequest("%s: %q is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)", k, v)
		}
		// Checked in UTC: an offset can move year 0000 or 9999 out of what JSON can write.
		if t = t.UTC(); outOfRange(t) {
			return time.Time{}, false, httpx.BadRequest("%s: %q is out of range (%s)", k, v, windowRange)
		}
		return t, true, nil
	}
	start, hasStart, err := parse("start_date")
	if err != nil {
		return Window{}, err
	}
	end, hasEnd, err := parse("end_date")
	if err != nil {
		return Window{}, err
	}
	period := q.Get("period")
	if hasStart && hasEnd {
		switch {
		case !start.Before(end):
			return Window{}, httpx.BadRequest("start_date: must be before end_date")
		case end.Sub(start) > MaxCustomRange:
			return Window{}, httpx.BadRequest("start_date, end_date: the range must be at most 366 days")
		}
		return Window{Period: "custom", Start: start, End: end}, nil
	}
	if hasStart {
		return Window{}, httpx.BadRequest("start_date: needs end_date (a custom range takes both; for a period ending now, give period alone)")
	}
	if period == "" {
		period = "24h"
	}
	d, ok := periods[period]
	if !ok {
		return Window{}, httpx.BadRequest("period: %q is not one of 24h, 7d, 30d", period)
	}
	if !hasEnd {
		end = now.UTC()
	}
	if start = end.Add(-d); outOfRange(start) {
		return Window{}, httpx.BadRequest("end_date: the %s period before it starts out of range (%s)", period, windowRange)
	}
	return Window{Period: period, Start: start, End: end}, nil
}

// The range of times a window may span, as the services' time parsers take them (libs/params):
// nothing is recorded before 1970, and JSON cannot write a year past 9999.
var (
	minWindowTime = time.Unix(0, 0).UTC()
	maxWindowTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
)

const windowRange = "1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z"

func outOfRange(t time.Time) bool { return t.Before(minWindowTime) || t.After(maxWindowTime) }

// EndpointCalls answers hourly calls and credits by route pattern: the caller's org for org
// members and admins, else the caller. Data points are the hours that had calls, oldest first;
// the hour containing startTime is included.
func (a Analytics) EndpointCalls() http.Handler {
	weights := map[string]routes.Route{}
	for _, rt := range a.Routes {
		weights[rt.Pattern] = rt
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := httpx.IdentityFrom(r.Context())
		if !ok {
			proxy.WriteError(w, http.StatusUnauthorized, "error validating API key")
			return
		}
		win, err := ParseWindow(r.URL.Query(), a.now())
		if err != nil {
			proxy.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		sc := usage.Scope{UserID: id.UserID, OrgID: id.OrgID}
		rows, err := a.Usage.Hourly(r.Context(), sc, win.Start.Truncate(time.Hour), win.End)
		if err != nil {
			httpx.WriteFailure(w, err) // PostgreSQL down: 503 naming it, with Retry-After
			return
		}
		out := EndpointCalls{Period: win.Period, StartTime: win.Start, EndTime: win.End,
			DataPoints: []HourlyUsage{}, EndpointInfos: []EndpointInfo{}}
		seen := map[string]bool{}
		for _, row := range rows {
			n := len(out.DataPoints)
			if n == 0 || !out.DataPoints[n-1].Hour.Equal(row.Hour) {
				out.DataPoints = append(out.DataPoints, HourlyUsage{Hour: row.Hour.UTC(),
					CallBreakdown: map[string]int64{}, CreditBreakdown: map[string]int64{}})
				n++
			}
			dp := &out.DataPoints[n-1]
			dp.TotalCalls += row.Calls
			dp.TotalCredits += row.Credits
			rt, known := weights[row.Route]
			dp.TotalCostUnits += costUnits(rt, known, row.Calls, row.Credits)
			dp.CallBreakdown[row.Route] += row.Calls
			dp.CreditBreakdown[row.Route] += row.Credits
			if !seen[row.Route] {
				seen[row.Route] = true
				info := EndpointInfo{Pattern: row.Route, Color: ColorOf(row.Route), UnitType: string(routes.PerCall)}
				if known {
					info.Weight, info.UnitType = rt.Credits, string(rt.Unit)
				}
				out.EndpointInfos = append(out.EndpointInfos, info)
			}
		}
		sort.Slice(out.EndpointInfos, func(i, j int) bool { return out.EndpointInfos[i].Pattern < out.EndpointInfos[j].Pattern })
		writeJSON(w, out)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		proxy.WriteError(w, http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(b)
}

// IntelUsage is the body of GET /subscription/intel-usage.
type IntelUsage struct {
	TotalCount  int64                      `json:"totalCount"`
	TotalLimit  int64                      `json:"totalLimit"`
	ChainUsage  map[string]IntelChainUsage `json:"chainUsage"`
	PeriodStart *time.Time                 `json:"periodStart"`
}

// IntelChainUsage is one chain's intelligence lookups.
type IntelChainUsage struct {
	Count int64 `json:"count"`
}

// IntelUsage answers the intelligence lookups of the caller's billing entity in the current
// billing period, in credits: totalCount is the credits its calls to routes the intelligence
// service owns were charged (each route's weight times its addresses or rows; a refused call
// none), in the unit of totalLimit, the period's included credits (the greatest tier used in it,
// as billed), the only allowance that bounds those lookups; so totalLimit - totalCount is never
// read across units. Metering records route patterns, not the chain a call named, so chainUsage
// is null (the public schema allows it).
func (a Analytics) IntelUsage() http.Handler {
	intel := map[string]bool{}
	for _, rt := range a.Routes {
		if rt.Service == routes.Intelligence {
			intel[rt.Pattern] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := httpx.IdentityFrom(r.Context())
		if !ok {
			proxy.WriteError(w, http.StatusUnauthorized, "error validating API key")
			return
		}
		now := a.now().UTC()
		start, _ := usage.PeriodOf(now)
		rows, err := a.Usage.Hourly(r.Context(), usage.Scope{UserID: id.UserID, OrgID: id.OrgID}, start, now.Add(time.Hour))
		if err != nil {
			httpx.WriteFailure(w, err) // PostgreSQL down: 503 naming it, with Retry-After
			return
		}
		tr, _ := a.Tiers.Get(id.Tier)
		out := IntelUsage{TotalLimit: tr.IncludedCredits, PeriodStart: &start}
		// The period's included credits as billed (Metering): the greatest tier used in it.
		stored, err := a.Usage.CreditPeriods(r.Context(), usage.BilledEntity(id.UserID, id.OrgID), 1)
		if err != nil {
			httpx.WriteFailure(w, err)
			return
		}
		if len(stored) == 1 && stored[0].Start.Equal(start) {
			out.TotalLimit = max(out.TotalLimit, stored[0].Included)
		}
		for _, row := range rows {
			if intel[row.Route] {
				out.TotalCount += row.Credits
			}
		}
		writeJSON(w, out)
	})
}
