package charts

import (
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
)

const goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
`

func TestDecodeAcceptsManifestStreams(t *testing.T) {
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	stream := "---\n# Source: chart/templates/a.yaml\n" + goodDeployment +
		"---\n# only a comment\n---\n\n---\n# Source: chart/templates/sm.yaml\n" +
		"apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  endpoints:\n    - port: ops\n      path: /metrics\n"
	objs, err := d.Decode([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("decoded %d objects, want 2", len(objs))
	}
	dep, ok := objs[0].Obj.(*appsv1.Deployment)
	if !ok || dep.Name != "web" || *dep.Spec.Replicas != 2 || objs[0].Source != "chart/templates/a.yaml" {
		t.Errorf("first object %+v", objs[0])
	}
	sm, ok := objs[1].Obj.(*monitoringv1.ServiceMonitor)
	if !ok || sm.Spec.Endpoints[0].Port != "ops" || objs[1].Key() != "ServiceMonitor/web" {
		t.Errorf("second object %+v", objs[1])
	}
}

func TestDecodeRejects(t *testing.T) {
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, doc, want string
	}{
		{"unknown field", strings.Replace(goodDeployment, "  replicas: 2", "  replicas: 2\n  replica: 3", 1), `unknown field "spec.replica"`},
		{"misplaced field", strings.Replace(goodDeployment, "          image: web:1", "          image: web:1\n          readOnlyRootFilesystem: true", 1), "readOnlyRootFilesystem"},
		{"duplicate field", strings.Replace(goodDeployment, "  replicas: 2", "  replicas: 2\n  replicas: 3", 1), `"replicas" already set`},
		{"wrong type", strings.Replace(goodDeployment, "replicas: 2", `replicas: "two"`, 1), "replicas"},
		{"unknown kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", "no kind \"Widget\" is registered"},
		{"unknown version", strings.Replace(goodDeployment, "apps/v1", "apps/v1beta9", 1), "apps/v1beta9"},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: x\n", "'Kind' is missing"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n", "without metadata.name"},
		{"unknown ServiceMonitor field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: m\nspec:\n  selector: {}\n  endpoint:\n    - port: ops\n", `unknown field "spec.endpoint"`},
		{"not YAML", "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n", "document 0: yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := d.Decode([]byte(c.doc))
			if err == nil {
				t.Fatalf("decoded:\n%s", c.doc)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}
