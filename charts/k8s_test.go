package charts

import (
	"encoding/base64"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kindv1alpha4 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// The kind cluster config decodes strictly into kind's v1alpha4 types and gives the ingress
// controller a node labelled ingress-ready=true with host ports 80 and 443.
func TestKindConfig(t *testing.T) {
	data, err := os.ReadFile("../k8s/kind-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c kindv1alpha4.Cluster
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("k8s/kind-config.yaml: %v", err)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Errorf("kind %q apiVersion %q, want Cluster kind.x-k8s.io/v1alpha4", c.Kind, c.APIVersion)
	}
	kindv1alpha4.SetDefaultsCluster(&c)
	if c.Networking.DisableDefaultCNI {
		t.Error("default CNI disabled: nothing would enforce the charts' NetworkPolicies")
	}
	var ingressNodes int
	for _, n := range c.Nodes {
		if n.Labels["ingress-ready"] != "true" {
			continue
		}
		ingressNodes++
		for _, port := range []int32{80, 443} {
			if !slices.ContainsFunc(n.ExtraPortMappings, func(m kindv1alpha4.PortMapping) bool {
				return m.ContainerPort == port && m.HostPort == port && (m.Protocol == "" || m.Protocol == kindv1alpha4.PortMappingProtocolTCP)
			}) {
				t.Errorf("ingress-ready node does not map host port %d to the node's %d", port, port)
			}
		}
	}
	if ingressNodes != 1 {
		t.Errorf("%d nodes labelled ingress-ready=true, want 1 (host ports 80/443 go to one node)", ingressNodes)
	}
}

// devInfra decodes every manifest of k8s/dev strictly.
func devInfra(t *testing.T) *Rendered {
	t.Helper()
	files, err := filepath.Glob("../k8s/dev/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in k8s/dev (%v)", err)
	}
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	var objs []Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		objs = append(objs, got...)
	}
	r, err := NewRendered(objs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The development Kafka, PostgreSQL and Redis are StatefulSets behind Services at the addresses
// the umbrella chart's kind values point the services at, in the release's namespace.
func TestDevInfra(t *testing.T) {
	r := devInfra(t)
	if _, ok := r.Get("Namespace", namespace); !ok {
		t.Errorf("k8s/dev does not create namespace %s", namespace)
	}
	for _, o := range r.Objects {
		if o.GVK.Kind != "Namespace" && o.Meta.GetNamespace() != namespace {
			t.Errorf("%s in namespace %q, want %s (the release's)", o.Key(), o.Meta.GetNamespace(), namespace)
		}
	}
	want := map[string]struct {
		port  int32
		image string
	}{
		"kafka":    {9092, "apache/kafka:"},
		"postgres": {5432, "postgres:"},
		"redis":    {6379, "redis:"},
	}
	for name, w := range want {
		o, ok := r.Get("StatefulSet", name)
		if !ok {
			t.Errorf("no StatefulSet %s", name)
			continue
		}
		ss := o.Obj.(*appsv1.StatefulSet)
		sel, err := metav1.LabelSelectorAsSelector(ss.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(ss.Spec.Template.Labels)) {
			t.Errorf("StatefulSet/%s: selector does not select its pods", name)
		}
		if _, ok := r.Get("Service", ss.Spec.ServiceName); !ok {
			t.Errorf("StatefulSet/%s: serviceName %s is not a Service here", name, ss.Spec.ServiceName)
		}
		c := ss.Spec.Template.Spec.Containers[0]
		if !strings.HasPrefix(c.Image, w.image) || strings.HasSuffix(c.Image, ":latest") {
			t.Errorf("StatefulSet/%s: image %s, want a pinned %s", name, c.Image, w.image)
		}
		if c.ReadinessProbe == nil {
			t.Errorf("StatefulSet/%s: no readiness probe (the migrate Jobs and services wait on it)", name)
		}
		if sc := ss.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("StatefulSet/%s: not running as non-root", name)
		}
		so, ok := r.Get("Service", name)
		if !ok {
			t.Errorf("no Service %s", name)
			continue
		}
		svc := so.Obj.(*corev1.Service)
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(ss.Spec.Template.Labels)) {
			t.Errorf("Service/%s does not select StatefulSet/%s", name, name)
		}
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
			return p.Port == w.port && slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
				return cp.Name == p.TargetPort.String() || cp.ContainerPort == p.TargetPort.IntVal
			})
		}) {
			t.Errorf("Service/%s does not expose %d onto a container port", name, w.port)
		}
	}

	// Kafka: one KRaft node (broker and controller), advertising the Service's address, with
	// service links off (the image would read KAFKA_PORT etc. as settings).
	kafka := mustGet(t, r, "StatefulSet", "kafka").Obj.(*appsv1.StatefulSet)
	spec := kafka.Spec.Template.Spec
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Error("kafka: service links on; the image would turn KAFKA_SERVICE_* into broker settings")
	}
	env := map[string]string{}
	for _, e := range spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["KAFKA_PROCESS_ROLES"] != "broker,controller" || env["KAFKA_ADVERTISED_LISTENERS"] != "PLAINTEXT://kafka:9092" {
		t.Errorf("kafka: roles %q, advertised %q; want a combined KRaft node advertising kafka:9092", env["KAFKA_PROCESS_ROLES"], env["KAFKA_ADVERTISED_LISTENERS"])
	}
	if id, err := base64.RawURLEncoding.DecodeString(env["CLUSTER_ID"]); err != nil || len(id) != 16 {
		t.Errorf("kafka: CLUSTER_ID %q is not a base64 UUID (%v)", env["CLUSTER_ID"], err)
	}
	if *kafka.Spec.Replicas != 1 || env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] != "1" {
		t.Error("kafka: a single node needs internal topics with replication 1")
	}

	// The umbrella chart with the kind values reaches exactly these Services.
	u := render(t, "./chainintel", []string{"../k8s/values-kind.yaml"})
	edge := findWorkload(t, checkPlatform(t, u, expect{secretName: releaseName, secretRendered: true,
		ingressNamespaces: map[string][]string{"edge": {"ingress-nginx"}}}), "edge")
	for _, b := range strings.Split(edge.env["EDGE_KAFKA_BROKERS"].Value, ",") {
		requireService(t, r, "EDGE_KAFKA_BROKERS", b)
	}
	ru, err := url.Parse(edge.env["EDGE_REDIS_URL"].Value)
	if err != nil {
		t.Fatal(err)
	}
	requireService(t, r, "EDGE_REDIS_URL", ru.Host)
	sec := mustGet(t, u, "Secret", releaseName).Obj.(*corev1.Secret)
	du, err := url.Parse(string(sec.Data["database-url"]))
	if err != nil {
		t.Fatal(err)
	}
	requireService(t, r, "database-url", du.Host)
	pg := mustGet(t, r, "Secret", "postgres").Obj.(*corev1.Secret).StringData
	pass, _ := du.User.Password()
	if du.User.Username() != pg["POSTGRES_USER"] || pass != pg["POSTGRES_PASSWORD"] || strings.TrimPrefix(du.Path, "/") != pg["POSTGRES_DB"] {
		t.Errorf("database-url %s does not match the dev PostgreSQL's user, password and database %v", du.Redacted(), pg)
	}
}

