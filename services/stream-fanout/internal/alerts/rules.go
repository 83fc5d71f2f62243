package alerts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
)

// States of an alert.
const (
	stateActive   = "active"   // compiled and matched
	stateDisabled = "disabled" // disabled by its owner: matches nothing
	stateInvalid  = "invalid"  // its fields do not decode or name what does not exist: matches nothing
	statePending  = "pending"  // not compiled yet (user-labels failed): matches nothing until it is
)

// rule is an alert as the deliverer holds it.
type rule struct {
	alert Alert
	state string
	// retry marks a rule whose compile failed on user-labels: the next reload compiles it again.
	retry bool
}

// invalidError is an alert that cannot match: its fields are not a valid filter, its webhook URL
// is not one, or it names an entity or type that does not exist for its owner.
type invalidError struct {
	reason string // decode, unknown_name, url
	err    error
}

func (e *invalidError) Error() string { return e.err.Error() }

// compiler builds alerts into the engine's filters, resolving what they name as their owner's,
// as a subscribe of the owner's would be resolved.
type compiler struct {
	labels ws.Labels
	eng    *engine.Engine
	served *chains.Set
}

// compile builds a's filter. An *invalidError is an alert that matches nothing until it is
// changed; any other error is user-labels failing (the alert is compiled again later).
func (c *compiler) compile(ctx context.Context, a Alert) (*engine.Filter, error) {
	if err := checkURL(a.Method); err != nil {
		return nil, &invalidError{"url", err}
	}
	raw, err := rawOf(a)
	if err != nil {
		return nil, &invalidError{"decode", err}
	}
	spec, err := filter.Parse(raw, filter.Options{Served: c.served})
	if err != nil {
		return nil, &invalidError{"decode", err}
	}
	named := spec.Names()
	resolved, err := c.resolve(ctx, a, named)
	if err != nil {
		return nil, err
	}
	known, err := c.known(ctx, named)
	if err != nil {
		return nil, err
	}
	for _, n := range named {
		switch r := n.Ref; {
		case r.Kind == filter.KindUserEntity && resolved[r.Value] == nil:
			return nil, &invalidError{"unknown_name", filter.UnknownUserEntity(n)}
		case r.Kind == filter.KindEntity && len(resolved[r.Value]) > 0:
			// The owner's additions make it an entity of theirs, as in /transfers.
		default:
			if err := filter.CheckName(n, known); err != nil {
				return nil, &invalidError{"unknown_name", err}
			}
		}
	}
	return engine.Compile(strconv.FormatInt(a.ID, 10), spec, resolved), nil
}

// checkURL refuses a method that is no absolute http(s) URL (user-labels checks it when it is
// stored; a deliverer posts nowhere else).
func checkURL(m Method) error {
	u, err := url.Parse(m.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("method %d: the webhook URL is not an absolute http(s) URL without userinfo", m.ID)
	}
	return nil
}

// rawOf is a's filter fields as a stream filter's JSON would carry them.
func rawOf(a Alert) (filter.Raw, error) {
	r := filter.Raw{Base: a.Base, From: a.From, To: a.To, Tokens: a.Tokens, Chains: a.Chains}
	for _, b := range []struct {
		name string
		v    string
		dst  **filter.Number
	}{{"usdGte", a.USDGte, &r.USDGte}, {"usdLte", a.USDLte, &r.USDLte}, {"valueGte", a.ValueGte, &r.ValueGte}, {"valueLte", a.ValueLte, &r.ValueLte}} {
		if b.v == "" {
			continue
		}
		var n filter.Number
		if err := n.UnmarshalJSON([]byte(strconv.Quote(b.v))); err != nil {
			return r, &filter.Error{Field: b.name, Rule: err.Error()}
		}
		*b.dst = &n
	}
	return r, nil
}

// ownerContext is ctx acting for a's owner toward user-labels.
func ownerContext(ctx context.Context, a Alert) context.Context {
	return httpx.WithIdentity(ctx, ownerIdentity(a))
}

// ownerIdentity is who a's reads of user-labels and its credits are for: its owner, under a key
// id of the alert's own (a webhook is sent by no API key), with the org id and tier of the caller
// who last wrote the alert, so that the meter's events bill an org member's deliveries to the
// org at that tier, as that caller's stream would be (no org id: the user alone).
func ownerIdentity(a Alert) ws.Identity {
	key := "alert:" + strconv.FormatInt(a.ID, 10)
	if a.OrgID != "" {
		// The edge's hourly usage rows are per key id, hour and route, each under one org: an
		// alert whose payer org changes (replaced by a member of another org) is another key.
		key += "@" + a.OrgID
	}
	return ws.Identity{KeyID: key, UserID: a.Owner, OrgID: a.OrgID, Tier: a.Tier}
}

// resolve reads, for a's owner, the addresses of the user entities named (absent: the owner
// has no such entity) and the owner's additions to the operator entities named, by id, in one
// call per kind.
func (c *compiler) resolve(ctx context.Context, a Alert, named []filter.Named) (map[string][]string, error) {
	var users, ents []string
	for _, n := range named {
		switch n.Ref.Kind {
		case filter.KindUserEntity:
			if !slices.Contains(users, n.Ref.Value) {
				users = append(users, n.Ref.Value)
			}
		case filter.KindEntity:
			if !slices.Contains(ents, n.Ref.Value) {
				ents = append(ents, n.Ref.Value)
			}
		}
	}
	out := map[string][]string{}
	if len(users)+len(ents) == 0 {
		return out, nil
	}
	if c.labels == nil {
		return nil, errors.New("user-labels is not configured")
	}
	octx := ownerContext(ctx, a)
	if len(users) > 0 {
		got, err := c.labels.Entities(octx, users)
		if err != nil {
			return nil, fmt.Errorf("user entities of %s: %w", a.Owner, err)
		}
		for _, id := range users {
			if ue, ok := got[strings.ToLower(id)]; ok {
				out[id] = normalized(ue.Addresses)
			}
		}
	}
	if len(ents) > 0 {
		got, err := c.labels.Additions(octx, ents)
		if err != nil {
			return nil, fmt.Errorf("additions of %s: %w", a.Owner, err)
		}
		for _, id := range ents {
			out[id] = normalized(got[id])
		}
	}
	return out, nil
}

// normalized is the addresses of m (by chain type) in the transfer topic's canonical form.
func normalized(m map[string][]string) []string {
	out := []string{}
	for ct, as := range m {
		for _, a := range as {
			out = append(out, render.NormalizeAddress(ct, a))
		}
	}
	return out
}

// known asks the read model, in one call on the engine, about the operator entities, deposit
// services and entity types named.
func (c *compiler) known(ctx context.Context, named []filter.Named) (engine.Names, error) {
	var ids []string
	for _, n := range named {
		if n.Ref.Kind == filter.KindEntity || n.Ref.Kind == filter.KindDeposit {
			ids = append(ids, n.Ref.Value)
		}
	}
	var known engine.Names
	if !c.eng.Do(ctx, func() { known = c.eng.KnownNames(ids) }) {
		return known, ctx.Err()
	}
	return known, nil
}
