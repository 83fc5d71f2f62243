package charts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Release and namespace every chart is rendered with (skaffold.yaml deploys the same).
const (
	releaseName = "chainintel"
	namespace   = "chainintel"
)

// helmBin returns the helm binary: $CHAININTEL_HELM (the Makefile's pinned one), else helm on
// PATH. Without either the test is skipped, saying how to get one.
func helmBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHAININTEL_HELM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("CHAININTEL_HELM=%s: %v (`make tools` installs the pinned helm into .bin/)", p, err)
		}
		return p
	}
	p, err := exec.LookPath("helm")
	if err != nil {
		t.Skip("helm not found: set CHAININTEL_HELM or put helm on PATH (`make tools` installs the pinned version into .bin/)")
	}
	return p
}

var (
	helmHomeOnce sync.Once
	helmHome     string
)

// helm runs helm with its config, cache and data directories isolated from the user's (no
// repositories, no plugins), and returns stdout; stderr is in the error.
func helm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	bin := helmBin(t)
	helmHomeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chainintel-helm-")
		if err != nil {
			panic(err)
		}
		helmHome = dir
	})
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(helmHome, "config"),
		"HELM_CACHE_HOME="+filepath.Join(helmHome, "cache"),
		"HELM_DATA_HOME="+filepath.Join(helmHome, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &helmError{args: args, err: err, stderr: stderrWithoutNoise(stderr.String())}
	}
	return stdout.Bytes(), nil
}

type helmError struct {
	args   []string
	err    error
	stderr string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.stderr
}

// stderrWithoutNoise drops helm's notes about the symlinked (vendored) dependencies.
func stderrWithoutNoise(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "found symbolic link in path") || strings.TrimSpace(line) == "" {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// renderArgs builds `helm template` arguments for a chart directory (relative to charts/) with
// values files and --set pairs.
func renderArgs(chart string, valuesFiles []string, sets []string) []string {
	return renderArgsAs(releaseName, chart, valuesFiles, sets)
}

// renderArgsAs is renderArgs for a release of another name.
func renderArgsAs(release, chart string, valuesFiles []string, sets []string) []string {
	args := []string{"template", release, chart, "--namespace", namespace}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

var (
	decoderOnce sync.Once
	decoder     *Decoder
	decoderErr  error
)

// render renders a chart and decodes every object strictly; any failure fails the test.
func render(t *testing.T, chart string, valuesFiles []string, sets ...string) *Rendered {
	t.Helper()
	return renderAs(t, releaseName, chart, valuesFiles, sets...)
}

// renderAs is render as a release of another name.
func renderAs(t *testing.T, release, chart string, valuesFiles []string, sets ...string) *Rendered {
	t.Helper()
	out, err := helm(t, renderArgsAs(release, chart, valuesFiles, sets)...)
	if err != nil {
		t.Fatal(err)
	}
	decoderOnce.Do(func() { decoder, decoderErr = NewDecoder() })
	if decoderErr != nil {
		t.Fatal(decoderErr)
	}
	objs, err := decoder.Decode(out)
	if err != nil {
		t.Fatalf("%s: %v", chart, err)
	}
	if len(objs) == 0 {
		t.Fatalf("%s rendered no objects", chart)
	}
	r, err := NewRendered(objs)
	if err != nil {
		t.Fatalf("%s: %v", chart, err)
	}
	return r
}

// renderFails renders a chart that must be refused, and returns helm's message.
func renderFails(t *testing.T, chart string, valuesFiles []string, sets ...string) string {
	t.Helper()
	out, err := helm(t, renderArgs(chart, valuesFiles, sets)...)
	if err == nil {
		t.Fatalf("%s with %v %v rendered, want an error; got:\n%s", chart, valuesFiles, sets, out)
	}
	return err.Error()
}
