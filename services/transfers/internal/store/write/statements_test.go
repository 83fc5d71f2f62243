package write

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestStatementsTakeGroupLock checks that every statement taking an advisory lock takes
// groupLock, whose number the .sql files write out.
func TestStatementsTakeGroupLock(t *testing.T) {
	files, err := filepath.Glob("sql/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("statements: %v (%d files)", err, len(files))
	}
	lock := regexp.MustCompile(`pg_advisory_xact_lock(?:_shared)?\(([^)]*)\)`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lock.FindAllStringSubmatch(string(b), -1) {
			n++
			if m[1] != fmt.Sprint(groupLock) {
				t.Errorf("%s takes lock %s, not groupLock (%d)", f, m[1], groupLock)
			}
		}
	}
	if n == 0 {
		t.Error("no statement takes groupLock")
	}
}
