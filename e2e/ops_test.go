package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Every deployable has an ops port with probes, Prometheus metrics and pprof, and its internal
// HTTP port is separate from the public edge.
func TestEveryServiceHasAnOpsPort(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("ops ports are checked on the local stack only")
	}
	for name, ep := range p.Stack.Services {
		for path, want := range map[string]string{
			"/livez": "ok", "/readyz": "ok", "/startupz": "ok",
			"/metrics": "go_goroutines", "/debug/pprof/": "goroutine",
		} {
			resp, err := http.Get(ep.Ops + path)
			if err != nil {
				t.Fatalf("%s %s: %v", name, path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
				t.Errorf("%s ops %s: %d, body lacks %q", name, path, resp.StatusCode, want)
			}
		}
	}
}
