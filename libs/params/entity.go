package params

import (
	"fmt"
	"regexp"
	"strings"
)

// EntityID is the form of an operator entity id (docs/contracts.md, Identity and ids).
var EntityID = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,127}$`)

// NotReference is the rule a value of an address-or-entity parameter (base, from, to) broke:
// it is neither an address nor an entity reference (with prefixes, type:<entityType> and
// deposit:<entityId> too). Entity ids are lower case, so a name typed with capitals is told its
// lower-case form when that is an id's form. shown is the value as the message quotes it (the
// caller may shorten it).
func NotReference(v, shown string, prefixes bool) string {
	what := "an address or an entity id"
	if prefixes {
		what = "an address, an entity id, type:<entityType> or deposit:<entityId>"
	}
	msg := fmt.Sprintf("%q is not %s (entity ids are lower case: letters, digits, '.', '_' and '-')", shown, what)
	if l := strings.ToLower(v); l != v && EntityID.MatchString(l) {
		msg += fmt.Sprintf("; did you mean %q?", l)
	}
	return msg
}
