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
// the order of ps), what resolving them needs from outside the read: the operator entity ids
// are checked against the read model, then those it does not know against intelligence (one
// read and at most one call), and one neither knows is a 404 before user-labels is asked
// anything; then user-labels supplies the caller's user entities (one POST
// /internal/entities) and the caller's additions to operator entities (one POST
// /internal/lookup?additions=true), each only when a reference needs it. So a request naming
// many entities costs one call per kind, not one per reference, and a request naming unknown
// ones costs none. An operator entity the caller added addresses to is still one the read
// model or intelligence must know.
func (a *App) prepare(ctx context.Context, nc *nameCheck, ps ...refParam) error {
	var ents, users []string
	where := map[string]string{} // entity id (user ones lower case) → the first parameter naming it
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
	nc.prepared = true
	if err := a.checkEntities(ctx, ents, where); err != nil {
		return err
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
	if len(ents) > 0 {
		l, err := a.labels.LookupWithAdditions(ctx, nil)
		if err != nil {
			return err
		}
		nc.additions = l.Additions
	}
	return nil
}

// checkEntities returns the 404 of the first of ids (in request order; where names each one's
// parameter) that neither the read model nor intelligence knows, in one read and at most one
// call to intelligence.
func (a *App) checkEntities(ctx context.Context, ids []string, where map[string]string) error {
	if len(ids) == 0 {
		return nil
	}
	_, known, err := a.store.SetSize(ctx, store.AddrSet{Entities: ids})
	if err != nil {
		return err
	}
	var unknown []string
	for _, id := range ids {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	u, err := a.unknownNames(ctx, unknown)
	if err != nil || u == "" {
		return err
	}
	return notFound("entity", "%sunknown entity %q", prefix(where[u]), u)
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
