package charts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/promscrape"
	corev1 "k8s.io/api/core/v1"
)

// dashboard is the part of a Grafana dashboard the checks read; decoding is strict about types.
type dashboard struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Tags          []string `json:"tags"`
	SchemaVersion int      `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Query      any    `json:"query"` // a string, or an object for some variable types
			Definition string `json:"definition"`
			Multi      bool   `json:"multi"`
			Current    struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			RefID      string `json:"refId"`
			Expr       string `json:"expr"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

// The umbrella renders one ConfigMap with every dashboard file, labelled for Grafana's sidecar;
// each dashboard is valid JSON with a unique uid, the Prometheus datasource variable, panels
// inside the 24-column grid, and a PromQL query in every target.
func TestUmbrellaDashboards(t *testing.T) {
	files, err := filepath.Glob("chainintel/dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in chainintel/dashboards (%v)", err)
	}
	want := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(f)] = b
	}

	r := render(t, "./chainintel", nil)
	cms := dashboardConfigMaps(r)
	if len(cms) != 1 {
		t.Fatalf("%d dashboard ConfigMaps, want 1", len(cms))
	}
	cm := cms[0]
	if cm.Name != releaseName+"-dashboards" {
		t.Errorf("ConfigMap name %q", cm.Name)
	}
	if got := cm.Labels["grafana_dashboard"]; got != "1" {
		t.Errorf("label grafana_dashboard=%q, want \"1\"", got)
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) != len(want) {
		t.Errorf("ConfigMap keys %v, want the %d files", keys, len(want))
	}
	uids := map[string]string{}
	for name, b := range want {
		got, ok := cm.Data[name]
		if !ok {
			t.Errorf("%s missing from the ConfigMap", name)
			continue
		}
		if !bytes.Equal(bytes.TrimSpace([]byte(got)), bytes.TrimSpace(b)) {
			t.Errorf("%s: ConfigMap content differs from the file", name)
		}
		checkDashboard(t, name, []byte(got), uids)
	}

	// Switched off, or with another sidecar label.
	if n := len(dashboardConfigMaps(render(t, "./chainintel", nil, "dashboards.enabled=false"))); n != 0 {
		t.Errorf("dashboards.enabled=false rendered %d dashboard ConfigMaps", n)
	}
	other := dashboardConfigMaps(render(t, "./chainintel", nil, "dashboards.label=my_dashboards", "dashboards.labelValue=yes",
		"dashboards.annotations.grafana_folder=chainintel"))
	if len(other) != 1 || other[0].Labels["my_dashboards"] != "yes" || other[0].Annotations["grafana_folder"] != "chainintel" {
		t.Errorf("custom label/annotations not applied: %+v", other)
	}
}

func dashboardConfigMaps(r *Rendered) []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	for _, cm := range Of[*corev1.ConfigMap](r) {
		if strings.HasSuffix(cm.Name, "-dashboards") {
			out = append(out, cm)
		}
	}
	return out
}

func checkDashboard(t *testing.T, name string, raw []byte, uids map[string]string) {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if d.UID == "" || len(d.UID) > 40 || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("%s: uid %q (1..40 characters), title %q and schemaVersion %d required", name, d.UID, d.Title, d.SchemaVersion)
	}
	if prev, dup := uids[d.UID]; dup {
		t.Errorf("%s: uid %q also used by %s", name, d.UID, prev)
	}
	uids[d.UID] = name
	hasDS := false
	defined := map[string]bool{}
	for _, v := range d.Templating.List {
		hasDS = hasDS || (v.Name == "datasource" && v.Type == "datasource")
		defined[v.Name] = true
	}
	// Every variable a query uses is defined: Grafana sends an undefined "$job" as those
	// characters, so the panel matches nothing and shows "No data" instead of an error.
	undefined := func(where, text string) {
		for _, v := range dashboardVars(text) {
			if !defined[v] {
				t.Errorf("%s: uses $%s, which the dashboard's templating does not define (%s)", where, v, text)
			}
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok {
			undefined(name+": variable "+v.Name, q)
		}
	}
	if !hasDS {
		t.Errorf("%s: no datasource variable", name)
	}
	checkNamespaceVar(t, name, d)
	if len(d.Panels) == 0 {
		t.Errorf("%s: no panels", name)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		where := name + ": panel " + p.Title
		if p.ID == 0 || ids[p.ID] {
			t.Errorf("%s: id %d missing or repeated", where, p.ID)
		}
		ids[p.ID] = true
		undefined(where, p.Datasource.UID)
		if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %+v, want the prometheus ${datasource} variable", where, p.Datasource)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: gridPos %+v outside the 24-column grid", where, p.GridPos)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no targets", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: target %+v needs an expr and a unique refId", where, tg)
			}
			refs[tg.RefID] = true
			undefined(where, tg.Expr)
			if sel := unscopedSelector(tg.Expr); sel != "" {
				t.Errorf("%s: %s is not filtered by %s (%s)", where, sel, namespaceMatcher, tg.Expr)
			}
			undefined(where, tg.Datasource.UID)
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") || strings.Count(tg.Expr, "{") != strings.Count(tg.Expr, "}") {
				t.Errorf("%s: unbalanced query %s", where, tg.Expr)
			}
		}
	}
}

