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

// notInLocalStack are dashboard metrics the local stack cannot export, and why; each is
// checked elsewhere or once its service exports it.
var notInLocalStack = map[string]string{
	// The local stack simulates ingest; these come from the EVM follower. Every metric of
	// ingest.json is checked against a real node by services/ingest TestBackfillProgressReachesHead.
	"ingest_head_lag_blocks": "EVM ingest only", "ingest_cursor_block": "EVM ingest only",
	"ingest_blocks_total": "EVM ingest only", "ingest_transfers_total": "EVM ingest only",
	"ingest_reorgs_total":  "EVM ingest only (and only after a reorg)",
	"progress_eta_seconds": "EVM ingest only", "progress_total": "EVM ingest only",
	// Counters that appear with their first event.
	"eventbus_handler_failures_total": "only after a handler fails",
	"eventbus_dlq_total":              "only after an undecodable record",
}

// pendingServices are services whose consumers may not exist yet: their shared consumer
// panels are checked when the metric is there and listed otherwise.
var pendingServices = map[string]bool{"balances": true, "token-analytics": true, "stream-fanout": true, "ingest": true, "user-labels": true, "intelligence": true}

// TestDashboardMetricsExist scrapes every service's live /metrics (its ops port) after traffic
// through the edge and checks that every metric every dashboard panel names is exported by
// that dashboard's service (overview: by any service), except the metrics listed above.
func TestDashboardMetricsExist(t *testing.T) {
	p := current
	if p.Stack == nil {
		t.Skip("needs the in-process stack's ops ports")
	}
	files, err := filepath.Glob("../charts/chainintel/dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards found (%v)", err)
	}
	key := p.KeyFor(t)
	// One call per upstream service, a refused one and a credited one.
	for _, path := range []string{"/transfers?chain=ethereum&limit=1", "/intelligence/address/0x0000000000000000000000000000000000000001",
		"/user/labels", "/balances/address/0x0000000000000000000000000000000000000001", "/token/trending", "/chains"} {
		p.Do(t, http.MethodGet, path, key, nil)
	}
	p.Do(t, http.MethodGet, "/chains", "ci_not_a_key", nil)
	// Services without a public route (ingest) or whose route the edge answers itself (a
	// stream without an upgrade) get one unsigned call on their own port: the request metrics
	// count refusals too.
	for svc, ep := range p.Stack.Services {
		if svc == "edge" {
			continue
		}
		resp, err := http.Get(ep.HTTP + "/internal/metrics-probe")
		if err != nil {
			t.Fatalf("%s: %v", svc, err)
		}
		resp.Body.Close()
	}

	ctx := context.Background()
	scrape := func() map[string]map[string]bool {
		out := map[string]map[string]bool{"overview": {}}
		for svc, ep := range p.Stack.Services {
			s, err := promscrape.Scrape(ctx, http.DefaultClient, ep.Ops+"/metrics")
			if err != nil {
				t.Fatalf("%s: %v", svc, err)
			}
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
	// Consumer lag is recorded after a consumer's first batch: wait for the simulated
	// transfers to reach the consumers.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		have := scrape()
		missing, skipped, checked = nil, nil, 0
		for _, f := range files {
			board := strings.TrimSuffix(filepath.Base(f), ".json")
			for _, m := range dashboardMetrics(t, f) {
				switch {
				case have[board][m]:
					checked++
				case notInLocalStack[m] != "":
					skipped = append(skipped, board+": "+m+" ("+notInLocalStack[m]+")")
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
}

// dashboardMetrics lists the metric names of every panel query of a dashboard file.
func dashboardMetrics(t *testing.T, path string) []string {
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
	seen := map[string]bool{}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range promscrape.MetricNames(tg.Expr) {
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
		}
	}
	return out
}
