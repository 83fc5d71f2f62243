package http

import (
	"fmt"
	"strings"
	"testing"
)

// The names are the client's (outward), deduplicated, sorted and bounded, and a query of
// thousands of names is read once (not a scan per name).
func TestIgnoredNames(t *testing.T) {
	outward := func(s string) string { return strings.Replace(s, "service", "acme", 1) }
	q := map[string][]string{"serviceFoo": {"1"}, "chains": {"x"}, "a\nb": {"1"}, "c,d": {"1"}}
	if got := strings.Join(ignoredNames(q, map[string]bool{"chains": true}, outward), ","); got != "?,acmeFoo" {
		t.Errorf("names %q", got)
	}
	many := map[string][]string{}
	for i := range 20_000 {
		many[fmt.Sprintf("p%05d", i)] = nil
	}
	got := ignoredNames(many, nil, nil)
	if len(got) != ignoredListMax+1 || got[0] != "p00000" || got[ignoredListMax] != "..." {
		t.Errorf("%d names: %v", len(got), got)
	}
}
