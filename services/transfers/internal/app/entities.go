package app

import (
	"context"
	"slices"
	"strings"
	"sync"

	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
)

// Entities is what the app asks intelligence about the names its filters use
// (services/intelligence/client satisfies it): which entity ids it holds, and every entity type.
type Entities interface {
	Entities(ctx context.Context, ids []string) (intelclient.Entities, error)
}

// EntityOptions configure the check of entity ids and types against intelligence.
type EntityOptions = CheckOptions

// typeKey prefixes an entity type among the names asked about (an entity id has no colon).
const typeKey = "type:"

// WithEntities makes an entity id or entity type the read model does not hold (it knows only
// entities with attributed addresses) one to ask e about: one intelligence knows matches nothing,
// one it does not is a 404 (an entity) or a 400 (a type). Without it the read model's names are
// all there are.
func WithEntities(e Entities, o EntityOptions) Option {
	reg := &entityRegistry{e: e}
	rc := newChecker(reg, o, nil, checkerNames{metric: "transfers_entity_checks_unchecked_total",
		desc: "entity and entity type filters taken unchecked because intelligence could not be asked",
		warn: "intelligence unavailable: entity and type filters the read model does not know are answered unchecked (matching nothing)"})
	return func(a *App) { a.entities, a.intelTypes = rc, reg }
}

// entityRegistry answers names, entity ids and typeKey+type, in one call to intelligence, and
// keeps the entity types of its last answer for the 400 listing the types.
type entityRegistry struct {
	e     Entities
	mu    sync.Mutex
	types []string
}

// lastTypes is intelligence's entity types as it last answered (none before its first answer).
func (r *entityRegistry) lastTypes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.types)
}

func (r *entityRegistry) Known(ctx context.Context, names []string) (map[string]bool, error) {
	ids := []string{}
	for _, n := range names {
		if !strings.HasPrefix(n, typeKey) {
			ids = append(ids, n)
		}
	}
	got, err := r.e.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.types = slices.Clone(got.Types)
	r.mu.Unlock()
	known := make(map[string]bool, len(names))
	for _, n := range names {
		if t, ok := strings.CutPrefix(n, typeKey); ok {
			known[n] = slices.Contains(got.Types, t)
		} else {
			known[n] = got.Known[n]
		}
	}
	return known, nil
}

// unknownNames returns the first of names (entity ids, or typeKey+type) intelligence does not
// know, "" when it knows them all or cannot be asked (fail open); without intelligence, the
// first of names.
func (a *App) unknownNames(ctx context.Context, names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	if a.entities == nil {
		return names[0], nil
	}
	return a.entities.Unknown(ctx, names)
}
