package charts

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

var (
	topicRefRe  = regexp.MustCompile(`eventsv1\.(Topic[A-Z]\w*)`)
	topicsVarRe = regexp.MustCompile(`(?m)^var Topics = \[\]string\{([^}]*)\}`)
)

// Every service's migrate (its chart's hook Job) creates the topics of its Topics list: the list
// names every topic the service's code produces or consumes (its non-test sources, without the
// benchmarks' commands and test helper packages), so no topic is left to broker auto-creation.
func TestServiceTopicsListEveryTopicUsed(t *testing.T) {
	for _, svc := range serviceNames {
		dir := filepath.Join("..", "services", svc)
		var listed []string
		used := map[string]bool{}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if d.IsDir() {
				cmd, sub, _ := strings.Cut(rel, string(filepath.Separator))
				if (cmd == "cmd" && sub != "" && sub != svc) || strings.HasSuffix(d.Name(), "test") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := topicsVarRe.FindSubmatch(src); m != nil {
				for _, r := range topicRefRe.FindAllSubmatch(m[1], -1) {
					listed = append(listed, string(r[1]))
				}
				src = topicsVarRe.ReplaceAll(src, nil)
			}
			for _, r := range topicRefRe.FindAllSubmatch(src, -1) {
				used[string(r[1])] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if listed == nil {
			t.Errorf("%s: no `var Topics = []string{...}` (the topics its migrate creates)", svc)
			continue
		}
		sort.Strings(listed)
		want := slices.Sorted(maps.Keys(used))
		if !slices.Equal(listed, want) {
			t.Errorf("%s: Topics lists %v; its code uses %v", svc, listed, want)
		}
	}
}
