package engine

import (
	"slices"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// names counts the read model's attributions by the entity ids and entity types they name, for
// a filter's check that what it names exists (filter.CheckName). An entity id counts as the
// address's entity and as its deposit service, the two an entity filter matches.
type names struct {
	entities map[string]int
	types    map[string]int
	loaded   bool
}

func (n *names) count(a *render.Attr, d int) {
	if a == nil {
		return
	}
	if n.entities == nil {
		n.entities, n.types = map[string]int{}, map[string]int{}
	}
	add := func(m map[string]int, k string) {
		if k == "" {
			return
		}
		if m[k] += d; m[k] <= 0 {
			delete(m, k)
		}
	}
	if a.Entity != nil {
		add(n.entities, a.Entity.ID)
		add(n.types, a.Entity.Type)
	}
	add(n.entities, a.DepositServiceID)
}

// Names is what the read model knows of entity ids and entity types, copied for use off the
// engine goroutine; it satisfies filter.Known for the ids it was made for.
type Names struct {
	// Loaded is false until the read model has read the attribution topic up to where it
	// ended when the replica started (SetLoaded): until then an unknown name may be one not
	// read yet.
	Loaded   bool
	entities map[string]bool
	types    []string
}

// Entity reports whether id, one of those KnownNames was asked about, is known.
func (n Names) Entity(id string) bool { return n.entities[id] }

// Types are the entity types the read model holds, sorted.
func (n Names) Types() []string { return n.types }

// KnownNames reports which of ids the read model knows, and every entity type it holds (engine
// goroutine only).
func (e *Engine) KnownNames(ids []string) Names {
	out := Names{Loaded: e.names.loaded, entities: map[string]bool{}, types: make([]string, 0, len(e.names.types))}
	for _, id := range ids {
		out.entities[id] = e.names.entities[id] > 0
	}
	for t := range e.names.types {
		out.types = append(out.types, t)
	}
	slices.Sort(out.types)
	return out
}

// SetLoaded records that the read model holds every attribution published before the replica
// started (engine goroutine only).
func (e *Engine) SetLoaded() { e.names.loaded = true }
