package charts

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// instrumentCall finds where the services and libs make an OpenTelemetry instrument: the kind
// and the name given to it; checkerName, the transfers checkers' names passed as a field.
var (
	instrumentCall = regexp.MustCompile(`\.(Int64|Float64)(Counter|UpDownCounter|Histogram|Gauge|ObservableGauge|ObservableCounter|ObservableUpDownCounter)\(\s*"([a-z0-9_.]+)"`)
	checkerName    = regexp.MustCompile(`metric:\s*"([a-z0-9_.]+_total)"`)
)

// externalMetrics are exported by libraries the services use, not by their own instruments:
// otelgin's server duration and the Prometheus Go and process collectors.
var externalMetrics = []string{"http_server_request_duration_seconds_bucket", "http_server_request_duration_seconds_count",
	"http_server_request_duration_seconds_sum", "process_resident_memory_bytes", "go_goroutines"}

// codeMetrics lists the metric names the services' and libs' Go code exports, as the
// OpenTelemetry Prometheus exporter names them: dots become underscores, a unit of seconds adds
// _seconds, counters end in _total, histograms export _bucket, _sum and _count.
func codeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, m := range externalMetrics {
		out[m] = true
	}
	for _, root := range []string{"../libs", "../services"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src := string(b)
			for _, m := range instrumentCall.FindAllStringSubmatchIndex(src, -1) {
				kind, name := src[m[4]:m[5]], strings.ReplaceAll(src[m[6]:m[7]], ".", "_")
				if strings.Contains(callArgs(src, m[1]), `WithUnit("s")`) && !strings.HasSuffix(name, "_seconds") {
					name += "_seconds"
				}
				switch kind {
				case "Counter", "ObservableCounter":
					out[strings.TrimSuffix(name, "_total")+"_total"] = true
				case "Histogram":
					for _, s := range []string{"_bucket", "_sum", "_count"} {
						out[name+s] = true
					}
				default:
					out[name] = true
				}
			}
			for _, m := range checkerName.FindAllStringSubmatch(src, -1) {
				out[m[1]] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// callArgs returns the rest of the call whose arguments go on at i: up to its closing
// parenthesis (strings are not parsed; instrument options hold no parentheses in strings).
func callArgs(src string, i int) string {
	depth := 1
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return src[i:j]
			}
		}
	}
	return src[i:]
}

// The code scan finds the instruments the dashboards and alerts read, under their exported
// names, and nothing that is not one: without this the checks below could pass vacuously.
func TestCodeMetricsScan(t *testing.T) {
	have := codeMetrics(t)
	for _, m := range []string{"outbox_pending_rows", "outbox_oldest_pending_age_seconds", "outbox_publish_failures_total",
		"eventbus_batch_age_seconds", "intelligence_entity_tags_failures_total", "token_analytics_close_duration_seconds_bucket",
		"transfers_token_checks_unchecked_total", "edge_shed_total", "stream_usage_events_pending", "progress_rate"} {
		if !have[m] {
			t.Errorf("%s not found in the code", m)
		}
	}
	for _, m := range []string{"edge_shed_total_total", "outbox_pending_rows_total", "intelligence.entity_tags.failures"} {
		if have[m] {
			t.Errorf("%s found in the code, which exports no such name", m)
		}
	}
}

// Every metric a dashboard panel queries is made by the code (under its exported name), and a
// service's dashboard queries eventbus_* if and only if the service runs a consumer (whose
// series those are); the e2e TestDashboardMetricsExist checks the same against live services, where
// it runs.
func TestDashboardMetricsInCode(t *testing.T) {
	have := codeMetrics(t)
	files, err := filepath.Glob("chainintel/dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards (%v)", err)
	}
	for _, f := range files {
		var d dashboard
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		board := strings.TrimSuffix(filepath.Base(f), ".json")
		consumes, isService := runsConsumer(t, board)
		queried := map[string]bool{}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				for _, m := range promscrape.MetricNames(tg.Expr) {
					queried[m] = true
					if !have[m] {
						t.Errorf("%s: panel %q queries %s, which no service makes", filepath.Base(f), p.Title, m)
					}
					if isService && !consumes && strings.HasPrefix(m, "eventbus_") {
						t.Errorf("%s: panel %q queries %s, but %s runs no eventbus consumer", filepath.Base(f), p.Title, m, board)
					}
				}
			}
		}
		for _, m := range consumerPanelMetrics {
			if consumes && !queried[m] {
				t.Errorf("%s: %s runs an eventbus consumer, but no panel queries %s", filepath.Base(f), board, m)
			}
		}
	}
}

