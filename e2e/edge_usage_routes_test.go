package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// /analytics/endpoint-calls and /subscription/intel-usage through the edge: API.md's window
// rules, totalCostUnits and color, and the intelligence calls of the period counted.
func TestEdgeUsageRoutes(t *testing.T) {
	p := Get(t)
	if p.DBURL == "" {
		t.Skip("needs a key of its own (the platform's database is not reachable from the test)")
	}
	key := p.NewKey(t, "api", "individual")
	get := func(path string) Response { return p.Do(t, http.MethodGet, path, key, nil) }
	lookup := get("/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60?chain=ethereum")
	if lookup.Status != 200 && lookup.Status != 404 {
		t.Fatalf("intelligence lookup: %d %s", lookup.Status, lookup.Body)
	}
	// totalCount is credits charged: the lookup's one credit, none for a 404.
	wantCount := int64(0)
	if lookup.Status == 200 {
		wantCount = 1
	}
	type usage struct {
		TotalCount  int64   `json:"totalCount"`
		TotalLimit  int64   `json:"totalLimit"`
		ChainUsage  any     `json:"chainUsage"`
		PeriodStart *string `json:"periodStart"`
	}
	now := time.Now().UTC()
	wantStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	Eventually(t, 30*time.Second, func() error {
		var u usage
		r := get("/subscription/intel-usage")
		r.JSON(t, &u)
		if r.Status != 200 || u.TotalCount != wantCount || u.TotalLimit <= 0 || u.ChainUsage != nil || u.PeriodStart == nil || *u.PeriodStart != wantStart {
			return fmt.Errorf("intel-usage: %d %s", r.Status, r.Body)
		}
		return nil
	})
	type calls struct {
		Period     string `json:"period"`
		StartTime  string `json:"startTime"`
		EndTime    string `json:"endTime"`
		DataPoints []struct {
			TotalCalls     int64 `json:"totalCalls"`
			TotalCostUnits int64 `json:"totalCostUnits"`
		} `json:"dataPoints"`
		EndpointInfos []struct {
			Pattern string `json:"pattern"`
			Color   string `json:"color"`
		} `json:"endpointInfos"`
	}
	start, end := now.Add(-2*time.Hour).Truncate(time.Second), now.Add(time.Hour).Truncate(time.Second)
	var c calls
	r := get(fmt.Sprintf("/analytics/endpoint-calls?period=30d&start_date=%s&end_date=%s", start.Format(time.RFC3339), end.Format(time.RFC3339)))
	r.JSON(t, &c)
	if r.Status != 200 || c.Period != "custom" || c.StartTime != start.Format(time.RFC3339) || c.EndTime != end.Format(time.RFC3339) {
		t.Fatalf("both dates with period: %d %s", r.Status, r.Body)
	}
	if len(c.DataPoints) == 0 || c.DataPoints[0].TotalCostUnits == 0 || len(c.EndpointInfos) == 0 || len(c.EndpointInfos[0].Color) != 7 {
		t.Errorf("custom window lacks the lookup, its cost units or colours: %s", r.Body)
	}
	r = get("/analytics/endpoint-calls?start_date=2020-01-01T00:00:00Z")
	if want := `{"error":"start_date: needs end_date (a custom range takes both; for a period ending now, give period alone)"}`; r.Status != 400 || strings.TrimSpace(string(r.Body)) != want {
		t.Errorf("lone start_date: %d %s, want 400 %s", r.Status, r.Body, want)
	}
}
