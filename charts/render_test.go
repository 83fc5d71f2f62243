package charts

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// defaultExpect is what the charts' default values promise.
func defaultExpect() expect {
	return expect{
		secretName:        releaseName, // the umbrella's Secret: the release name (it contains "chainintel")
		ingressNamespaces: map[string][]string{"edge": {"ingress-nginx"}},
	}
}

// Each service chart on its own, with its default values.
func TestServiceChartDefaults(t *testing.T) {
	for _, svc := range serviceNames {
		t.Run(svc, func(t *testing.T) {
			r := render(t, "./"+svc, nil)
			ws := checkPlatform(t, r, defaultExpect())
			f := facts(t)[svc]

			wantKinds := map[string]int{"ServiceAccount": 1, "ConfigMap": 1, "Service": 1, "Deployment": 1, "NetworkPolicy": 1}
			if f.Migrates() {
				wantKinds["Job"] = 1
				wantKinds["ConfigMap"]++ // the Job's own, a hook made before it
			}
			switch svc {
			case "ingest":
			case "edge":
				wantKinds["HorizontalPodAutoscaler"] = 1
				wantKinds["PodDisruptionBudget"] = 1
			default:
				wantKinds["HorizontalPodAutoscaler"] = 1
			}
			if got := r.Kinds(); !equalCounts(got, wantKinds) {
				t.Errorf("kinds %v, want %v", got, wantKinds)
			}
			if svc == "ingest" {
				checkIngest(t, r, ws, map[string]string{"ethereum": "evm"})
			}
			if svc == "edge" {
				checkUpstreams(t, ws, nil)
			}
			checkTiers(t, r, ws, "") // the built-in table
		})
	}
}

// Each service chart with the toggles flipped: no autoscaler, a PDB, a ServiceMonitor, an
// existing Secret, extra environment of every kind, metrics namespace.
func TestServiceChartToggles(t *testing.T) {
	for _, svc := range serviceNames {
		t.Run(svc, func(t *testing.T) {
			f := facts(t)[svc]
			files := []string{"testdata/service-toggles.yaml", prefixedToggles(t, f.Prefix)}
			if svc == "ingest" {
				files = append(files, "testdata/ingest-toggles.yaml")
			}
			r := render(t, "./"+svc, files)
			ex := expect{
				secretName:        "svc-secret",
				ingressNamespaces: map[string][]string{"edge": {"ingress-nginx"}},
				metricsNamespaces: []string{"monitoring"},
				extraVars:         []string{"FEATURE_X", "WORKERS", "ALREADY", "API_TOKEN"},
			}
			ws := checkPlatform(t, r, ex)
			if n := len(Of[*autoscalingv2.HorizontalPodAutoscaler](r)); n != 0 {
				t.Errorf("%d autoscalers with autoscaling.enabled=false", n)
			}
			if n := len(Of[*monitoringv1.ServiceMonitor](r)); n != 1 {
				t.Errorf("%d ServiceMonitors with serviceMonitor.enabled=true, want 1", n)
			} else if m := Of[*monitoringv1.ServiceMonitor](r)[0]; m.Labels["release"] != "kube-prometheus-stack" {
				t.Errorf("ServiceMonitor labels %v lack serviceMonitor.labels", m.Labels)
			}
			wantPDB := 1
			if svc == "ingest" {
				wantPDB = 0 // one replica with Recreate: a budget would only block drains
			}
			if n := len(Of[*policyv1.PodDisruptionBudget](r)); n != wantPDB {
				t.Errorf("%d PodDisruptionBudgets, want %d", n, wantPDB)
			}
			for _, w := range ws {
				if svc != "ingest" && (w.d.Spec.Replicas == nil || *w.d.Spec.Replicas != 3) {
					t.Errorf("Deployment/%s: replicas %v, want replicaCount 3", w.d.Name, w.d.Spec.Replicas)
				}
				p := f.Prefix
				wantValues := map[string]string{
					p + "LOG_LEVEL":          "debug",
					p + "SHUTDOWN_TIMEOUT":   "40s",
					p + "OTLP_ENDPOINT":      "http://otel-collector.observability:4318",
					p + "TRACE_SAMPLE_RATIO": "0.25",
					p + "FEATURE_X":          "on",   // env, prefix added
					p + "WORKERS":            "4",    // env, a number
					p + "ALREADY":            "kept", // env given with its prefix
					p + "CHAINS":             "ethereum,bitcoin",
				}
				if f.Kafka {
					wantValues[p+"KAFKA_BROKERS"] = "k1:9092,k2:9092"
				}
				for name, want := range wantValues {
					if got := w.env[name]; got.Value != want {
						t.Errorf("Deployment/%s: %s=%q, want %q", w.d.Name, name, got.Value, want)
					}
				}
				if _, ok := w.env[p+"DROPPED"]; ok {
					t.Errorf("Deployment/%s: env set to null still rendered", w.d.Name)
				}
				if v := w.env[p+"API_TOKEN"]; v.Secret == nil || v.Secret.Name != "tokens" {
					t.Errorf("Deployment/%s: extraEnv %sAPI_TOKEN = %+v, want from Secret tokens", w.d.Name, p, v)
				}
				if !slices.ContainsFunc(w.c.EnvFrom, func(s corev1.EnvFromSource) bool { return s.SecretRef != nil && s.SecretRef.Name == "more-env" }) {
					t.Errorf("Deployment/%s: envFromSecrets more-env not loaded", w.d.Name)
				}
				if got := w.d.Spec.Template.Spec.TerminationGracePeriodSeconds; got == nil || *got != 50 {
					t.Errorf("Deployment/%s: terminationGracePeriodSeconds %v, want 50", w.d.Name, got)
				}
			}
			if svc == "ingest" {
				checkIngest(t, r, ws, map[string]string{"ethereum": "evm", "arbitrum_one": "evm", "sim": "simulate"})
				eth := findWorkload(t, ws, "ingest")
				if got := eth.env["INGEST_EVM_START_BLOCK"].Value; got != "19000000" {
					t.Errorf("Deployment/%s: INGEST_EVM_START_BLOCK %q, want the ingester's own 19000000", eth.d.Name, got)
				}
			}
		})
	}
}

