// Package app answers the balances service's routes from the store's read models: it resolves
// subjects (an address, an operator entity, a caller's user entity), names tokens, prices them
// and shapes the API objects. Its errors are typed (NotFoundError, ParamError); internal/http
// maps them to statuses.
package app

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Store is what the app reads.
type Store interface {
	AddressBalances(ctx context.Context, addr string, chains []string) ([]store.Holding, error)
	SetBalances(ctx context.Context, refs []store.Ref, chains []string) ([]store.Holding, error)
	EntityBalances(ctx context.Context, entity string, chains []string) ([]store.Holding, error)
	SetChanges(ctx context.Context, refs []store.Ref, chains []string) ([]store.Change, error)
	EntityChanges(ctx context.Context, entity string, chains []string) ([]store.Change, error)
	EntityWindow(ctx context.Context, entity string, chains []string, natives map[string]string, earliest, to time.Time) (store.EntityWindow, error)
	EntityBalancesAt(ctx context.Context, entity string, chains []string, day time.Time) ([]store.Holding, error)
	EntityBalancesBack(ctx context.Context, entity string, chains []string, day time.Time) ([]store.Holding, error)
	TokenMetas(ctx context.Context, keys [][2]string) (map[[2]string]store.TokenMeta, error)
	Registry(ctx context.Context, pricingID string) (store.MarketToken, bool, error)
	PricesAt(ctx context.Context, ids []string, t time.Time) (map[string]store.PricePoint, error)
	PriceDays(ctx context.Context, ids []string, from, to time.Time) (map[string][]store.DayPrice, error)
	Attributions(ctx context.Context, refs []store.Ref) (map[store.Ref]store.AttributionView, error)
	Entities(ctx context.Context, ids []string) (map[string]store.Entity, error)
	EntityMembers(ctx context.Context, entity string, chainTypes []string, limit int) ([]store.Ref, error)
	HolderPages(ctx context.Context, hq store.HolderQuery) (store.HolderPages, error)
	EntityAdditions(ctx context.Context, eq store.EntityAdditionsQuery) (map[[2]string]store.EntityAdditionsPage, error)
	Subaccounts(ctx context.Context, owners []string, tokens [][2]string, limit int) ([]store.Subaccount, error)
	SetHoldings(ctx context.Context, refs []store.Ref, chains []string) ([]store.AddressHolding, error)
	EntityRanking(ctx context.Context, rq store.RankingQuery) ([]store.EntityTokenBalance, error)
}

// UserLabels is what the app asks user-labels (services/user-labels/client satisfies it).
type UserLabels interface {
	Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error)
	// LookupWithAdditions is Lookup whose answer also carries the caller's additions to every
	// operator entity (Lookup.Additions), in the same call.
	LookupWithAdditions(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error)
	Entity(ctx context.Context, id string) (ulclient.UserEntity, error)
	// Entities answers those of ids (lower case) that are the caller's user entities, by id,
	// in one call (entitySubjects).
	Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error)
	// AdditionsOf answers the caller's additions to the operator entities ids, by entity id
	// then chain type, in one call (entitySubjects).
	AdditionsOf(ctx context.Context, ids []string) (map[string]map[string][]string, error)
	Additions(ctx context.Context, operatorEntityID string) (map[string][]string, error)
}

// NotFoundError is an unknown subject: an entity, a token, an address format.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

func notFound(format string, args ...any) error {
	return &NotFoundError{Msg: fmt.Sprintf(format, args...)}
}

// ParamError is a request the app refuses for a parameter.
type ParamError struct{ Param, Rule string }

func (e *ParamError) Error() string { return e.Param + ": " + e.Rule }

// App answers the routes. It is safe for concurrent use.
type App struct {
	st     Store
	labels UserLabels
	chains *chains.Set
	now    func() time.Time
}

// Option tunes an App.
type Option func(*App)

// WithClock sets the clock ("today" and the 24 h-ago prices).
func WithClock(now func() time.Time) Option { return func(a *App) { a.now = now } }

