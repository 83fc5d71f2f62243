package charts

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// peerURLDefault finds a service's default in-cluster URL of a peer in its config, e.g.
// intelligence's TRANSFERS_URL envDefault:"http://transfers:8080".
var peerURLDefault = regexp.MustCompile(`env:"([A-Z_]+_URL)" envDefault:"(http://[a-z-]+:[0-9]+)"`)

// A service whose container listens on another port (transfers.ports.http=8081) is still
// reached by every in-cluster URL of its peers: the edge's upstream and the peers' *_URL
// defaults (intelligence's TRANSFERS_URL, ...) name the Service's port, which forwards to the
// container's. Before, the Service moved to 8081 and those URLs, fixed at :8080, failed.
func TestHTTPPortOverrideKeepsPeerURLs(t *testing.T) {
	overrides := map[string]int32{"transfers": 8081, "user-labels": 8082}
	r := render(t, "./chainintel", nil, "transfers.ports.http=8081", "user-labels.ports.http=8082")
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	checkUpstreams(t, ws, r)

	// reaches reports whether host:port is a Service port forwarding to the http container
	// port of the host's pods, naming what is wrong otherwise.
	reaches := func(rawURL string) string {
		u, err := url.Parse(rawURL)
		if err != nil {
			return err.Error()
		}
		port, _ := strconv.Atoi(u.Port())
		o, ok := r.Get("Service", u.Hostname())
		if !ok {
			return "no Service " + u.Hostname()
		}
		w := findWorkload(t, ws, u.Hostname())
		named := map[string]int32{}
		for _, p := range w.c.Ports {
			named[p.Name] = p.ContainerPort
		}
		want := int32(8080)
		if n, ok := overrides[u.Hostname()]; ok {
			want = n
		}
		if named["http"] != want || w.env[w.facts.Prefix+"HTTP_ADDR"].Value != ":"+strconv.Itoa(int(want)) {
			return "the container does not listen on ports.http " + strconv.Itoa(int(want))
		}
		for _, p := range o.Obj.(*corev1.Service).Spec.Ports {
			if p.Port == int32(port) {
				if portNumber(p.TargetPort, named) != want {
					return "Service port " + u.Port() + " forwards to " + p.TargetPort.String() + ", not the http container port"
				}
				return ""
			}
		}
		return "Service " + u.Hostname() + " has no port " + u.Port()
	}

	edge := findWorkload(t, ws, "edge")
	for _, name := range []string{"EDGE_UPSTREAM_TRANSFERS", "EDGE_UPSTREAM_USER_LABELS"} {
		if why := reaches(edge.env[name].Value); why != "" {
			t.Errorf("edge %s=%q: %s", name, edge.env[name].Value, why)
		}
	}
	files, err := filepath.Glob("../services/*/internal/config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		svc := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f))))
		for _, m := range peerURLDefault.FindAllStringSubmatch(string(b), -1) {
			found[svc+" "+m[1]] = true
			if why := reaches(m[2]); why != "" {
				t.Errorf("%s's %s default %s: %s", svc, m[1], m[2], why)
			}
		}
	}
	// ingest's: evm ingesters ask token-analytics for the prices the broker no longer holds.
	for _, want := range []string{"intelligence TRANSFERS_URL", "transfers USER_LABELS_URL", "ingest TOKEN_ANALYTICS_URL"} {
		if !found[want] {
			t.Errorf("no default of %s found in the services' configs (found %v)", want, found)
		}
	}
}
