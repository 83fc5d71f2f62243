package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// entitySubjects resolves ids (operator entity ids, or UUIDs of the caller's user entities) as
// EntitySubject resolves each, for a route naming many: one read of the operator entities, one
// user-labels call for the caller's user entities among them and one for the caller's additions
// to the operator ones (with one read of their attributions), not a call per id. An unknown
// operator entity is a 404 before user-labels is asked; then an unknown user entity, the first
// in the order of ids.
func (a *App) entitySubjects(ctx context.Context, ids []string) ([]Subject, error) {
	names, err := a.chainNames(nil)
	if err != nil {
		return nil, err
	}
	var ops, users []string
	for _, id := range ids {
		if ulclient.IsUserEntityID(id) {
			users = append(users, strings.ToLower(id))
		} else {
			ops = append(ops, id)
		}
	}
	own, err := a.operatorSubjects(ctx, ops)
	if err != nil {
		return nil, err
	}
	ues := map[string]ulclient.UserEntity{}
	if len(users) > 0 {
		if ues, err = a.labels.Entities(ctx, users); err != nil {
			return nil, fmt.Errorf("user entities: %w", err)
		}
	}
	out := make([]Subject, 0, len(ids))
	for _, id := range ids {
		s := Subject{Chains: names, EntityID: id}
		if !ulclient.IsUserEntityID(id) {
			s.Entity, s.Refs = id, own[id]
			out = append(out, s)
			continue
		}
		ue, ok := ues[strings.ToLower(id)]
		if !ok {
			return nil, notFound("entity %q not found", id)
		}
		s.User = true
		for ct, addrs := range ue.Addresses {
			for _, ad := range addrs {
				s.Refs = append(s.Refs, store.Ref{ChainType: ct, Address: ad})
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// operatorSubjects checks that the read model holds every one of ids (the first it does not is
// a 404) and returns the caller's additions to each that the entity does not hold already
// (ownAdditions), read in one user-labels call.
func (a *App) operatorSubjects(ctx context.Context, ids []string) (map[string][]store.Ref, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ents, err := a.st.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := ents[id]; !ok {
			return nil, notFound("entity %q not found", params.Trunc(id))
		}
	}
	added, err := a.labels.AdditionsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	return a.ownAdditions(ctx, added)
}
