package charts

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/chainintel/chainintel/services/edge/tiers"
)

const (
	tiersValues = "testdata/umbrella-tiers.yaml"
	tiersKey    = "tiers.yaml"
	tiersAnno   = "checksum/tiers"
)

// A custom tier table is rendered once, mounted into both services that enforce it, parses with
// the services' own parser into the table the values gave, and rolls both when it changes.
func TestUmbrellaTiers(t *testing.T) {
	r := render(t, "./chainintel", []string{tiersValues})
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	sums := checkTiers(t, r, ws, releaseName+"-tiers")
	if len(sums) != 2 || sums["edge"] == "" || sums["edge"] != sums["stream-fanout"] {
		t.Errorf("%s annotations %v, want the same checksum on edge and stream-fanout", tiersAnno, sums)
	}
	if n := len(tiersConfigMaps(r)); n != 1 {
		t.Errorf("%d ConfigMaps hold %s, want the table rendered once", n, tiersKey)
	}

	// The rendered file, loaded by services/edge/tiers, is the table of the values.
	o, ok := r.Get("ConfigMap", releaseName+"-tiers")
	if !ok {
		t.Fatalf("ConfigMap %s-tiers not rendered", releaseName)
	}
	file := filepath.Join(t.TempDir(), tiersKey)
	if err := os.WriteFile(file, []byte(o.Obj.(*corev1.ConfigMap).Data[tiersKey]), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := tiers.Load(file)
	if err != nil {
		t.Fatalf("the rendered table does not load: %v", err)
	}
	want := valuesTiers(t, tiersValues)
	if names := got.Names(); len(names) != len(want) {
		t.Errorf("rendered tiers %v, want %d", names, len(want))
	}
	for _, w := range want {
		if g, ok := got.Get(w.Name); !ok || g != w {
			t.Errorf("tier %s rendered as %+v, want %+v", w.Name, g, w)
		}
	}

	// A change of the table changes both checksums, and nothing else of the configuration.
	raw, err := os.ReadFile(tiersValues)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "changed.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(string(raw), "rate: 40", "rate: 41", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := render(t, "./chainintel", []string{changed})
	sums2 := checkTiers(t, r2, checkPlatform(t, r2, ex), releaseName+"-tiers")
	for svc, sum := range sums2 {
		if sum == sums[svc] {
			t.Errorf("%s: %s unchanged when a tier changed; its pods would keep the old table", svc, tiersAnno)
		}
	}
	for _, w := range ws {
		o, ok := r2.Get("Deployment", w.d.Name)
		if !ok {
			t.Errorf("Deployment/%s not rendered with the changed table", w.d.Name)
			continue
		}
		if a, b := w.d.Spec.Template.Annotations["checksum/config"], o.Obj.(*appsv1.Deployment).Spec.Template.Annotations["checksum/config"]; a != b {
			t.Errorf("Deployment/%s: checksum/config changed with the tier table only", w.d.Name)
		}
	}
}

// An existing ConfigMap (global.tiersConfigMap) is mounted by both services, the umbrella
// renders none, and there is no checksum (the chart cannot see the table).
func TestUmbrellaTiersConfigMap(t *testing.T) {
	r := render(t, "./chainintel", nil, "global.tiersConfigMap=ops-tiers")
	ex := defaultExpect()
	ex.secretRendered = true
	sums := checkTiers(t, r, checkPlatform(t, r, ex), "ops-tiers")
	if len(sums) != 0 {
		t.Errorf("%s annotations %v for a ConfigMap the chart does not render", tiersAnno, sums)
	}
	if n := len(tiersConfigMaps(r)); n != 0 {
		t.Errorf("%d ConfigMaps hold %s though global.tiersConfigMap names an existing one", n, tiersKey)
	}
}

// A service chart installed on its own takes an existing ConfigMap too.
func TestServiceChartTiersConfigMap(t *testing.T) {
	for _, svc := range []string{"edge", "stream-fanout"} {
		t.Run(svc, func(t *testing.T) {
			r := render(t, "./"+svc, nil, "global.tiersConfigMap=ops-tiers")
			checkTiers(t, r, checkPlatform(t, r, defaultExpect()), "ops-tiers")
		})
	}
}

// The services that read <PREFIX>TIERS_FILE are the two that enforce the tier table.
func TestTiersReaders(t *testing.T) {
	var readers []string
	for _, svc := range serviceNames {
		f := facts(t)[svc]
		if f.Vars[f.Prefix+"TIERS_FILE"] {
			readers = append(readers, svc)
		}
	}
	if want := []string{"edge", "stream-fanout"}; !slices.Equal(readers, want) {
		t.Errorf("services reading TIERS_FILE %v, charts were built for %v (uses.tiers in their values)", readers, want)
	}
}

// checkTiers: every service that reads <PREFIX>TIERS_FILE mounts ConfigMap cm read-only, with
// the variable naming the file of its key tiers.yaml; no other service mounts a table or sets
// the variable, and with cm "" none does. It returns the checksum/tiers annotation by service.
func checkTiers(t *testing.T, r *Rendered, ws []workload, cm string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, w := range ws {
		where := "Deployment/" + w.d.Name
		v, set := w.env[w.facts.Prefix+"TIERS_FILE"]
		mounted := tiersMounts(w)
		if sum, ok := w.d.Spec.Template.Annotations[tiersAnno]; ok {
			sums[w.svc] = sum
		}
		if cm == "" || !w.facts.Vars[w.facts.Prefix+"TIERS_FILE"] {
			if set || len(mounted) > 0 {
				t.Errorf("%s: %sTIERS_FILE=%q, tier mounts %v; want neither", where, w.facts.Prefix, v.Value, mounted)
			}
			continue
		}
		file, ok := mounted[cm]
		switch {
		case !set:
			t.Errorf("%s: no %sTIERS_FILE", where, w.facts.Prefix)
		case !ok:
			t.Errorf("%s: ConfigMap %s not mounted (mounts %v)", where, cm, mounted)
		case v.Value != file:
			t.Errorf("%s: %sTIERS_FILE=%q, but ConfigMap %s's %s is mounted at %s", where, w.facts.Prefix, v.Value, cm, tiersKey, file)
		}
		if len(mounted) != 1 {
			t.Errorf("%s: tier tables mounted %v, want only %s", where, mounted, cm)
		}
	}
	return sums
}

// tiersMounts maps each ConfigMap a workload mounts with the key tiers.yaml to the file its
// container sees, checking that the mount is read-only.
func tiersMounts(w workload) map[string]string {
	out := map[string]string{}
	for _, vol := range w.d.Spec.Template.Spec.Volumes {
		src := vol.ConfigMap
		if src == nil {
			continue
		}
		for _, m := range w.c.VolumeMounts {
			if m.Name != vol.Name {
				continue
			}
			file := path.Join(m.MountPath, tiersKey)
			if len(src.Items) > 0 {
				file = ""
				for _, it := range src.Items {
					if it.Key == tiersKey {
						file = path.Join(m.MountPath, it.Path)
					}
				}
			}
			if file != "" && m.ReadOnly && m.SubPath == "" {
				out[src.Name] = file
			} else if file != "" {
				out[src.Name] = "not read-only: " + file
			}
		}
	}
	return out
}

// tiersConfigMaps lists the rendered ConfigMaps that hold a tier table.
func tiersConfigMaps(r *Rendered) []string {
	var out []string
	for _, cm := range Of[*corev1.ConfigMap](r) {
		if _, ok := cm.Data[tiersKey]; ok {
			out = append(out, cm.Name)
		}
	}
	return out
}

// valuesTiers reads global.tiers of a values file as the services' Tier type.
func valuesTiers(t *testing.T, file string) []tiers.Tier {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Global struct {
			Tiers []tiers.Tier `json:"tiers"`
		} `json:"global"`
	}
	if err := yaml.UnmarshalStrict(raw, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v.Global.Tiers
}
