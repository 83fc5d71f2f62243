package charts

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	topicConstRe = regexp.MustCompile(`(Topic[A-Z]\w*)\s*=\s*"([^"]+)"`)
	creatorRe    = regexp.MustCompile("(?m)^- `([a-z-]+)-migrate` creates (.*);?$")
	backquotedRe = regexp.MustCompile("`([^`]+)`")
)

// serviceTopics returns the topics each service's migrate creates when missing (its Topics list).
func serviceTopics(t *testing.T) map[string][]string {
	t.Helper()
	src, err := os.ReadFile("../proto/events/v1/topics.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, m := range topicConstRe.FindAllStringSubmatch(string(src), -1) {
		names[m[1]] = m[2]
	}
	out := map[string][]string{}
	for _, svc := range serviceNames {
		err := filepath.WalkDir(filepath.Join("..", "services", svc), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := topicsVarRe.FindSubmatch(b); m != nil {
				for _, r := range topicRefRe.FindAllSubmatch(m[1], -1) {
					out[svc] = append(out[svc], names[string(r[1])])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// docs/kubernetes.md ("Whose partitions a topic gets") names the migrate Job that creates each
// topic, with the charts' hook weights: the first Job, by weight then name (Helm's hook order),
// whose service lists the topic.
func TestDocumentedTopicCreators(t *testing.T) {
	weights := map[string]int{}
	for _, svc := range serviceNames {
		raw, err := os.ReadFile(svc + "/values.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Migrate struct {
				HookWeight int `json:"hookWeight"`
			} `json:"migrate"`
		}
		if err := yaml.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		weights[svc] = v.Migrate.HookWeight
	}
	order := slices.Clone(serviceNames)
	sort.SliceStable(order, func(i, j int) bool {
		if weights[order[i]] != weights[order[j]] {
			return weights[order[i]] < weights[order[j]]
		}
		return order[i] < order[j]
	})
	topics := serviceTopics(t)
	want := map[string][]string{}
	made := map[string]bool{}
	for _, svc := range order {
		for _, topic := range topics[svc] {
			if !made[topic] {
				made[topic] = true
				want[svc] = append(want[svc], topic)
			}
		}
	}
	for svc := range want {
		sort.Strings(want[svc])
	}
	doc, err := os.ReadFile("../docs/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range creatorRe.FindAllStringSubmatch(string(doc), -1) {
		for _, q := range backquotedRe.FindAllStringSubmatch(m[2], -1) {
			got[m[1]] = append(got[m[1]], q[1])
		}
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("docs/kubernetes.md says the migrate Jobs create %v; by hook order (%v) they create %v", got, order, want)
	}
}
