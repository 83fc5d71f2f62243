package charts

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// preStopSleepSeconds and terminationGracePeriodSeconds take 0 (no preStop hook, no grace) as
// a value, null as the default (5 and 40), in a service chart and through the umbrella, for
// ingest's per-ingester Deployments too.
func TestStoppingSettingsTakeZero(t *testing.T) {
	type stop struct {
		preStop int64 // -1: no preStop hook
		grace   int64
	}
	read := func(t *testing.T, r *Rendered, name string) stop {
		t.Helper()
		for _, d := range Of[*appsv1.Deployment](r) {
			if d.Name != name {
				continue
			}
			s := stop{preStop: -1, grace: -1}
			if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
				s.grace = *g
			}
			c := d.Spec.Template.Spec.Containers[0]
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				s.preStop = c.Lifecycle.PreStop.Sleep.Seconds
			}
			return s
		}
		t.Fatalf("no Deployment/%s", name)
		return stop{}
	}
	cases := []struct {
		chart, deployment string
		sets              []string
		want              stop
	}{
		{"./edge", "edge", nil, stop{5, 40}},
		{"./edge", "edge", []string{"preStopSleepSeconds=0", "terminationGracePeriodSeconds=0"}, stop{-1, 0}},
		{"./edge", "edge", []string{"preStopSleepSeconds=null", "terminationGracePeriodSeconds=null"}, stop{5, 40}},
		{"./edge", "edge", []string{"preStopSleepSeconds=0", "terminationGracePeriodSeconds=30"}, stop{-1, 30}},
		{"./chainintel", "transfers", []string{"transfers.preStopSleepSeconds=0", "transfers.terminationGracePeriodSeconds=0"}, stop{-1, 0}},
		{"./ingest", "ingest-ethereum", []string{"preStopSleepSeconds=0", "terminationGracePeriodSeconds=0"}, stop{-1, 0}},
	}
	for _, c := range cases {
		r := render(t, c.chart, nil, c.sets...)
		if got := read(t, r, c.deployment); got != c.want {
			t.Errorf("%s %v: Deployment/%s preStop sleep %d, grace %d; want %d, %d (preStop -1: none)",
				c.chart, c.sets, c.deployment, got.preStop, got.grace, c.want.preStop, c.want.grace)
		}
	}
}
