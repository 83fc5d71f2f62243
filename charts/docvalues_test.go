package charts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// Every values example of docs/kubernetes.md (a yaml block whose keys are all top-level keys of
// the umbrella's values) renders with the umbrella chart, and sets only variables the services
// read, so a copied example installs and configures what it says.
func TestDocumentedValuesRender(t *testing.T) {
	raw, err := os.ReadFile("chainintel/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, svc := range serviceNames {
		top[svc] = true
	}
	n := 0
	for i, block := range yamlBlocks(t, "../docs/kubernetes.md") {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(block), &v); err != nil || len(v) == 0 {
			continue
		}
		ours := true
		for k := range v {
			if _, ok := top[k]; !ok {
				ours = false
			}
		}
		if !ours {
			continue
		}
		n++
		file := filepath.Join(t.TempDir(), "block"+strconv.Itoa(i)+".yaml")
		if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := helm(t, renderArgs("./chainintel", []string{file}, nil)...); err != nil {
			t.Errorf("docs/kubernetes.md yaml block %d does not render:\n%s\n%v", i, strings.TrimSpace(block), err)
			continue
		}
		r := render(t, "./chainintel", []string{file})
		for _, d := range Of[*appsv1.Deployment](r) {
			f := facts(t)[d.Spec.Template.Labels[nameLabel]]
			env, _, err := r.Env(d.Spec.Template.Spec.Containers[0])
			if err != nil {
				t.Fatal(err)
			}
			checkEnvNames(t, "docs/kubernetes.md yaml block "+strconv.Itoa(i)+": Deployment/"+d.Name, f, env, expect{})
		}
	}
	if n == 0 {
		t.Error("no values example found in docs/kubernetes.md")
	}
	t.Logf("%d values examples rendered", n)
}