// New returns an app; labels may be nil (no caller labels or user entities).
func New(st Store, labels UserLabels, cs *chains.Set, opts ...Option) *App {
	a := &App{st: st, labels: labels, chains: cs, now: time.Now}
	if labels == nil {
		a.labels = noLabels{}
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Now is the app's clock.
func (a *App) Now() time.Time { return a.now() }

type noLabels struct{}

func (noLabels) Lookup(context.Context, []ulclient.AddressRef) (ulclient.Lookup, error) {
	return ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}, nil
}

func (n noLabels) LookupWithAdditions(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error) {
	return n.Lookup(ctx, addrs)
}

func (noLabels) Entity(context.Context, string) (ulclient.UserEntity, error) {
	return ulclient.UserEntity{}, ulclient.ErrNotFound
}

func (noLabels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	return map[string]ulclient.UserEntity{}, nil
}

func (noLabels) AdditionsOf(context.Context, []string) (map[string]map[string][]string, error) {
	return map[string]map[string][]string{}, nil
}

func (noLabels) Additions(context.Context, string) (map[string][]string, error) {
	return map[string][]string{}, nil
}

// Subject is whose balances a route asks for: one address, an operator entity or a caller's
// user entity.
type Subject struct {
	Entity   string      // operator entity id
	User     bool        // Entity is a user entity; Refs are its addresses
	Refs     []store.Ref // the address (one), the user entity's addresses, or the caller's additions to Entity
	Chains   []string    // the chains asked about
	Address  string      // the address subject, normalized
	EntityID string      // the entity id as asked
}

// chainNames resolves the chains parameter against the deployment's chains (every one when
// none is named) as every route taking chains does (params.ResolveChains).
func (a *App) chainNames(requested []string) ([]string, error) {
	cs, err := params.ResolveChains("chains", requested, a.chains)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		cs = a.chains.Chains()
	}
	return chains.Names(cs), nil
}

// AddressSubject resolves an address on the requested chains of its type.
func (a *App) AddressSubject(addr string, requested []string) (Subject, error) {
	names, err := a.chainNames(requested)
	if err != nil {
		return Subject{}, err
	}
	types := address.DetectTypes(addr)
	if len(types) == 0 {
		return Subject{}, notFound("address %q is not a valid address of any supported chain", params.Trunc(addr))
	}
	sub := Subject{}
	for _, t := range types {
		n, err := address.Normalize(t, addr)
		if err != nil {
			continue
		}
		sub.Address = n
		sub.Refs = append(sub.Refs, store.Ref{ChainType: string(t), Address: n})
		for _, c := range names {
			if store.ChainType(c) == string(t) {
				sub.Chains = append(sub.Chains, c)
			}
		}
	}
	if len(sub.Chains) == 0 {
		// API.md: an address whose format fits none of the chains asked about is a 404, on the
		// path as in the transfers routes' filters (same message).
		which := "requested"
		if len(requested) == 0 {
			which = "configured"
		}
		return Subject{}, notFound("address: address %q is not valid on the %s chains (%s)", params.Trunc(addr), which, strings.Join(names, ", "))
	}
	return sub, nil
}

// EntitySubject resolves an operator entity id or, for a UUID, the caller's user entity.
func (a *App) EntitySubject(ctx context.Context, id string, requested []string) (Subject, error) {
	names, err := a.chainNames(requested)
	if err != nil {
		return Subject{}, err
	}
	sub := Subject{Chains: names, EntityID: id}
	if ulclient.IsUserEntityID(id) {
		ue, err := a.labels.Entity(ctx, id)
		if errors.Is(err, ulclient.ErrNotFound) {
			return Subject{}, notFound("entity %q not found", id)
		}
		if err != nil {
			return Subject{}, fmt.Errorf("user entity %s: %w", id, err)
		}
		sub.User = true
		for ct, addrs := range ue.Addresses {
			for _, ad := range addrs {
				sub.Refs = append(sub.Refs, store.Ref{ChainType: ct, Address: ad})
			}
		}
		return sub, nil
	}
	ents, err := a.st.Entities(ctx, []string{id})
	if err != nil {
		return Subject{}, err
	}
	if _, ok := ents[id]; !ok {
		return Subject{}, notFound("entity %q not found", params.Trunc(id))
	}
	sub.Entity = id
	if sub.Refs, err = a.additions(ctx, id); err != nil {
		return Subject{}, err
	}
	return sub, nil
}

