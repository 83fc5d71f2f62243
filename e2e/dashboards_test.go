package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
)

// notInLocalStack are dashboard metrics the local stack cannot export, and why, by
// "dashboard/metric" ("*/metric": on every dashboard); each is checked elsewhere or once its
// service exports it.
var notInLocalStack = map[string]string{
	// The local stack simulates ingest; these come from the EVM follower. Every metric of
	// ingest.json is checked against a real node by services/ingest TestBackfillProgressReachesHead.
	"ingest/ingest_head_lag_blocks": "EVM ingest only", "ingest/ingest_cursor_block": "EVM ingest only",
	"ingest/ingest_blocks_total": "EVM ingest only", "ingest/ingest_transfers_total": "EVM ingest only",
	"ingest/ingest_reorgs_total":   "EVM ingest only",
	"ingest/ingest_failing_rounds": "EVM ingest only",
	"ingest/progress_eta_seconds":  "EVM ingest only", "ingest/progress_total": "EVM ingest only",
	// Series that appear with the first close that had hours due (the close runs every minute)
	// and the poller's first stored quote; services/token-analytics TestMetricsAsExported checks
	// their names against the exporter.
	"token-analytics/token_analytics_close_duration_seconds_bucket": "only after a close with hours due",
	"token-analytics/token_analytics_close_lag_seconds":             "only once a chain has closed hours",
	"token-analytics/token_analytics_price_quote_age_seconds":       "only after the first stored quote",
}

// pendingServices are services whose consumers may not exist yet: their shared consumer
// panels are checked when the metric is there and listed otherwise.
var pendingServices = map[string]bool{"balances": true, "token-analytics": true, "stream-fanout": true, "ingest": true, "user-labels": true, "intelligence": true}

// TestDashboardMetricsExist scrapes every service's live /metrics (its ops port) after traffic
// through the edge and checks that every metric every dashboard panel names is exported by
// that dashboard's service (overview: by any service), except the metrics listed above, and
// that every label a query groups by or matches on is carried by one of its metrics (job and
// namespace, which Prometheus adds at scrape time, excepted).
func TestDashboardMetricsExist(t *testing.T) {
	p := current
	if p.Stack == nil {
		t.Skip("needs the in-process stack's ops ports")
	}
	files, err := filepath.Glob("../charts/chainintel/dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards found (%v)", err)
	}
	dashboardTraffic(t, p)
	streamDelivery(t, p)

	ctx := context.Background()
	var samples map[string]promscrape.Samples // by dashboard: its service's, or all for the overview
	scrape := func() map[string]map[string]bool {
		out := map[string]map[string]bool{"overview": {}}
		samples = map[string]promscrape.Samples{}
		for svc, ep := range p.Stack.Services {
			s, err := promscrape.Scrape(ctx, http.DefaultClient, ep.Ops+"/metrics")
			if err != nil {
				t.Fatalf("%s: %v", svc, err)
			}
			samples[svc] = s
			samples["overview"] = append(samples["overview"], s...)
			out[svc] = s.Names()
			for n := range out[svc] {
				out["overview"][n] = true
			}
		}
		return out
	}
	type check struct{ board, metric string }
	var missing []check
	var skipped []string
	var checked int
	// Consumer lag is read from the broker once a consumer runs, progress gauges at their
	// first interval: wait for the consumers to start and the simulated transfers to reach
	// the gauges.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		have := scrape()
		missing, skipped, checked = nil, nil, 0
		for _, f := range files {
			board := strings.TrimSuffix(filepath.Base(f), ".json")
			for _, m := range dashboardMetrics(t, f) {
				switch {
				case have[board][m]:
					checked++
				case notInLocalStack[board+"/"+m] != "" || notInLocalStack["*/"+m] != "":
					skipped = append(skipped, board+": "+m+" ("+notInLocalStack[board+"/"+m]+notInLocalStack["*/"+m]+")")
				case pendingServices[board] && strings.HasPrefix(m, "eventbus_"):
					skipped = append(skipped, board+": "+m+" (no consumer on this branch yet)")
				default:
					missing = append(missing, check{board, m})
				}
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	sort.Strings(skipped)
	t.Logf("checked %d dashboard metrics on live /metrics; not checked here:\n  %s", checked, strings.Join(skipped, "\n  "))
	for _, m := range missing {
		t.Errorf("dashboard %s names %s, which its service does not export", m.board, m.metric)
	}
	checkDashboardLabels(t, files, samples)
}

// dashboardMetrics lists the metric names of every panel query of a dashboard file.
func dashboardMetrics(t *testing.T, path string) []string {
	seen := map[string]bool{}
	var out []string
	for _, expr := range dashboardQueries(t, path) {
		for _, m := range promscrape.MetricNames(expr) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// dashboardQueries lists every panel query of a dashboard file.
func dashboardQueries(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// dashboardTraffic makes one call per upstream service through the edge, a refused one and a
// credited one, so the request metrics exist.
func dashboardTraffic(t *testing.T, p *Platform) {
	key := p.KeyFor(t)
	// One call per upstream service, a refused one and a credited one.
	for _, path := range []string{"/transfers?chains=ethereum&limit=1", "/intelligence/address/0x0000000000000000000000000000000000000001",
		"/user/labels", "/balances/address/0x0000000000000000000000000000000000000001", "/token/trending", "/chains"} {
		p.Do(t, http.MethodGet, path, key, nil)
	}
	p.Do(t, http.MethodGet, "/chains", "ci_not_a_key", nil)
	// The stream's route (a WebSocket the edge does not upgrade for a plain GET) gets an
	// unsigned call on the service's own port: request metrics count refusals too.
	for svc, path := range map[string]string{"stream-fanout": "/ws/transfers"} {
		resp, err := http.Get(p.Stack.Services[svc].HTTP + path)
		if err != nil {
			t.Fatalf("%s: %v", svc, err)
		}
		resp.Body.Close()
	}
}

// checkDashboardLabels checks that every label a query groups by or matches on (job and
// namespace excepted, which Prometheus adds) is carried by one of the query's metrics the
// service exports.
func checkDashboardLabels(t *testing.T, files []string, samples map[string]promscrape.Samples) {
	labels := 0
	for _, f := range files {
		board := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, expr := range dashboardQueries(t, f) {
			names := promscrape.MetricNames(expr)
			var present []string
			for _, n := range names {
				if samples[board].Names()[n] {
					present = append(present, n)
				}
			}
			if len(present) == 0 {
				continue // none exported here: listed above
			}
			for _, l := range promscrape.LabelNames(expr) {
				if l == "job" || l == "namespace" {
					continue
				}
				labels++
				if !samples[board].HasLabel(present, l) {
					t.Errorf("dashboard %s: %s uses label %q, which none of %v carries", board, expr, l, present)
				}
			}
		}
	}
	t.Logf("checked %d label uses", labels)
}