// consumerPanelMetrics are what the dashboard of a service running an eventbus consumer shows
// of it: lag, batch age, records handled, handler failures and dead-lettered records.
var consumerPanelMetrics = []string{"eventbus_consumer_lag", "eventbus_batch_age_seconds", "eventbus_consumed_total",
	"eventbus_handler_failures_total", "eventbus_dlq_total"}

// consumerCall is how a service starts an eventbus consumer.
var consumerCall = regexp.MustCompile(`\b(service\.Consume|eventbus\.NewConsumer)\b`)

// runsConsumer reports whether the code of services/<name> (tests aside) starts an eventbus
// consumer, and whether there is such a service (the overview is not one).
func runsConsumer(t *testing.T, name string) (consumes, isService bool) {
	t.Helper()
	root := filepath.Join("..", "services", name)
	if _, err := os.Stat(root); err != nil {
		return false, false
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || consumes || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		consumes = err == nil && consumerCall.Match(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return consumes, true
}

// alertTableMetrics lists the metrics docs/operations.md's "Metrics worth an alert" table
// names in its first column.
func alertTableMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Metrics worth an alert")
	if !ok {
		t.Fatal(`docs/operations.md has no "Metrics worth an alert" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	name := regexp.MustCompile("`([a-z]+_[a-z_]+)[`{]") // metric names have an underscore; label names (topic, chain) do not
	var out []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// The PrometheusRule renders only when enabled, with the operator's labels; each alert has an
// expression, a severity and a valid for; every metric an alert reads is made by the code;
// every metric of docs/operations.md's alert table has an alert, and so do the outboxes.
func TestPrometheusRule(t *testing.T) {
	if n := len(Of[*monitoringv1.PrometheusRule](render(t, "./chainintel", nil))); n != 0 {
		t.Errorf("%d PrometheusRules by default, want none", n)
	}
	prs := Of[*monitoringv1.PrometheusRule](render(t, "./chainintel", nil, "prometheusRule.enabled=true",
		"prometheusRule.labels.release=kube-prometheus-stack", "prometheusRule.outboxMaxAgeSeconds=120",
		"edge.serviceMonitor.enabled=true", "global.networkPolicy.metricsNamespaces={monitoring}"))
	if len(prs) != 1 {
		t.Fatalf("%d PrometheusRules when enabled, want 1", len(prs))
	}
	pr := prs[0]
	if pr.Name != releaseName+"-alerts" || pr.Labels["release"] != "kube-prometheus-stack" {
		t.Errorf("name %q, labels %v", pr.Name, pr.Labels)
	}
	have := codeMetrics(t)
	for _, m := range scrapeMetrics {
		have[m] = true
	}
	anchors := runbookAnchors(t)
	read := map[string]bool{}
	alerts := map[string]bool{}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			expr := r.Expr.String()
			where := "alert " + r.Alert
			if r.Alert == "" || alerts[r.Alert] || strings.TrimSpace(expr) == "" || strings.Contains(expr, "{{") {
				t.Errorf("%s: a unique name and a rendered expression required: %q", where, expr)
			}
			alerts[r.Alert] = true
			if s := r.Labels["severity"]; !slices.Contains([]string{"info", "warning", "critical"}, s) {
				t.Errorf("%s: severity %q", where, s)
			}
			if r.For != nil {
				if _, err := time.ParseDuration(string(*r.For)); err != nil {
					t.Errorf("%s: for %q: %v", where, *r.For, err)
				}
			}
			if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
				t.Errorf("%s: unbalanced %s", where, expr)
			}
			if strings.Contains(r.Annotations["summary"], "{{`") {
				t.Errorf("%s: summary %q not rendered to a Prometheus template", where, r.Annotations["summary"])
			}
			for _, m := range promscrape.MetricNames(expr) {
				read[m] = true
				if !have[m] {
					t.Errorf("%s reads %s, which no service makes", where, m)
				}
			}
			if want := "docs/operations.md#" + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want || !anchors[strings.ToLower(r.Alert)] {
				t.Errorf("%s: runbook_url %q, want %q, an anchor of docs/operations.md \"Alerts by name\"", where, r.Annotations["runbook_url"], want)
			}
			if r.Alert == "ChainintelOutboxStale" && !strings.HasSuffix(strings.TrimSpace(expr), "> 120") {
				t.Errorf("%s: %s does not use prometheusRule.outboxMaxAgeSeconds", where, expr)
			}
		}
	}
	for _, m := range append(alertTableMetrics(t), "outbox_oldest_pending_age_seconds", "outbox_publish_failures_total") {
		if !read[m] && !read[m+"_bucket"] {
			t.Errorf("no alert reads %s (docs/operations.md, \"Metrics worth an alert\")", m)
		}
	}
	lower := map[string]bool{}
	for a := range alerts {
		lower[strings.ToLower(a)] = true
	}
	for a := range anchors {
		if !lower[a] {
			t.Errorf("docs/operations.md \"Alerts by name\" has %s, which the chart does not render", a)
		}
	}
}

// scrapeMetrics are the series Prometheus' scrape itself makes for every target.
var scrapeMetrics = []string{"up"}

// runbookAnchors lists the anchors of docs/operations.md "Alerts by name", by the alert's name
// in lower case (the runbook_url fragment).
func runbookAnchors(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(b), "\n## Alerts by name\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "Alerts by name" section`)
	}
	list, _, _ = strings.Cut(list, "\n## ")
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9]+)"></a>`+"`(Chainintel\\w+)`").FindAllStringSubmatch(list, -1) {
		if m[1] != strings.ToLower(m[2]) {
			t.Errorf("docs/operations.md: anchor %q names %s", m[1], m[2])
		}
		out[m[1]] = true
	}
	return out
}

