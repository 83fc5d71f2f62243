package charts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/chainintel/chainintel/services/edge/tiers"
)

// yamlBlocks returns the fenced yaml blocks of a Markdown file, dedented by their fence's indent.
func yamlBlocks(t *testing.T, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^( *)```yaml\n(.*?)^ *```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		var lines []string
		for _, l := range strings.Split(m[2], "\n") {
			lines = append(lines, strings.TrimPrefix(l, m[1]))
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return out
}

// checkHasBuiltInTiers: a documented custom table holds every built-in tier unchanged, so the
// keys made on them (the dev key, the docs' --tier api key) keep working when it is copied.
func checkHasBuiltInTiers(t *testing.T, where string, list []tiers.Tier) {
	t.Helper()
	if _, err := tiers.New(list); err != nil {
		t.Errorf("%s: the example table is refused: %v", where, err)
	}
	byName := map[string]tiers.Tier{}
	for _, x := range list {
		byName[x.Name] = x
	}
	def := tiers.Default()
	for _, name := range def.Names() {
		want, _ := def.Get(name)
		if got, ok := byName[name]; !ok || got != want {
			t.Errorf("%s: built-in tier %s is %+v, want %+v", where, name, got, want)
		}
	}
}

// The example tier tables of docs/edge.md and docs/kubernetes.md keep the built-in tiers.
func TestDocumentedTierTablesKeepBuiltInTiers(t *testing.T) {
	found := 0
	for _, b := range yamlBlocks(t, "../docs/edge.md") {
		if !strings.HasPrefix(b, "tiers:") {
			continue
		}
		var v struct {
			Tiers []tiers.Tier `json:"tiers"`
		}
		if err := yaml.UnmarshalStrict([]byte(b), &v); err != nil {
			t.Fatalf("docs/edge.md: %v", err)
		}
		checkHasBuiltInTiers(t, "docs/edge.md", v.Tiers)
		found++
	}
	for _, b := range yamlBlocks(t, "../docs/kubernetes.md") {
		if !strings.HasPrefix(b, "global:\n  tiers:") {
			continue
		}
		var v struct {
			Global struct {
				Tiers []tiers.Tier `json:"tiers"`
			} `json:"global"`
		}
		if err := yaml.UnmarshalStrict([]byte(b), &v); err != nil {
			t.Fatalf("docs/kubernetes.md: %v", err)
		}
		checkHasBuiltInTiers(t, "docs/kubernetes.md", v.Global.Tiers)
		found++
	}
	if found != 2 {
		t.Errorf("%d example tier tables found in the docs, want 2 (edge.md, kubernetes.md)", found)
	}
}

// The umbrella's own ConfigMaps carry the release's full name (docs/kubernetes.md, The tier
// table): <release>-chainintel-... unless the release name contains chainintel.
func TestReleaseObjectNames(t *testing.T) {
	for release, prefix := range map[string]string{"myrel": "myrel-chainintel", "chainintel": "chainintel", "chainintel-prod": "chainintel-prod"} {
		args := renderArgs("./chainintel", nil, tier())
		args[1] = release
		out, err := helm(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{prefix + "-tiers", prefix + "-dashboards"} {
			if !strings.Contains(string(out), "\n  name: "+name+"\n") {
				t.Errorf("release %s: no object %s rendered", release, name)
			}
		}
	}
}
