package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// notesProbe is a copy of the umbrella chart whose NOTES.txt is also rendered into a ConfigMap
// (helm template prints no notes): the chart's files are symlinked, NOTES.txt is wrapped in a
// named template that a ConfigMap "notes" includes.
func notesProbe(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("chainintel")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "chainintel")
	if err := os.MkdirAll(filepath.Join(dst, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Chart.yaml", "values.yaml", "dashboards", "charts"} {
		if err := os.Symlink(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	tpls, err := os.ReadDir(filepath.Join(src, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tpls {
		if err := os.Symlink(filepath.Join(src, "templates", e.Name()), filepath.Join(dst, "templates", e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := os.ReadFile(filepath.Join(src, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"_notes_probe.tpl": `{{- define "notes-probe" -}}` + "\n" + string(notes) + "\n" + `{{- end -}}`,
		"notes-probe.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include \"notes-probe\" . | quote }}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dst, "templates", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// The edge's objects take edge.nameOverride or edge.fullnameOverride, and so do the objects of
// the umbrella that name them: both Ingresses' backends and the kubectl commands of NOTES.txt.
func TestEdgeNameOverrideReachesIngressAndNotes(t *testing.T) {
	chart := notesProbe(t)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "edge"},
		{[]string{"edge.nameOverride=gw"}, "gw"},
		{[]string{"edge.fullnameOverride=api"}, "api"},
		{[]string{"edge.nameOverride=gw", "edge.fullnameOverride=api"}, "api"},
	} {
		r := render(t, chart, nil, c.sets...)
		if _, ok := r.Get("Service", c.want); !ok {
			t.Fatalf("%v: no Service/%s rendered", c.sets, c.want)
		}
		if _, ok := r.Get("Deployment", c.want); !ok {
			t.Fatalf("%v: no Deployment/%s rendered", c.sets, c.want)
		}
		ings := Of[*networkingv1.Ingress](r)
		if len(ings) != 2 {
			t.Fatalf("%v: %d Ingresses, want 2", c.sets, len(ings))
		}
		for _, ing := range ings {
			for _, rule := range ing.Spec.Rules {
				for _, p := range rule.HTTP.Paths {
					if b := p.Backend.Service; b == nil || b.Name != c.want {
						t.Errorf("%v: Ingress/%s path %s routes to %+v, want Service %s", c.sets, ing.Name, p.Path, p.Backend, c.want)
					}
				}
			}
		}
		o, ok := r.Get("ConfigMap", "notes")
		if !ok {
			t.Fatal("the NOTES probe rendered no ConfigMap")
		}
		notes := o.Obj.(*corev1.ConfigMap).Data["notes"]
		if n := strings.Count(notes, "exec deploy/"+c.want+" "); n != 2 {
			t.Errorf("%v: NOTES name deploy/%s %d times, want 2:\n%s", c.sets, c.want, n, notes)
		}
	}
}
