package charts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// skaffoldConfig is the part of skaffold's schema skaffold.yaml uses, decoded strictly so a
// misspelt key fails here rather than being ignored by skaffold.
type skaffoldConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Build struct {
		TagPolicy map[string]map[string]any `json:"tagPolicy"`
		Local     struct {
			Push        *bool `json:"push"`
			UseBuildkit *bool `json:"useBuildkit"`
			Concurrency *int  `json:"concurrency"`
		} `json:"local"`
		Artifacts []struct {
			Image   string `json:"image"`
			Context string `json:"context"`
			Docker  struct {
				Dockerfile string            `json:"dockerfile"`
				BuildArgs  map[string]string `json:"buildArgs"`
			} `json:"docker"`
		} `json:"artifacts"`
	} `json:"build"`
	Deploy struct {
		Helm struct {
			Flags struct {
				Install []string `json:"install"`
				Upgrade []string `json:"upgrade"`
			} `json:"flags"`
			Releases []struct {
				Name                  string            `json:"name"`
				ChartPath             string            `json:"chartPath"`
				Namespace             string            `json:"namespace"`
				CreateNamespace       bool              `json:"createNamespace"`
				SkipBuildDependencies bool              `json:"skipBuildDependencies"`
				ValuesFiles           []string          `json:"valuesFiles"`
				SetValueTemplates     map[string]string `json:"setValueTemplates"`
			} `json:"releases"`
		} `json:"helm"`
	} `json:"deploy"`
}

// skaffold.yaml builds the eight images from the repository root with the Dockerfile and
// deploys the umbrella chart with each image set on its service; rendering the chart with the
// values skaffold would pass puts every image on its own Deployment and migrate Job.
func TestSkaffold(t *testing.T) {
	data, err := os.ReadFile("../skaffold.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c skaffoldConfig
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("skaffold.yaml: %v", err)
	}
	if !strings.HasPrefix(c.APIVersion, "skaffold/v4") || c.Kind != "Config" {
		t.Errorf("apiVersion %q kind %q, want skaffold/v4* Config", c.APIVersion, c.Kind)
	}
	if c.Build.Local.Push == nil || *c.Build.Local.Push {
		t.Error("build.local.push must be false (kind loads images into the node)")
	}

	images := map[string]string{} // service -> image
	for _, a := range c.Build.Artifacts {
		svc := a.Docker.BuildArgs["SERVICE"]
		if !slices.Contains(serviceNames, svc) {
			t.Errorf("artifact %s: build arg SERVICE=%q is not a service", a.Image, svc)
			continue
		}
		if _, dup := images[svc]; dup {
			t.Errorf("service %s built twice", svc)
		}
		images[svc] = a.Image
		if a.Image != "chainintel/"+svc {
			t.Errorf("artifact %s for service %s, want chainintel/%s", a.Image, svc, svc)
		}
		if a.Context != "." || a.Docker.Dockerfile != "Dockerfile" || len(a.Docker.BuildArgs) != 1 {
			t.Errorf("artifact %s: context %q dockerfile %q args %v, want the repository root, Dockerfile, SERVICE only", a.Image, a.Context, a.Docker.Dockerfile, a.Docker.BuildArgs)
		}
	}
	if len(c.Build.Artifacts) != 8 || len(images) != 8 {
		t.Errorf("%d artifacts for %d services, want eight", len(c.Build.Artifacts), len(images))
	}
	if _, err := os.Stat("../Dockerfile"); err != nil {
		t.Error(err)
	}

	// Helm must wait out the migrate Jobs' deadline (docs/kubernetes.md, Installing elsewhere).
	for what, flags := range map[string][]string{"install": c.Deploy.Helm.Flags.Install, "upgrade": c.Deploy.Helm.Flags.Upgrade} {
		if !slices.Equal(flags, []string{"--timeout", "20m"}) {
			t.Errorf("deploy.helm.flags.%s %v, want --timeout 20m", what, flags)
		}
	}
	if len(c.Deploy.Helm.Releases) != 1 {
		t.Fatalf("%d helm releases, want 1 (the umbrella chart)", len(c.Deploy.Helm.Releases))
	}
	rel := c.Deploy.Helm.Releases[0]
	if rel.ChartPath != "charts/chainintel" || rel.Name != releaseName || rel.Namespace != namespace {
		t.Errorf("release %s of %s in %s, want %s of charts/chainintel in %s", rel.Name, rel.ChartPath, rel.Namespace, releaseName, namespace)
	}
	if !rel.SkipBuildDependencies {
		t.Error("skipBuildDependencies must be true: `helm dependency build` would package the vendored charts beside their symlinks")
	}
	var files []string
	for _, f := range rel.ValuesFiles {
		p := filepath.Join("..", f)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("values file %s: %v", f, err)
		}
		files = append(files, p)
	}

	// Resolve the templates as skaffold does ("/" and "-" of an image name become "_").
	vars := map[string]string{}
	for svc, image := range images {
		key := strings.NewReplacer("/", "_", "-", "_").Replace(image)
		vars["IMAGE_REPO_"+key] = "localhost:5001/" + image
		vars["IMAGE_TAG_"+key] = "t-" + svc
	}
	var sets []string
	for svc := range images {
		for _, field := range []string{"repository", "tag"} {
			key := svc + ".image." + field
			tmpl, ok := rel.SetValueTemplates[key]
			if !ok {
				t.Errorf("setValueTemplates has no %s", key)
				continue
			}
			v, err := execTemplate(tmpl, vars)
			if err != nil {
				t.Errorf("setValueTemplates %s: %v", key, err)
				continue
			}
			sets = append(sets, key+"="+v)
		}
	}
	if len(rel.SetValueTemplates) != 16 {
		t.Errorf("%d setValueTemplates, want repository and tag of each of the eight services", len(rel.SetValueTemplates))
	}
	r := render(t, "./chainintel", files, sets...)
	seen := map[string]bool{}
	check := func(kind, name, svc, image string) {
		want := fmt.Sprintf("localhost:5001/chainintel/%s:t-%s", svc, svc)
		if image != want {
			t.Errorf("%s/%s runs %s, want the image skaffold built (%s)", kind, name, image, want)
		}
		seen[svc] = true
	}
	for _, d := range Of[*appsv1.Deployment](r) {
		check("Deployment", d.Name, d.Spec.Template.Labels[nameLabel], d.Spec.Template.Spec.Containers[0].Image)
	}
	for _, j := range Of[*batchv1.Job](r) {
		check("Job", j.Name, strings.TrimSuffix(j.Name, "-migrate"), j.Spec.Template.Spec.Containers[0].Image)
	}
	if len(seen) != 8 {
		t.Errorf("images checked for %v, want all eight services", seen)
	}
}

