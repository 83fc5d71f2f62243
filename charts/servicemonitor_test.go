package charts

import (
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// A ServiceMonitor whose scrapes the service's own NetworkPolicy blocks (the policy on, no
// metrics namespace and no extraIngress rule for the ops port) is refused at render, naming the
// service and the values that admit Prometheus; each of those values, or the policy off, renders.
func TestServiceMonitorNeedsScrapeAccess(t *testing.T) {
	const want = "admits no Prometheus to the ops port"
	for _, svc := range []string{"edge", "ingest"} {
		msg := renderFails(t, "./chainintel", nil, svc+".serviceMonitor.enabled=true")
		if !strings.Contains(msg, svc+": serviceMonitor.enabled") || !strings.Contains(msg, want) ||
			!strings.Contains(msg, "global.networkPolicy.metricsNamespaces") {
			t.Errorf("%s: message %q does not say what blocks the scrapes and how to admit them", svc, msg)
		}
	}
	if msg := renderFails(t, "./transfers", nil, "serviceMonitor.enabled=true"); !strings.Contains(msg, want) {
		t.Errorf("the transfers chart alone: %q", msg)
	}
	// A rule for the HTTP port only does not admit the scrapes.
	if msg := renderFails(t, "./edge", nil, "serviceMonitor.enabled=true", "networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus",
		"networkPolicy.extraIngress[0].ports[0].port=http"); !strings.Contains(msg, want) {
		t.Errorf("extraIngress for the http port: %q", msg)
	}
	if msg := renderFails(t, "./edge", nil, "serviceMonitor.enabled=true", "networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus",
		"networkPolicy.extraIngress[0].ports[0].port=9000", "networkPolicy.extraIngress[0].ports[0].endPort=9050"); !strings.Contains(msg, want) {
		t.Errorf("extraIngress for a range without the ops port: %q", msg)
	}

	for _, sets := range [][]string{
		{"global.networkPolicy.metricsNamespaces={monitoring}"},
		{"edge.networkPolicy.metricsNamespaces={monitoring}"},
		{"edge.networkPolicy.enabled=false"},
		{"edge.networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus", "edge.networkPolicy.extraIngress[0].ports[0].port=ops"},
		{"edge.networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus", "edge.networkPolicy.extraIngress[0].ports[0].port=9090"},
		{"edge.networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus"},                                                             // every port
		{"edge.networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus", "edge.networkPolicy.extraIngress[0].ports[0].protocol=TCP"}, // every TCP port
		{"edge.networkPolicy.extraIngress[0].from[0].podSelector.matchLabels.app=prometheus", "edge.networkPolicy.extraIngress[0].ports[0].port=9000",
			"edge.networkPolicy.extraIngress[0].ports[0].endPort=9999"}, // a range holding 9090
	} {
		r := render(t, "./chainintel", nil, append([]string{"edge.serviceMonitor.enabled=true"}, sets...)...)
		if n := len(Of[*monitoringv1.ServiceMonitor](r)); n != 1 {
			t.Errorf("%v: %d ServiceMonitors, want the edge's", sets, n)
		}
	}
}