// rules returns the rendered alerting rules by name.
func rules(t *testing.T, sets ...string) map[string]*monitoringv1.Rule {
	t.Helper()
	out := map[string]*monitoringv1.Rule{}
	for _, pr := range Of[*monitoringv1.PrometheusRule](render(t, "./chainintel", nil, append([]string{"prometheusRule.enabled=true"}, sets...)...)) {
		for _, g := range pr.Spec.Groups {
			for i := range g.Rules {
				out[g.Rules[i].Alert] = &g.Rules[i]
			}
		}
	}
	return out
}

// A service that is down, or whose replicas partly are, alerts through up (per job, the job
// being the service's name, in the release's namespace: another namespace's job of the same
// name is not this release's); a service whose ServiceMonitor is on and that has no
// target at all alerts through absent(up) in the release's namespace; runbook_url follows
// prometheusRule.runbookBaseURL.
func TestServiceDownAlerts(t *testing.T) {
	all := `up{namespace="` + namespace + `",job=~"edge|ingest|transfers|intelligence|user-labels|balances|token-analytics|stream-fanout"}`
	r := rules(t)
	if r["ChainintelServiceDown"] == nil || r["ChainintelTargetDown"] == nil || r["ChainintelEdgeShedding"] == nil {
		t.Fatalf("ChainintelServiceDown, ChainintelTargetDown or ChainintelEdgeShedding not rendered")
	}
	if got := r["ChainintelServiceDown"].Expr.String(); got != "max by (namespace, job) ("+all+") == 0" || r["ChainintelServiceDown"].Labels["severity"] != "critical" {
		t.Errorf("ChainintelServiceDown: %q %v", got, r["ChainintelServiceDown"].Labels)
	}
	if got := r["ChainintelTargetDown"].Expr.String(); !strings.HasPrefix(got, "count by (namespace, job) ("+all+" == 0) unless on (namespace, job)") {
		t.Errorf("ChainintelTargetDown: %q", got)
	}
	if a, ok := r["ChainintelServiceAbsent"]; ok {
		t.Errorf("no ServiceMonitor on, yet ChainintelServiceAbsent: %q", a.Expr.String())
	}

	r = rules(t, "user-labels.enabled=false", "transfers.fullnameOverride=xfers", "edge.serviceMonitor.enabled=true",
		"stream-fanout.serviceMonitor.enabled=true", "global.networkPolicy.metricsNamespaces={monitoring}",
		"prometheusRule.runbookBaseURL=https://docs.example/ops.md")
	if got := r["ChainintelServiceDown"].Expr.String(); !strings.Contains(got, `up{namespace="`+namespace+`",job=~"edge|ingest|xfers|intelligence|balances|token-analytics|stream-fanout"}`) {
		t.Errorf("ChainintelServiceDown, user-labels off and transfers renamed: %q", got)
	}
	want := `absent(up{job="edge", namespace="` + namespace + `"}) or absent(up{job="stream-fanout", namespace="` + namespace + `"})`
	if r["ChainintelServiceAbsent"] == nil {
		t.Fatal("ServiceMonitors on, yet no ChainintelServiceAbsent")
	}
	if got := r["ChainintelServiceAbsent"].Expr.String(); got != want {
		t.Errorf("ChainintelServiceAbsent = %q, want %q", got, want)
	}
	if got := r["ChainintelEdgeShedding"].Annotations["runbook_url"]; got != "https://docs.example/ops.md#chaininteledgeshedding" {
		t.Errorf("runbook_url %q does not follow prometheusRule.runbookBaseURL", got)
	}
}