// The umbrella with its default values: all eight services, one Secret, the Ingress to the edge.
func TestUmbrellaDefaults(t *testing.T) {
	r := render(t, "./chainintel", nil)
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	checkAllServices(t, r, ws)
	checkIngest(t, r, ws, map[string]string{"ethereum": "evm"})
	checkUpstreams(t, ws, r)
	checkIngress(t, r, "", nil)
	checkTiers(t, r, ws, "") // the built-in table
	if n := len(tiersConfigMaps(r)); n != 0 {
		t.Errorf("%d tier tables rendered without global.tiers", n)
	}
	if n := len(Of[*monitoringv1.ServiceMonitor](r)); n != 0 {
		t.Errorf("%d ServiceMonitors by default (their CRD may be missing), want 0", n)
	}
	// Global values reach every service.
	for _, w := range ws {
		if w.facts.Kafka {
			if got := w.env[w.facts.Prefix+"KAFKA_BROKERS"].Value; got != "kafka:9092" {
				t.Errorf("Deployment/%s: KAFKA_BROKERS %q, want kafka:9092", w.d.Name, got)
			}
			if got := w.env[w.facts.Prefix+"KAFKA_PARTITIONS"].Value; got != "8" {
				t.Errorf("Deployment/%s: KAFKA_PARTITIONS %q, want 8", w.d.Name, got)
			}
		}
		if _, ok := w.env[w.facts.Prefix+"CHAINS"]; ok {
			t.Errorf("Deployment/%s: CHAINS set though global.chains is empty (all chains)", w.d.Name)
		}
	}
}