// additions are the addresses the caller added to operator entity id (user-labels) that the
// entity does not hold already, so none is counted twice.
func (a *App) additions(ctx context.Context, id string) ([]store.Ref, error) {
	added, err := a.labels.Additions(ctx, id)
	if err != nil || len(added) == 0 {
		return nil, err
	}
	own, err := a.ownAdditions(ctx, map[string]map[string][]string{id: added})
	return own[id], err
}

// ownAdditions resolves the caller's additions (by operator entity id, then chain type) to the
// addresses each entity does not hold already, with one read of their attributions: every
// route counting additions in an operator entity counts these.
func (a *App) ownAdditions(ctx context.Context, added map[string]map[string][]string) (map[string][]store.Ref, error) {
	var refs []store.Ref
	for _, byType := range added {
		for ct, addrs := range byType {
			for _, ad := range addrs {
				refs = append(refs, store.Ref{ChainType: ct, Address: ad})
			}
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	attrs, err := a.st.Attributions(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := map[string][]store.Ref{}
	for id, byType := range added {
		for ct, addrs := range byType {
			for _, ad := range addrs {
				r := store.Ref{ChainType: ct, Address: ad}
				if at, ok := attrs[r]; ok && at.Entity != nil && at.Entity.ID == id {
					continue
				}
				out[id] = append(out[id], r)
			}
		}
	}
	return out, nil
}

// holdings returns the subject's current balances; an operator entity's come from its
// maintained totals.
func (a *App) holdings(ctx context.Context, s Subject) ([]store.Holding, error) {
	switch {
	case s.Entity != "":
		hs, err := a.st.EntityBalances(ctx, s.Entity, s.Chains)
		if err != nil || len(s.Refs) == 0 {
			return hs, err
		}
		extra, err := a.st.SetBalances(ctx, s.Refs, s.Chains)
		return mergeHoldings(append(hs, extra...)), err
	case len(s.Refs) == 0 || len(s.Chains) == 0:
		return nil, nil
	case s.User:
		return a.st.SetBalances(ctx, s.Refs, s.Chains)
	default:
		return a.st.AddressBalances(ctx, s.Address, s.Chains)
	}
}

// changes returns the subject's day-over-day snapshot changes.
func (a *App) changes(ctx context.Context, s Subject) ([]store.Change, error) {
	switch {
	case s.Entity != "":
		cs, err := a.st.EntityChanges(ctx, s.Entity, s.Chains)
		if err != nil || len(s.Refs) == 0 {
			return cs, err
		}
		extra, err := a.st.SetChanges(ctx, s.Refs, s.Chains)
		return append(cs, extra...), err
	case len(s.Refs) == 0 || len(s.Chains) == 0:
		return nil, nil
	default:
		return a.st.SetChanges(ctx, s.Refs, s.Chains)
	}
}

// mergeHoldings sums holdings of the same (chain, token), keeping first-seen order.
func mergeHoldings(hs []store.Holding) []store.Holding {
	idx := map[[2]string]int{}
	var out []store.Holding
	for _, h := range hs {
		k := [2]string{h.Chain, h.Token}
		if i, ok := idx[k]; ok {
			out[i].Balance = new(big.Int).Add(out[i].Balance, h.Balance)
			continue
		}
		idx[k] = len(out)
		out = append(out, store.Holding{Chain: h.Chain, Token: h.Token, Balance: new(big.Int).Set(h.Balance)})
	}
	return out
}
