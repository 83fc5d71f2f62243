package charts

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// admits reports whether pol lets a pod of this namespace labelled podLabels connect to the
// named port of the pods it covers.
func admits(pol *networkingv1.NetworkPolicy, podLabels map[string]string, port string) bool {
	for _, rule := range pol.Spec.Ingress {
		portOK := false
		for _, p := range rule.Ports {
			if p.Port != nil && p.Port.String() == port {
				portOK = true
			}
		}
		if !portOK {
			continue
		}
		for _, peer := range rule.From {
			if peer.NamespaceSelector != nil || peer.PodSelector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
			if err == nil && sel.Matches(labels.Set(podLabels)) {
				return true
			}
		}
	}
	return false
}

// The services installed from their own charts as separate releases (docs/kubernetes.md) still
// reach each other's HTTP ports: the edge its upstreams, intelligence user-labels, and so on.
// Another release's pods do not reach the ops port, and a pod that is not chainintel's reaches
// neither.
func TestSeparateReleasesReachEachOther(t *testing.T) {
	pods := map[string]map[string]string{}
	pols := map[string]*networkingv1.NetworkPolicy{}
	for _, svc := range []string{"edge", "transfers", "intelligence", "user-labels"} {
		r := renderAs(t, svc+"-release", "./"+svc, nil)
		ds := Of[*appsv1.Deployment](r)
		ps := Of[*networkingv1.NetworkPolicy](r)
		if len(ds) != 1 || len(ps) != 1 {
			t.Fatalf("%s: %d Deployments and %d NetworkPolicies, want 1 each", svc, len(ds), len(ps))
		}
		pods[svc] = ds[0].Spec.Template.Labels
		pols[svc] = ps[0]
	}
	for _, c := range []struct{ from, to string }{
		{"edge", "transfers"}, {"edge", "intelligence"}, {"edge", "user-labels"},
		{"intelligence", "user-labels"}, {"transfers", "intelligence"}, {"intelligence", "transfers"},
	} {
		if !admits(pols[c.to], pods[c.from], "http") {
			t.Errorf("NetworkPolicy/%s refuses %s's pods (another release) on the http port", c.to, c.from)
		}
		if admits(pols[c.to], pods[c.from], "ops") {
			t.Errorf("NetworkPolicy/%s admits %s's pods (another release) on the ops port", c.to, c.from)
		}
	}
	stranger := map[string]string{"app.kubernetes.io/name": "debug", "app.kubernetes.io/instance": "other"}
	for svc, pol := range pols {
		if admits(pol, stranger, "http") || admits(pol, stranger, "ops") {
			t.Errorf("NetworkPolicy/%s admits a pod that is not chainintel's", svc)
		}
		// The release's own pods keep the ops port.
		if !admits(pol, map[string]string{instanceLabel: svc + "-release"}, "ops") {
			t.Errorf("NetworkPolicy/%s refuses its own release on the ops port", svc)
		}
	}
}