// ChainintelBalancesPrunerIdle fires only when observations older than the retention can exist:
// besides a day without pruning, balances consumed observations in the last day and in the day
// before its retention (read from balances.env, as the service reads it), so a new install is
// quiet; with the retention off (0) there is no pruner and no alert.
func TestBalancesPrunerIdleAlert(t *testing.T) {
	expr := func(sets ...string) (string, bool) {
		t.Helper()
		r := render(t, "./chainintel", nil, append([]string{"prometheusRule.enabled=true"}, sets...)...)
		for _, pr := range Of[*monitoringv1.PrometheusRule](r) {
			for _, g := range pr.Spec.Groups {
				for _, rule := range g.Rules {
					if rule.Alert == "ChainintelBalancesPrunerIdle" {
						return rule.Expr.String(), true
					}
				}
			}
		}
		return "", false
	}
	const consumed = `increase(eventbus_consumed_total{group="balances.chain.balances.v1"}[1d]`
	for _, c := range []struct {
		sets      []string
		retention string
	}{
		{nil, "72h"},
		{[]string{"balances.env.OBSERVATION_RETENTION=120h"}, "120h"},
		{[]string{"balances.env.BALANCES_OBSERVATION_RETENTION=96h"}, "96h"},
	} {
		e, ok := expr(c.sets...)
		if !ok {
			t.Errorf("%v: no ChainintelBalancesPrunerIdle", c.sets)
			continue
		}
		for _, want := range []string{"sum by (namespace) (increase(balances_observations_pruned_total[1d])) == 0",
			consumed + ")) > 0", consumed + " offset " + c.retention + ")) > 0"} {
			if !strings.Contains(e, want) {
				t.Errorf("%v: ChainintelBalancesPrunerIdle %q lacks %q", c.sets, e, want)
			}
		}
	}
	if e, ok := expr("balances.env.OBSERVATION_RETENTION=0"); ok {
		t.Errorf("retention off: ChainintelBalancesPrunerIdle still rendered: %q", e)
	}
}
