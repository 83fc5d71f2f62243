package charts

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// migrate.databaseURLSecret gives the migrate Job its own database URL (a direct or session-mode
// connection behind a transaction-mode pooler); the Deployment and the internal secret keep the
// service's Secret, and the other services' Jobs are unchanged.
func TestMigrateDatabaseURLSecret(t *testing.T) {
	r := render(t, "./chainintel", nil, "intelligence.migrate.databaseURLSecret.name=pg-session",
		"intelligence.migrate.databaseURLSecret.key=url")
	job := jobEnv(t, r, "intelligence-migrate")
	if v := job["INTEL_DATABASE_URL"].Secret; v == nil || v.Name != "pg-session" || v.Key != "url" {
		t.Errorf("Job/intelligence-migrate: INTEL_DATABASE_URL from %+v, want pg-session/url", v)
	}
	if v := job["INTEL_INTERNAL_SECRET"].Secret; v == nil || v.Name != releaseName {
		t.Errorf("Job/intelligence-migrate: INTEL_INTERNAL_SECRET from %+v, want the release's Secret", v)
	}
	if v := deploymentEnv(t, r, "intelligence")["INTEL_DATABASE_URL"].Secret; v == nil || v.Name != releaseName || v.Key != "database-url" {
		t.Errorf("Deployment/intelligence: INTEL_DATABASE_URL from %+v, want the release's Secret", v)
	}
	if v := jobEnv(t, r, "transfers-migrate")["TRANSFERS_DATABASE_URL"].Secret; v == nil || v.Name != releaseName {
		t.Errorf("Job/transfers-migrate: TRANSFERS_DATABASE_URL from %+v, want the release's Secret", v)
	}
	msg := renderFails(t, "./chainintel", nil, "intelligence.migrate.databaseURLSecret.name=pg-session",
		"intelligence.migrate.databaseURLSecret.key=null")
	if !strings.Contains(msg, "migrate.databaseURLSecret needs a key") {
		t.Errorf("a databaseURLSecret without key: error %q, want it to say the key is missing", msg)
	}
}

// A migrate Job resolves every name as its Deployment does: the same settings loaded with envFrom
// from a ConfigMap (the Job's own, equal to the service's), then envFromSecrets in the same
// order, then the same env names. So a key of an envFromSecrets Secret that the chart also sets
// (EDGE_REDIS_URL, say) wins over the chart's value in both, and loses to the same container env.
func TestMigrateJobEnvPrecedenceMatchesDeployment(t *testing.T) {
	r := render(t, "./chainintel", nil, "global.envFromSecrets={shared-extra}", "edge.envFromSecrets={edge-extra}")
	checked := 0
	for _, d := range Of[*appsv1.Deployment](r) {
		svc := d.Spec.Template.Labels[nameLabel]
		if svc == "ingest" && d.Labels[ingesterLabel] != "ethereum" {
			continue // the Job has the first ingester's settings
		}
		o, ok := r.Get("Job", svc+"-migrate")
		if !ok {
			continue
		}
		checked++
		j := o.Obj.(*batchv1.Job)
		dc, jc := d.Spec.Template.Spec.Containers[0], j.Spec.Template.Spec.Containers[0]
		where := "Job/" + j.Name
		if len(jc.EnvFrom) == 0 || jc.EnvFrom[0].ConfigMapRef == nil || len(dc.EnvFrom) == 0 || dc.EnvFrom[0].ConfigMapRef == nil {
			t.Errorf("%s: envFrom %+v, Deployment %+v: want a ConfigMap first in both", where, jc.EnvFrom, dc.EnvFrom)
			continue
		}
		if jd, dd := configMapData(t, r, jc.EnvFrom[0].ConfigMapRef.Name), configMapData(t, r, dc.EnvFrom[0].ConfigMapRef.Name); !maps.Equal(jd, dd) {
			t.Errorf("%s: its ConfigMap %v differs from the Deployment's %v", where, jd, dd)
		}
		if js, ds := secretRefs(jc.EnvFrom[1:]), secretRefs(dc.EnvFrom[1:]); !slices.Equal(js, ds) || len(js) == 0 {
			t.Errorf("%s: envFrom Secrets %v, the Deployment's %v", where, js, ds)
		}
		var jn, dn []string
		for _, e := range jc.Env {
			jn = append(jn, e.Name)
		}
		for _, e := range dc.Env {
			if !strings.HasSuffix(e.Name, "TIERS_FILE") { // a file only the Deployment mounts
				dn = append(dn, e.Name)
			}
		}
		for _, n := range jn {
			if _, ok := configMapData(t, r, jc.EnvFrom[0].ConfigMapRef.Name)[n]; ok {
				t.Errorf("%s: sets %s in env, where it would win over envFromSecrets (the Deployment loads it from its ConfigMap)", where, n)
			}
		}
		if !slices.Equal(jn, dn) {
			t.Errorf("%s: env names %v, the Deployment's %v", where, jn, dn)
		}
	}
	if want := len(migrators(facts(t))); checked != want {
		t.Errorf("compared %d migrate Jobs with their Deployments, want %d", checked, want)
	}
}

func configMapData(t *testing.T, r *Rendered, name string) map[string]string {
	t.Helper()
	cm, err := r.configMap(name)
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

func secretRefs(srcs []corev1.EnvFromSource) []string {
	var out []string
	for _, s := range srcs {
		if s.SecretRef != nil {
			out = append(out, s.SecretRef.Name)
		}
	}
	return out
}
