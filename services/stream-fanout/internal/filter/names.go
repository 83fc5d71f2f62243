package filter

import (
	"slices"
	"strings"

	"github.com/chainintel/chainintel/libs/render"
)

// DocumentedTypes are the entity types API.md documents (Entity.type): type:<t> of one of them is
// always accepted, matching nothing while no address has it (a fresh read model has none).
// GET /transfers accepts the same list (libs/render.EntityTypes).
var DocumentedTypes = render.EntityTypes

// Known is what the service knows of the operator entities and entity types a filter names.
type Known interface {
	// Entity reports whether id is an operator entity (one an attribution names, as the
	// address's entity or its deposit service).
	Entity(id string) bool
	// Types are the entity types known besides DocumentedTypes, sorted.
	Types() []string
}

// Named is one reference of a filter with the field it is in.
type Named struct {
	Field string
	Ref   Ref
}

// Names are s's references in the order base, from, to, counterparties (the order Parse reads
// them in), exclusions included.
func (s Spec) Names() []Named {
	var out []Named
	for _, g := range []struct {
		field string
		refs  []Ref
	}{{"base", s.Base}, {"from", s.From}, {"to", s.To}, {"counterparties", s.Counterparties}} {
		for _, r := range g.refs {
			out = append(out, Named{g.field, r})
		}
	}
	return out
}

// CheckName refuses a reference to an operator entity, deposit:<entityId> or type:<entityType>
// that k does not know, in the words of GET /transfers (an excluded one too: it names nothing
// either). Addresses and user entities (the caller's, looked up by the caller) pass.
func CheckName(n Named, k Known) error {
	r := n.Ref
	switch r.Kind {
	case KindEntity:
		if !k.Entity(r.Value) {
			return errf(n.Field, "unknown entity %q", r.Value)
		}
	case KindDeposit:
		if !k.Entity(r.Value) {
			return errf(n.Field, "unknown entity %q in deposit:%s", r.Value, r.Value)
		}
	case KindType:
		if slices.Contains(DocumentedTypes, r.Value) {
			return nil
		}
		ts := k.Types()
		if !slices.Contains(ts, r.Value) {
			all := slices.Concat(DocumentedTypes, ts)
			slices.Sort(all)
			return errf(n.Field, "type:%s is not an entity type (one of %s)", r.Value, strings.Join(slices.Compact(all), ", "))
		}
	}
	return nil
}

// UnknownUserEntity refuses a reference to a user entity the caller does not have, as GET
// /transfers does.
func UnknownUserEntity(n Named) error {
	return errf(n.Field, "unknown entity %q", n.Ref.Value)
}