func execTemplate(text string, vars map[string]string) (string, error) {
	tmpl, err := template.New("v").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, vars); err != nil {
		return "", err
	}
	return b.String(), nil
}

// dockerfileInstructions joins continuation lines and drops comments.
func dockerfileInstructions(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// The Dockerfile builds ./services/$SERVICE/cmd/$SERVICE from the workspace root, static and
// stripped, onto distroless/static as nonroot, with the Go version go.work asks for.
func TestDockerfile(t *testing.T) {
	ins := dockerfileInstructions(t)
	var stages [][]string
	for _, in := range ins {
		if strings.HasPrefix(in, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want build and runtime", len(stages))
	}
	build, runtime := stages[0], stages[1]
	if !regexp.MustCompile(`^FROM (--platform=\$BUILDPLATFORM )?golang:\$\{GO_VERSION\} AS build$`).MatchString(build[0]) {
		t.Errorf("build stage %q, want FROM golang:${GO_VERSION} AS build", build[0])
	}
	work, err := os.ReadFile("../go.work")
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(work)
	if goVer == nil || !slices.Contains(ins, "ARG GO_VERSION="+string(goVer[1])) {
		t.Errorf("ARG GO_VERSION is not go.work's Go version %s", goVer)
	}
	if !slices.Contains(build, "ARG SERVICE") || !slices.Contains(runtime, "ARG SERVICE") {
		t.Error("ARG SERVICE must be declared in both stages")
	}
	if !slices.Contains(build, "COPY . .") {
		t.Error("the build stage must copy the whole context (the workspace: go.work and every module)")
	}
	var buildRun string
	for _, in := range build {
		if strings.HasPrefix(in, "RUN ") && strings.Contains(in, "go build") {
			buildRun = in
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", `go build -trimpath -ldflags="-s -w"`, "-o /out/${SERVICE} ./services/${SERVICE}/cmd/${SERVICE}", "--mount=type=cache"} {
		if !strings.Contains(buildRun, want) {
			t.Errorf("the go build step %q lacks %q", buildRun, want)
		}
	}
	if strings.Contains(buildRun, "GOWORK=off") {
		t.Error("the build must use the workspace")
	}
	if !regexp.MustCompile(`^FROM gcr\.io/distroless/static(-debian\d+)?:nonroot$`).MatchString(runtime[0]) {
		t.Errorf("runtime stage %q, want distroless/static:nonroot", runtime[0])
	}
	for _, want := range []string{"COPY --from=build /out/ /usr/local/bin/", "USER nonroot:nonroot", `ENTRYPOINT ["/usr/local/bin/service"]`} {
		if !slices.Contains(runtime, want) {
			t.Errorf("runtime stage lacks %q", want)
		}
	}
	// Every service's command package resolves in the workspace as a main package.
	goBin := goTool(t)
	for _, svc := range serviceNames {
		cmd := exec.Command(goBin, "list", "-f", "{{.Name}}", "./services/"+svc+"/cmd/"+svc)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "main" {
			t.Errorf("./services/%s/cmd/%s: %v %s", svc, svc, err, out)
		}
	}
}

// .dockerignore keeps every file the builds read (go.work, each module's go.mod and go.sum,
// each Go and embedded file of the eight binaries) and drops VCS data, tools, and the caches,
// local state and binaries .gitignore leaves out.
func TestDockerignore(t *testing.T) {
	f, err := os.Open("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(rel string) bool {
		ex, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return ex
	}
	// And what .gitignore leaves out as built or run locally.
	for _, p := range []string{".git/HEAD", ".bin/helm", "docs/kubernetes.md", "charts/chainintel/values.yaml", "charts/render_test.go",
		".cache/run/chainintel", "dev/tmp/stack.json", "dev/chainintel", "services/transfers/transfers-bench", "services/edge/cmd/edge/edge"} {
		if !excluded(p) {
			t.Errorf("%s is sent to the Docker daemon; leave it out", p)
		}
	}

	need := []string{"go.work", "go.work.sum"}
	goBin := goTool(t)
	listMods := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}")
	listMods.Dir = root
	mods, err := listMods.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	for _, dir := range strings.Fields(string(mods)) {
		for _, name := range []string{"go.mod", "go.sum"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				need = append(need, relTo(t, root, filepath.Join(dir, name)))
			}
		}
	}
	args := []string{"list", "-deps", "-f", "{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}\n{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}\n{{end}}"}
	for _, svc := range serviceNames {
		args = append(args, "./services/"+svc+"/cmd/"+svc)
	}
	listDeps := exec.Command(goBin, args...)
	listDeps.Dir = root
	files, err := listDeps.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var inRepo int
	for _, p := range strings.Fields(string(files)) {
		if strings.HasPrefix(p, root+string(filepath.Separator)) {
			need = append(need, relTo(t, root, p))
			inRepo++
		}
	}
	if inRepo == 0 {
		t.Fatal("go list found none of the repository's files")
	}
	for _, p := range need {
		if excluded(p) {
			t.Errorf(".dockerignore leaves out %s, which the image build reads", p)
		}
	}
}

// goTool is the go command (tests run under it, so it is normally on PATH or in GOROOT).
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if gr := os.Getenv("GOROOT"); gr != "" {
		return filepath.Join(gr, "bin", "go")
	}
	t.Skip("go command not found")
	return ""
}

func relTo(t *testing.T, root, p string) string {
	t.Helper()
	rel, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// makeTarget is a Makefile rule documented with "## " (make help's list).
var makeTarget = regexp.MustCompile(`(?m)^([^\s:#=]+):[^=\n]*## (.*)$`)

// `make help` lists every documented target of the Makefile, whatever characters its name has
// (e2e has digits).
func TestMakeHelpListsEveryTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := makeTarget.FindAllStringSubmatch(string(b), -1)
	if len(targets) == 0 {
		t.Fatal("no documented target found in the Makefile")
	}
	cmd := exec.Command("make", "-s", "help")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	for _, m := range targets {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(m[1]) + `\s+` + regexp.QuoteMeta(m[2]) + `$`).Match(out) {
			t.Errorf("make help does not list %s (%q); it printed:\n%s", m[1], m[2], out)
		}
	}
}