// The umbrella with toggles: an existing Secret, no edge autoscaler, ServiceMonitors everywhere,
// two ingest chains, global values for every dependency, an ingress host with TLS.
func TestUmbrellaToggles(t *testing.T) {
	r := render(t, "./chainintel", []string{"testdata/umbrella-toggles.yaml"})
	ex := expect{
		secretName:        "prod-secrets",
		ingressNamespaces: map[string][]string{"edge": {"ingress-nginx"}},
		metricsNamespaces: []string{"monitoring"},
	}
	ws := checkPlatform(t, r, ex)
	checkAllServices(t, r, ws)
	checkIngest(t, r, ws, map[string]string{"ethereum": "evm", "arbitrum_one": "evm"})
	checkUpstreams(t, ws, r)
	checkIngress(t, r, "api.chainintel.example", []string{"api-tls"})

	if n := len(Of[*monitoringv1.ServiceMonitor](r)); n != 8 {
		t.Errorf("%d ServiceMonitors, want one per service (8)", n)
	}
	for _, h := range Of[*autoscalingv2.HorizontalPodAutoscaler](r) {
		if h.Spec.ScaleTargetRef.Name == "edge" {
			t.Errorf("edge autoscaled with edge.autoscaling.enabled=false")
		}
	}
	for _, w := range ws {
		p := w.facts.Prefix
		want := map[string]string{
			p + "OTLP_ENDPOINT": "http://otel-collector.observability:4318",
			p + "CHAINS":        "ethereum,arbitrum_one",
			p + "LOG_LEVEL":     "warn",
		}
		if w.facts.Kafka {
			want[p+"KAFKA_BROKERS"] = "kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092"
			want[p+"KAFKA_PARTITIONS"] = "6"
			want[p+"KAFKA_REPLICATION_FACTOR"] = "3"
		}
		if w.facts.Redis {
			want[p+"REDIS_URL"] = "redis://redis-master.data:6379/2"
		}
		if w.svc == "transfers" {
			want[p+"USER_LABELS_URL"] = "http://user-labels.chainintel.svc:8080"
		}
		if w.svc == "edge" {
			want[p+"LOG_LEVEL"] = "debug" // the service's own value wins over the global one
		}
		for name, v := range want {
			if got := w.env[name].Value; got != v {
				t.Errorf("Deployment/%s: %s=%q, want %q", w.d.Name, name, got, v)
			}
		}
		if !strings.HasPrefix(w.c.Image, "registry.example/chainintel/"+w.svc+":1.2.3") {
			t.Errorf("Deployment/%s: image %q, want registry.example/chainintel/%s:1.2.3", w.d.Name, w.c.Image, w.svc)
		}
		if w.c.ImagePullPolicy != corev1.PullAlways {
			t.Errorf("Deployment/%s: pull policy %s, want Always (global)", w.d.Name, w.c.ImagePullPolicy)
		}
	}
	edge := findWorkload(t, ws, "edge")
	if edge.d.Spec.Replicas == nil || *edge.d.Spec.Replicas != 3 {
		t.Errorf("edge replicas %v, want 3", edge.d.Spec.Replicas)
	}
	if n := len(Of[*policyv1.PodDisruptionBudget](r)); n != 2 {
		t.Errorf("%d PodDisruptionBudgets, want 2 (edge, stream-fanout)", n)
	}
}

// A service left out with enabled: false is not rendered, and nothing routes to it.
func TestUmbrellaDisabledService(t *testing.T) {
	r := render(t, "./chainintel", nil, "ingest.enabled=false", "stream-fanout.enabled=false")
	for _, w := range Of[*appsv1.Deployment](r) {
		if svc := w.Spec.Template.Labels[nameLabel]; svc == "ingest" || svc == "stream-fanout" {
			t.Errorf("Deployment/%s rendered though disabled", w.Name)
		}
	}
	if _, ok := r.Get("Job", "ingest-migrate"); ok {
		t.Error("ingest-migrate rendered though ingest is disabled")
	}
	ex := defaultExpect()
	ex.secretRendered = true
	checkPlatform(t, r, ex)
}

// The values skaffold deploys to kind (k8s/values-kind.yaml).
func TestUmbrellaKindValues(t *testing.T) {
	r := render(t, "./chainintel", []string{"../k8s/values-kind.yaml"})
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	if n := len(Of[*autoscalingv2.HorizontalPodAutoscaler](r)); n != 0 {
		t.Errorf("%d autoscalers on kind (no metrics-server)", n)
	}
	checkUpstreams(t, ws, r)
	checkIngress(t, r, "", nil)
	checkIngest(t, r, ws, map[string]string{"simulator": "simulate"})
	s, _ := r.Get("Secret", releaseName)
	if got := string(s.Obj.(*corev1.Secret).Data["internal-secret"]); got != "chainintel-dev-internal-secret" {
		t.Errorf("internal secret %q, want the fixed development one", got)
	}
}

