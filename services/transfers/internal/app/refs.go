package app

import (
	"context"
	"strings"

	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// refParam is one parameter's references, for prepare.
type refParam struct {
	param string
	refs  []query.Ref
}

// prepare checks and fetches, once for all the references of a request (every parameter, in
// the order of ps), what resolving them needs from outside the read, so that a request naming
// many entities costs one user-labels call per kind, not one per reference:
//   - operator entity ids: one read of the read model (SetSize) for all of them and, when any
//     is named and there is a caller, one POST /internal/additions for the caller's additions
//     to them; of those the read model does not know and the caller added nothing to,
//     intelligence is asked in one call, and the first it does not know either (in the order
//     of the parameters) is a 404, before user-labels is asked about user entities;
//   - user entity ids: one POST /internal/entities; an id it does not answer is a 404.
func (a *App) prepare(ctx context.Context, nc *nameCheck, ps ...refParam) error {
	ents, users, where := entityIDs(ps)
	nc.prepared = true
	if len(ents) > 0 {
		_, known, err := a.store.SetSize(ctx, store.AddrSet{Entities: ents})
		if err != nil {
			return err
		}
		if nc.additions, err = a.labels.AdditionsOf(ctx, ents); err != nil {
			return err
		}
		var unknown []string
		for _, id := range ents {
			if !known[id] && len(flatten(nc.additions[id])) == 0 {
				unknown = append(unknown, id)
			}
		}
		if u, err := a.unknownNames(ctx, unknown); err != nil || u != "" {
			if err == nil {
				err = notFound("entity", "%sunknown entity %q", prefix(where[u]), u)
			}
			return err
		}
	}
	if len(users) > 0 {
		got, err := a.labels.Entities(ctx, users)
		if err != nil {
			return err
		}
		for _, id := range users {
			if _, ok := got[id]; !ok {
				return notFound("entity", "%sunknown entity %q", prefix(where[id]), id)
			}
		}
		nc.users = got
	}
	return nil
}

// entityIDs returns the distinct operator and user entity ids of ps (user ones in lower case),
// in order, and the first parameter naming each.
func entityIDs(ps []refParam) (ents, users []string, where map[string]string) {
	where = map[string]string{}
	for _, p := range ps {
		for _, r := range p.refs {
			id := r.Value
			if r.Kind == query.KindUserEntity {
				id = strings.ToLower(id)
			} else if r.Kind != query.KindEntity {
				continue
			}
			if _, ok := where[id]; ok {
				continue
			}
			where[id] = p.param
			if r.Kind == query.KindEntity {
				ents = append(ents, id)
			} else {
				users = append(users, id)
			}
		}
	}
	return ents, users, where
}

// userEntityAddresses returns the addresses of the caller's user entity id, as prepare read
// it; one it did not find is a 404.
func (nc *nameCheck) userEntityAddresses(param, id string) ([]string, error) {
	e, ok := nc.users[strings.ToLower(id)]
	if !ok {
		return nil, notFound("entity", "%sunknown entity %q", prefix(param), id)
	}
	return flatten(e.Addresses), nil
}

// noUserEntities answers Entities for a deployment without user-labels.
func noUserEntities() map[string]ulclient.UserEntity { return map[string]ulclient.UserEntity{} }
