package charts

import (
	"os"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// k8s/values-kind.yaml runs the simulator as make run does (dev/stack): the simulator ingester
// serves the market feed, token-analytics polls it at ingest's Service under the path ingest
// serves it on (read from services/ingest's source), and that Service reaches the simulator's
// pods on its http port.
func TestKindRunsTheSimulatorAsMakeRun(t *testing.T) {
	src, err := os.ReadFile("../services/ingest/ingest.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const SimMarketPath = "([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no SimMarketPath in services/ingest/ingest.go")
	}
	r := render(t, "./chainintel", []string{"../k8s/values-kind.yaml"})

	if v := deploymentEnv(t, r, "ingest-simulator")["INGEST_SIM_MARKET_FEED"]; v.Value != "true" {
		t.Errorf("ingest-simulator: INGEST_SIM_MARKET_FEED = %+v, want true", v)
	}
	ta := deploymentEnv(t, r, "token-analytics")
	want := map[string]string{
		"TOKENANALYTICS_PRICE_API_URL":             "http://ingest:8080" + string(m[1]),
		"TOKENANALYTICS_PRICE_POLL_INTERVAL":       "10s",
		"TOKENANALYTICS_PRICE_REQUESTS_PER_MINUTE": "6000",
		"TOKENANALYTICS_PRICE_HISTORY":             "2208h",
		"TOKENANALYTICS_TOP_REFRESH":               "30s",
	}
	for name, v := range want {
		if got := ta[name]; got.Value != v || got.Secret != nil {
			t.Errorf("token-analytics: %s = %+v, want %q", name, got, v)
		}
	}

	o, ok := r.Get("Service", "ingest")
	if !ok {
		t.Fatal("no Service/ingest")
	}
	svc := o.Obj.(*corev1.Service)
	port := false
	for _, p := range svc.Spec.Ports {
		port = port || (p.Name == "http" && p.Port == 8080)
	}
	if !port {
		t.Errorf("Service/ingest has no http port 8080: %+v", svc.Spec.Ports)
	}
	for _, d := range Of[*appsv1.Deployment](r) {
		if d.Name == "ingest-simulator" && !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Service/ingest does not select the simulator's pods")
		}
	}
}