// Bad values are refused with a message naming the problem, not rendered into a broken platform.
func TestChartsRefuseBadValues(t *testing.T) {
	cases := []struct {
		chart string
		sets  []string
		want  string
	}{
		{"./ingest", []string{"ingesters=null"}, "ingesters must list at least one"},
		{"./ingest", []string{"ingesters[0].name=ethereum", "ingesters[0].rpcURL=http://a", "ingesters[1].name=ethereum", "ingesters[1].rpcURL=http://b"}, `ingester "ethereum" is listed twice`},
		{"./ingest", []string{"ingesters[0].name=ethereum", "ingesters[0].rpcURL="}, `ingester "ethereum" (evm) needs rpcURL or rpcURLSecret`},
		{"./ingest", []string{"ingesters[0].rpcURL=http://a", "ingesters[0].name="}, "every entry of ingesters needs a name"},
		{"./ingest", []string{"ingesters[0].name=ethereum", "ingesters[0].mode=replay"}, `mode "replay"; want evm or simulate`},
		{"./chainintel", []string{"global.internalSecret=short"}, "global.internalSecret must be at least 16 characters"},
		{"./chainintel", []string{"global.databaseURL="}, "global.databaseURL is required"},
		{"./edge", []string{"autoscaling.maxReplicas=null"}, "autoscaling.maxReplicas is required"},
		{"./transfers", []string{"autoscaling.maxReplicas=12"}, "autoscaling.maxReplicas 12 exceeds the 8 topic partitions"},
		{"./chainintel", []string{"global.kafka.partitions=4", "balances.autoscaling.maxReplicas=6"}, "balances: autoscaling.maxReplicas 6 exceeds the 4 topic partitions"},
		{"./edge", []string{"autoscaling.minReplicas=5", "autoscaling.maxReplicas=3"}, "edge: autoscaling.minReplicas 5 exceeds maxReplicas 3"},
		{"./transfers", []string{"autoscaling.minReplicas=6", "autoscaling.maxReplicas=4"}, "transfers: autoscaling.minReplicas 6 exceeds maxReplicas 4"},
		{"./chainintel", []string{"global.kafka.partitions=4", "transfers.autoscaling.minReplicas=6"}, "transfers: autoscaling.minReplicas 6 exceeds maxReplicas 4, the topic partitions its consumers share"},
		{"./transfers", []string{"ports.http=8000", "ports.ops=8080"}, "transfers: ports.ops 8080 is the Service's http port"},
		{"./chainintel", []string{"global.tiersConfigMap=ops-tiers", "global.tiers[0].name=free"}, "set global.tiers or global.tiersConfigMap, not both"},
		{"./chainintel", []string{"global.tiers=free"}, "global.tiers must be a list of tiers"},
		{"./chainintel", []string{"global.tiers[0]=free"}, "global.tiers[0] must be a map"},
		{"./chainintel", tier("name=Gold"), `global.tiers[0]: name "Gold" must match`},
		{"./chainintel", tier("rate=0"), "global.tiers[0] (gold): rate must be positive"},
		{"./chainintel", tier("heavyRate=null"), "global.tiers[0] (gold): heavyRate is required"},
		{"./chainintel", tier("burst=1.5"), "global.tiers[0] (gold): burst must be a whole number"},
		{"./chainintel", tier("burst=ten"), `global.tiers[0] (gold): burst must be a whole number, not "ten"`},
		{"./chainintel", tier("streamHourly=-1"), "global.tiers[0] (gold): streamHourly must not be negative"},
		{"./chainintel", tier("overage=maybe"), `global.tiers[0] (gold): overage must be true or false, not "maybe"`},
		{"./chainintel", tier("stream_hourly=10"), `global.tiers[0]: unknown key "stream_hourly"`},
		{"./chainintel", append(tier(), "global.tiers[1].name=gold", "global.tiers[1].rate=1", "global.tiers[1].burst=1", "global.tiers[1].heavyRate=1"), `global.tiers[1]: tier "gold" is listed twice`},
		{"./edge", tier(), "edge installed on its own cannot render global.tiers"},
		{"./stream-fanout", tier(), "stream-fanout installed on its own cannot render global.tiers"},
		{"./chainintel", []string{"transfers.migrate.hookWeight=-10"}, "transfers: migrate.hookWeight -10 must be above -10, the hook weight of the Secret the umbrella chart creates (chainintel)"},
		{"./chainintel", []string{"edge.migrate.hookWeight=-11"}, "edge: migrate.hookWeight -11 must be above -10"},
		{"./edge", []string{"preStopSleepSeconds=-1"}, "preStopSleepSeconds (-1) and terminationGracePeriodSeconds (40) must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.chart+" "+strings.Join(c.sets, " "), func(t *testing.T) {
			msg := renderFails(t, c.chart, nil, c.sets...)
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %q", msg, c.want)
			}
		})
	}
}