// dashboardVarRe matches Grafana's variable syntaxes: $name, ${name}, ${name:format}, [[name]].
var dashboardVarRe = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]`)

// dashboardVars lists the variables text uses, without Grafana's built-ins ($__rate_interval,
// $__interval, $__range, ...) and PromQL's numbered groups (label_replace's "$1").
func dashboardVars(text string) []string {
	var out []string
	for _, m := range dashboardVarRe.FindAllStringSubmatch(text, -1) {
		v := m[1] + m[2] + m[3]
		if !strings.HasPrefix(v, "__") && strings.Trim(v, "0123456789") != "" {
			out = append(out, v)
		}
	}
	return out
}

func TestDashboardVars(t *testing.T) {
	got := dashboardVars(`rate(x{job="$job",a=~"${chain:regex}"}[$__rate_interval]) [[old]] ${__from} $1`)
	if want := []string{"job", "chain", "old"}; !slices.Equal(got, want) {
		t.Errorf("dashboardVars = %v, want %v", got, want)
	}
}

// namespaceMatcher is how every panel query keeps to the dashboard's namespace: the alerts
// group by namespace, and a Prometheus scraping several releases would otherwise sum them.
const namespaceMatcher = `namespace=~"$namespace"`

// checkNamespaceVar: the dashboard has a single-valued namespace variable listing the namespaces
// Prometheus scrapes, with a default.
func checkNamespaceVar(t *testing.T, name string, d dashboard) {
	t.Helper()
	for _, v := range d.Templating.List {
		if v.Name != "namespace" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		if v.Type != "query" || v.Multi || v.Definition != "label_values(up, namespace)" || q == nil ||
			q["query"] != "label_values(up, namespace)" || v.Current.Value == nil || v.Current.Value == "" {
			t.Errorf("%s: namespace variable %+v, want a query of label_values(up, namespace), one value, a default", name, v)
		}
		return
	}
	t.Errorf("%s: no namespace variable", name)
}

// unscopedSelector returns the first metric selector of expr without the namespace matcher.
func unscopedSelector(expr string) string {
	for _, m := range promscrape.MetricNames(expr) {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(m) + `\b(\{[^}]*\})?`)
		for _, sel := range re.FindAllStringSubmatch(expr, -1) {
			if !strings.Contains(sel[1], namespaceMatcher) {
				return sel[0]
			}
		}
	}
	return ""
}

func TestUnscopedSelector(t *testing.T) {
	for expr, want := range map[string]string{
		`sum by (job) (rate(a_total{namespace=~"$namespace",job="$job"}[5m])) / sum(b_total{namespace=~"$namespace"})`: "",
		`sum(a_total{namespace=~"$namespace"}) / sum(b_total)`:                                                         "b_total",
		`max(a_seconds{job="$job"})`: `a_seconds{job="$job"}`,
	} {
		if got := unscopedSelector(expr); got != want {
			t.Errorf("unscopedSelector(%s) = %q, want %q", expr, got, want)
		}
	}
}
