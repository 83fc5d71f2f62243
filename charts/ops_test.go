package charts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// webSocketRoutes reads the edge's route table from its source (the package is internal to the
// edge module, so it cannot be imported here) and returns the pattern of every Route literal
// with WebSocket: true.
func webSocketRoutes(t *testing.T) []string {
	t.Helper()
	const src = "../services/edge/internal/routes/table.go"
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var pattern string
		ws := false
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			switch {
			case key == nil:
			case key.Name == "Pattern":
				if b, ok := kv.Value.(*ast.BasicLit); ok {
					pattern, _ = strconv.Unquote(b.Value)
				}
			case key.Name == "WebSocket":
				id, ok := kv.Value.(*ast.Ident)
				ws = ok && id.Name == "true"
			}
		}
		if ws {
			if pattern == "" {
				t.Errorf("%s: a WebSocket route whose Pattern is not a string literal", src)
			}
			patterns = append(patterns, pattern)
		}
		return true
	})
	if len(patterns) == 0 {
		t.Fatalf("%s: no WebSocket route found", src)
	}
	return patterns
}

// Every WebSocket route of the edge rides the stream Ingress (its long timeouts, no buffering),
// matched exactly, and the stream Ingress routes nothing else.
func TestStreamIngressHasEveryWebSocketRoute(t *testing.T) {
	want := webSocketRoutes(t)
	r := render(t, "./chainintel", nil, "ingress.enabled=true", "ingress.className=nginx", "ingress.streamTimeoutSeconds=7200")
	var stream *networkingv1.Ingress
	for _, ing := range Of[*networkingv1.Ingress](r) {
		if strings.HasSuffix(ing.Name, "-stream") {
			stream = ing
		}
	}
	if stream == nil {
		t.Fatal("no stream Ingress rendered")
	}
	var got []string
	for _, rule := range stream.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			if p.PathType == nil || *p.PathType != networkingv1.PathTypeExact {
				t.Errorf("Ingress/%s: path %s is not Exact", stream.Name, p.Path)
			}
			got = append(got, p.Path)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Ingress/%s paths %v, want the edge's WebSocket routes %v", stream.Name, got, want)
	}
	for _, a := range []string{"proxy-read-timeout", "proxy-send-timeout"} {
		if v := stream.Annotations["nginx.ingress.kubernetes.io/"+a]; v != "7200" {
			t.Errorf("Ingress/%s: %s %q, want ingress.streamTimeoutSeconds (7200)", stream.Name, a, v)
		}
	}
}

// A partition-bound consumer is refused more fixed replicas than partitions, as it is a larger
// maxReplicas; at the partition count it renders.
func TestReplicaCountBoundByPartitions(t *testing.T) {
	for _, svc := range []string{"transfers", "intelligence", "balances", "token-analytics"} {
		msg := renderFails(t, "./chainintel", nil, svc+".autoscaling.enabled=false", svc+".replicaCount=12")
		if want := svc + ": replicaCount 12 exceeds the 8 topic partitions"; !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	msg := renderFails(t, "./transfers", nil, "autoscaling.enabled=false", "replicaCount=5", "kafka.partitions=4")
	if want := "transfers: replicaCount 5 exceeds the 4 topic partitions"; !strings.Contains(msg, want) {
		t.Errorf("error %q does not say %q", msg, want)
	}
	r := render(t, "./chainintel", nil, "transfers.autoscaling.enabled=false", "transfers.replicaCount=8")
	for _, d := range Of[*appsv1.Deployment](r) {
		if d.Name == "transfers" && (d.Spec.Replicas == nil || *d.Spec.Replicas != 8) {
			t.Errorf("Deployment/transfers replicas %v, want 8", d.Spec.Replicas)
		}
	}
	// stream-fanout reads the whole topic in every replica: not bound.
	render(t, "./chainintel", nil, "stream-fanout.autoscaling.enabled=false", "stream-fanout.replicaCount=12")
}

// No PodDisruptionBudget blocks a drain: the edge's with one replica allows one eviction, and a
// minAvailable at or above the fewest replicas is refused.
func TestPDBsAllowDrains(t *testing.T) {
	for _, sets := range [][]string{
		{"edge.autoscaling.enabled=false", "edge.replicaCount=1"},
		{"edge.autoscaling.minReplicas=1"},
	} {
		r := render(t, "./chainintel", nil, sets...)
		ex := defaultExpect()
		ex.secretRendered = true
		checkPlatform(t, r, ex) // checkPDBs among its checks
		var edge *policyv1.PodDisruptionBudget
		for _, p := range Of[*policyv1.PodDisruptionBudget](r) {
			if p.Name == "edge" {
				edge = p
			}
		}
		if edge == nil || edge.Spec.MinAvailable != nil || edge.Spec.MaxUnavailable == nil || edge.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("%v: edge PDB %+v, want maxUnavailable 1", sets, edge)
		}
	}
	cases := []struct {
		chart string
		sets  []string
		want  string
	}{
		{"./chainintel", []string{"edge.autoscaling.enabled=false", "edge.replicaCount=1", "edge.pdb.minAvailable=1"}, "edge: pdb.minAvailable 1 with as few as 1 replicas would block every drain"},
		{"./chainintel", []string{"edge.pdb.minAvailable=2"}, "edge: pdb.minAvailable 2 with as few as 2 replicas"},
		{"./transfers", []string{"pdb.enabled=true", "pdb.minAvailable=1"}, "transfers: pdb.minAvailable 1 with as few as 1 replicas"},
		{"./stream-fanout", []string{"pdb.enabled=true", "autoscaling.enabled=false", "replicaCount=3", "pdb.minAvailable=3"}, "stream-fanout: pdb.minAvailable 3 with as few as 3 replicas"},
	}
	for _, c := range cases {
		msg := renderFails(t, c.chart, nil, c.sets...)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: error %q does not say %q", c.chart, c.sets, msg, c.want)
		}
	}
	// Below the fewest replicas, minAvailable renders.
	r := render(t, "./chainintel", nil, "edge.pdb.minAvailable=1")
	for _, p := range Of[*policyv1.PodDisruptionBudget](r) {
		if p.Name == "edge" && (p.Spec.MinAvailable == nil || p.Spec.MinAvailable.IntValue() != 1) {
			t.Errorf("edge PDB %+v, want minAvailable 1", p.Spec)
		}
	}
}