// tier returns --set pairs of a valid tier "gold" as global.tiers[0], with the given fields of it
// replaced (key=value; value null removes the field).
func tier(fields ...string) []string {
	set := map[string]string{"name": "gold", "rate": "20", "burst": "40", "heavyRate": "1"}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		set[k] = v
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if set[k] != "null" {
			out = append(out, "global.tiers[0]."+k+"="+set[k])
		}
	}
	return out
}

// Every chart passes `helm lint --strict`, the umbrella also with the test values.
func TestHelmLint(t *testing.T) {
	charts := append([]string{"chainintel-lib", "chainintel"}, serviceNames...)
	for _, c := range charts {
		t.Run(c, func(t *testing.T) {
			if out, err := helm(t, "lint", "--strict", "./"+c); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
	for _, f := range []string{"testdata/umbrella-toggles.yaml", "../k8s/values-kind.yaml", tiersValues} {
		t.Run("chainintel "+f, func(t *testing.T) {
			if out, err := helm(t, "lint", "--strict", "./chainintel", "--values", f); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}

// checkAllServices: the umbrella renders each of the eight services with its Service and policy.
func checkAllServices(t *testing.T, r *Rendered, ws []workload) {
	t.Helper()
	seen := map[string]bool{}
	for _, w := range ws {
		seen[w.svc] = true
	}
	for _, svc := range serviceNames {
		if !seen[svc] {
			t.Errorf("service %s not rendered", svc)
		}
		if _, ok := r.Get("NetworkPolicy", svc); !ok {
			t.Errorf("no NetworkPolicy %s", svc)
		}
	}
	var jobs []string
	for _, j := range Of[*batchv1.Job](r) {
		jobs = append(jobs, strings.TrimSuffix(j.Name, "-migrate"))
	}
	sort.Strings(jobs)
	if want := migrators(facts(t)); !slices.Equal(jobs, want) {
		t.Errorf("migrate Jobs for %v, want the schema owners and Kafka users %v", jobs, want)
	}
	// stream-fanout owns no schema but its migrate creates the topics it reads.
	if len(jobs) != 8 || !slices.Contains(jobs, "stream-fanout") {
		t.Errorf("migrate Jobs %v: want eight, stream-fanout's included", jobs)
	}
}

// checkIngest: exactly one Deployment per ingester (name -> mode), one replica each with
// Recreate, never autoscaled, each configured for its own source.
func checkIngest(t *testing.T, r *Rendered, ws []workload, ingesters map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, w := range ws {
		if w.svc != "ingest" {
			continue
		}
		name := w.d.Spec.Template.Labels[ingesterLabel]
		mode := w.env["INGEST_MODE"].Value
		if _, dup := got[name]; dup {
			t.Errorf("two Deployments for ingester %q", name)
		}
		got[name] = mode
		if want := "ingest-" + strings.ReplaceAll(name, "_", "-"); w.d.Name != want {
			t.Errorf("Deployment/%s: want name %s", w.d.Name, want)
		}
		if w.d.Spec.Replicas == nil || *w.d.Spec.Replicas != 1 {
			t.Errorf("Deployment/%s: replicas %v, want exactly 1", w.d.Name, w.d.Spec.Replicas)
		}
		if w.d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("Deployment/%s: strategy %q, want Recreate (never two ingesters of a chain)", w.d.Name, w.d.Spec.Strategy.Type)
		}
		if w.d.Spec.Selector.MatchLabels[ingesterLabel] != name {
			t.Errorf("Deployment/%s: selector %v does not tell the ingesters apart", w.d.Name, w.d.Spec.Selector.MatchLabels)
		}
		if mode == "evm" {
			if v := w.env["INGEST_EVM_CHAIN"]; v.Value != name {
				t.Errorf("Deployment/%s: INGEST_EVM_CHAIN=%q, want %q", w.d.Name, v.Value, name)
			}
			if v := w.env["INGEST_EVM_RPC_URL"]; v.Value == "" && v.Secret == nil {
				t.Errorf("Deployment/%s: no INGEST_EVM_RPC_URL", w.d.Name)
			}
		}
		if _, ok := r.Get("HorizontalPodAutoscaler", w.d.Name); ok {
			t.Errorf("Deployment/%s is autoscaled", w.d.Name)
		}
	}
	if len(got) != len(ingesters) {
		t.Errorf("ingest Deployments %v, want %v", got, ingesters)
	}
	for name, mode := range ingesters {
		if got[name] != mode {
			t.Errorf("ingester %s: mode %q, want %q (all: %v)", name, got[name], mode, got)
		}
	}
	for _, h := range Of[*autoscalingv2.HorizontalPodAutoscaler](r) {
		if strings.HasPrefix(h.Spec.ScaleTargetRef.Name, "ingest") {
			t.Errorf("HorizontalPodAutoscaler/%s targets ingest", h.Name)
		}
	}
}

// checkUpstreams: the edge has every upstream variable its config reads, each an http URL of
// the Service of the service it names (checked against the rendered Services when r is given).
func checkUpstreams(t *testing.T, ws []workload, r *Rendered) {
	t.Helper()
	edge := findWorkload(t, ws, "edge")
	for name, svc := range edge.facts.Upstreams {
		raw := edge.env[name].Value
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || u.Host != svc+":8080" {
			t.Errorf("edge %s=%q, want http://%s:8080", name, raw, svc)
			continue
		}
		if r == nil {
			continue
		}
		o, ok := r.Get("Service", svc)
		if !ok {
			t.Errorf("edge %s names Service %s, which is not rendered", name, svc)
			continue
		}
		s := o.Obj.(*corev1.Service)
		if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 8080 && p.Name == "http" }) {
			t.Errorf("Service/%s has no http port 8080 for edge's %s", svc, name)
		}
		target := findWorkload(t, ws, svc)
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(target.d.Spec.Template.Labels)) {
			t.Errorf("Service/%s does not select %s's pods", svc, svc)
		}
	}
}

// checkIngress: the Ingress objects route only to the edge's http port, never /internal, with
// the nginx WebSocket settings on /ws/transfers.
func checkIngress(t *testing.T, r *Rendered, host string, tlsSecrets []string) {
	t.Helper()
	ings := Of[*networkingv1.Ingress](r)
	if len(ings) == 0 {
		t.Fatal("no Ingress rendered")
	}
	paths := map[string]*networkingv1.Ingress{}
	for _, ing := range ings {
		where := "Ingress/" + ing.Name
		if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" {
			t.Errorf("%s: class %v, want nginx", where, ing.Spec.IngressClassName)
		}
		if ing.Spec.DefaultBackend != nil {
			t.Errorf("%s: has a default backend", where)
		}
		var tls []string
		for _, e := range ing.Spec.TLS {
			tls = append(tls, e.SecretName)
		}
		if !slices.Equal(tls, tlsSecrets) {
			t.Errorf("%s: TLS secrets %v, want %v", where, tls, tlsSecrets)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.Host != host {
				t.Errorf("%s: host %q, want %q", where, rule.Host, host)
			}
			if rule.HTTP == nil {
				t.Errorf("%s: rule without http paths", where)
				continue
			}
			for _, p := range rule.HTTP.Paths {
				b := p.Backend.Service
				if b == nil || b.Name != "edge" || (b.Port.Name != "http" && b.Port.Number != 8080) {
					t.Errorf("%s: path %s routes to %+v, want the edge Service's http port", where, p.Path, p.Backend)
				}
				if strings.HasPrefix(p.Path, "/internal") {
					t.Errorf("%s: exposes %s", where, p.Path)
				}
				paths[p.Path] = ing
			}
		}
	}
	if _, ok := paths["/"]; !ok {
		t.Error("no Ingress path for the API (/)")
	}
	ws, ok := paths["/ws/transfers"]
	if !ok {
		t.Fatal("no Ingress path for /ws/transfers")
	}
	if ws.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] != "3600" || ws.Annotations["nginx.ingress.kubernetes.io/proxy-send-timeout"] != "3600" {
		t.Errorf("Ingress/%s: WebSocket timeouts %v, want an hour", ws.Name, ws.Annotations)
	}
}

// prefixedToggles writes the toggles whose names carry the service's prefix: an env entry given
// with its prefix, and an extraEnv variable from a Secret.
func prefixedToggles(t *testing.T, prefix string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prefixed.yaml")
	values := fmt.Sprintf(`env:
  %[1]sALREADY: kept
extraEnv:
  - name: %[1]sAPI_TOKEN
    valueFrom:
      secretKeyRef:
        name: tokens
        key: api-token
`, prefix)
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func findWorkload(t *testing.T, ws []workload, svc string) workload {
	t.Helper()
	for _, w := range ws {
		if w.svc == svc {
			return w
		}
	}
	t.Fatalf("no Deployment of %s rendered", svc)
	return workload{}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