// requireService: host:port is a Service of the dev infrastructure with that port.
func requireService(t *testing.T, r *Rendered, what, hostport string) {
	t.Helper()
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Errorf("%s: %q: %v", what, hostport, err)
		return
	}
	o, ok := r.Get("Service", host)
	if !ok {
		t.Errorf("%s points at %s, which k8s/dev does not provide", what, hostport)
		return
	}
	if !slices.ContainsFunc(o.Obj.(*corev1.Service).Spec.Ports, func(p corev1.ServicePort) bool { return port == strconv.Itoa(int(p.Port)) }) {
		t.Errorf("%s points at %s; Service/%s has no port %s", what, hostport, host, port)
	}
}

func mustGet(t *testing.T, r *Rendered, kind, name string) Object {
	t.Helper()
	o, ok := r.Get(kind, name)
	if !ok {
		t.Fatalf("no %s/%s", kind, name)
	}
	return o
}

// k8sRef is a manifest or values file of k8s/ named in the docs or the charts' values.
var k8sRef = regexp.MustCompile(`\bk8s/[A-Za-z0-9_./-]+\.ya?ml\b`)

// Every k8s/ file the docs, the Makefile, skaffold.yaml or a chart's values name exists.
func TestReferencedK8sFilesExist(t *testing.T) {
	files := []string{"../README.md", "../Makefile", "../skaffold.yaml"}
	for _, glob := range []string{"../docs/*.md", "*/values.yaml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range k8sRef.FindAllString(string(b), -1) {
			found++
			if _, err := os.Stat(filepath.Join("..", ref)); err != nil {
				t.Errorf("%s names %s, which does not exist", f, ref)
			}
		}
	}
	if found == 0 {
		t.Fatal("no k8s/ file named anywhere: the pattern is wrong")
	}
}
