// Package sharedtest finds the read-only public data that sits beside the repository in
// ../shared (fixtures, tag packs, token lists, prices). Tests that need it skip with a clear
// message when it is absent; the files are never copied into the repository.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared directory, or "" when it cannot be found. CHAININTEL_SHARED overrides
// the default of <repo root>/../shared, where the repo root is the nearest parent with go.work.
func Dir() string {
	if d := os.Getenv("CHAININTEL_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(s); err == nil {
				return s
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Path returns the path of rel inside the shared directory, skipping t when it is absent.
func Path(t testing.TB, rel string) string {
	t.Helper()
	d := Dir()
	if d == "" {
		t.Skip("../shared is not beside the repository; skipping the test that reads " + rel)
	}
	p := filepath.Join(d, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared file %s is absent (%v); skipping", rel, err)
	}
	return p
}