// global.networkPolicy.metricsNamespaces opens every service's ops port to Prometheus when the
// service's own list is empty; a service's own list wins.
func TestGlobalMetricsNamespaces(t *testing.T) {
	r := render(t, "./chainintel", nil, "global.networkPolicy.metricsNamespaces={monitoring}", "edge.networkPolicy.metricsNamespaces={prom-edge}")
	ex := defaultExpect()
	ex.secretRendered = true
	ex.metricsNamespaces = []string{"monitoring", "prom-edge"}
	checkPlatform(t, r, ex)
	pols := Of[*networkingv1.NetworkPolicy](r)
	if len(pols) != 8 {
		t.Fatalf("%d NetworkPolicies, want 8", len(pols))
	}
	for _, p := range pols {
		want := "monitoring"
		if p.Name == "edge" {
			want = "prom-edge"
		}
		var got []string
		for _, rule := range p.Spec.Ingress {
			for _, peer := range rule.From {
				if peer.NamespaceSelector != nil && len(rule.Ports) == 1 && rule.Ports[0].Port.String() == "ops" {
					got = append(got, peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
				}
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("NetworkPolicy/%s: ops port open to namespaces %v, want [%s]", p.Name, got, want)
		}
	}
}

// podAnnotations maps each Deployment's name to its pod annotation key.
func podAnnotations(r *Rendered, key string) map[string]string {
	out := map[string]string{}
	for _, d := range Of[*appsv1.Deployment](r) {
		out[d.Name] = d.Spec.Template.Annotations[key]
	}
	return out
}

// A change of the Secret's values (internal secret, database URL, an existing Secret's name)
// changes checksum/secret and so rolls the pods; the random internal secret the chart makes
// when none is given does not (two renders agree), or every sync would roll everything.
func TestSecretChecksumRollsPods(t *testing.T) {
	base := podAnnotations(render(t, "./chainintel", nil), "checksum/secret")
	again := podAnnotations(render(t, "./chainintel", nil), "checksum/secret")
	for name, sum := range base {
		if len(sum) != 64 {
			t.Errorf("Deployment/%s: checksum/secret %q, want a sha256", name, sum)
		}
		if again[name] != sum {
			t.Errorf("Deployment/%s: checksum/secret differs between two renders of the same values", name)
		}
	}
	for _, set := range []string{
		"global.internalSecret=0123456789abcdef-rotated",
		"global.databaseURL=postgres://other@pg:5432/chainintel",
		"global.existingSecret=prod-secrets",
	} {
		changed := podAnnotations(render(t, "./chainintel", nil, set), "checksum/secret")
		for name, sum := range base {
			if changed[name] == sum {
				t.Errorf("Deployment/%s: checksum/secret unchanged with %s", name, set)
			}
		}
	}
}

// global.redisURLSecret keeps the Redis URL (its password) out of the ConfigMaps and the migrate
// Job: the edge and stream-fanout read it from the Secret, in the Deployment and the Job alike.
func TestRedisURLSecret(t *testing.T) {
	r := render(t, "./chainintel", nil, "global.redisURLSecret.name=redis-auth", "global.redisURLSecret.key=url")
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	for _, cm := range Of[*corev1.ConfigMap](r) {
		for k, v := range cm.Data {
			if strings.HasSuffix(k, "REDIS_URL") || strings.Contains(v, "redis://") {
				t.Errorf("ConfigMap/%s: %s holds the Redis URL with global.redisURLSecret set", cm.Name, k)
			}
		}
	}
	seen := 0
	for _, w := range ws {
		v, ok := w.env[w.facts.Prefix+"REDIS_URL"]
		if !w.facts.Redis {
			continue
		}
		seen++
		if !ok || v.Secret == nil || v.Secret.Name != "redis-auth" || v.Secret.Key != "url" {
			t.Errorf("Deployment/%s: %sREDIS_URL = %+v, want from Secret redis-auth key url", w.d.Name, w.facts.Prefix, v)
		}
	}
	if seen != 2 {
		t.Errorf("%d Deployments use Redis, want 2 (edge, stream-fanout)", seen)
	}
	for _, j := range Of[*batchv1.Job](r) {
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			if strings.HasSuffix(e.Name, "REDIS_URL") && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "redis-auth") {
				t.Errorf("Job/%s: %s = %q inline, want from Secret redis-auth", j.Name, e.Name, e.Value)
			}
		}
	}
	// A service's own redis.urlSecret wins over the global one.
	r = render(t, "./stream-fanout", nil, "global.redisURLSecret.name=redis-auth", "global.redisURLSecret.key=url", "redis.urlSecret.name=stream-redis", "redis.urlSecret.key=u")
	d := Of[*appsv1.Deployment](r)[0]
	env, _, err := r.Env(d.Spec.Template.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	if v := env["STREAM_REDIS_URL"]; v.Secret == nil || v.Secret.Name != "stream-redis" || v.Secret.Key != "u" {
		t.Errorf("stream-fanout: STREAM_REDIS_URL = %+v, want from Secret stream-redis key u", v)
	}
	msg := renderFails(t, "./edge", nil, "global.redisURLSecret.name=redis-auth")
	if !strings.Contains(msg, "needs a key") {
		t.Errorf("redisURLSecret without a key: error %q, want it to say it needs a key", msg)
	}
}
