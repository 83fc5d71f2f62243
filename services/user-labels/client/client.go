// Package client calls the user-labels service's internal API (docs/contracts.md) for other
// services: a caller's labels and entities for a batch of addresses, a user entity's addresses,
// shareable entities, a caller's additions to operator entities, and every caller's alerts (for
// their deliverer).
//
// Caller-scoped calls act for the identity in the context (httpx.WithIdentity), which the
// edge-signed request already put there.
package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/render"
	"go.opentelemetry.io/otel/trace"
)

// AddressRef names an address on a chain type.
type AddressRef struct {
	ChainType string `json:"chainType"`
	Address   string `json:"address"`
}

// Key is the "<chainType>:<address>" form used in lookup answers.
func (a AddressRef) Key() string { return a.ChainType + ":" + a.Address }

// Label is a caller's label of an address.
type Label struct {
	Name string `json:"name"`
	Note string `json:"note"`
}

// EntityRef is a caller's entity an address belongs to.
type EntityRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Note string `json:"note"`
}

// Lookup is the caller's view of a batch of addresses, keyed by AddressRef.Key().
type Lookup struct {
	Labels   map[string]Label       `json:"labels"`
	Entities map[string][]EntityRef `json:"entities"`
	// Additions are the caller's additions to every operator entity, by entity id and chain
	// type; only LookupWithAdditions asks for them (nil otherwise, and when there are none).
	Additions map[string]map[string][]string `json:"additions,omitempty"`
}

// UserEntity is a caller's custom entity (API.md shape).
type UserEntity struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	Note          string              `json:"note"`
	Type          string              `json:"type"`
	Shareable     bool                `json:"shareable"`
	LinkShareable bool                `json:"linkShareable"`
	Addresses     map[string][]string `json:"addresses"`
	CreatedAt     time.Time           `json:"createdAt"`
	UpdatedAt     time.Time           `json:"updatedAt"`
}

// ErrNotFound means what was asked for does not exist: an entity of this caller (or a shareable
// one), or an alert (Alert).
var ErrNotFound = errors.New("not found")

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUserEntityID reports whether id has the shape of a user entity id (a UUID); operator entity
// ids are slugs and never match.
func IsUserEntityID(id string) bool { return uuidRE.MatchString(id) }

// Client is safe for concurrent use.
type Client struct{ c *httpx.InternalClient }

// New returns a client for the user-labels service at baseURL.
func New(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*Client, error) {
	c, err := httpx.NewInternalClient("user-labels", baseURL, signer, tp, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// MaxLookupBatch is the most addresses the service takes in one lookup call; Lookup splits
// bigger batches into calls of this size.
const MaxLookupBatch = 10000

// Lookup returns the caller's labels and entity memberships for addrs. Without a caller in ctx
// it returns an empty lookup and makes no call.
func (c *Client) Lookup(ctx context.Context, addrs []AddressRef) (Lookup, error) {
	if len(addrs) == 0 {
		return Lookup{Labels: map[string]Label{}, Entities: map[string][]EntityRef{}}, nil
	}
	return c.lookup(ctx, addrs, false)
}

// LookupWithAdditions is Lookup that also returns the caller's additions to every operator
// entity (Lookup.Additions), in the same call (the first, when addrs is split). It calls even
// for no addresses. A user-labels replica predating the additions answers without them, as if
// the caller had none. Without a caller in ctx it returns an empty lookup and makes no call.
func (c *Client) LookupWithAdditions(ctx context.Context, addrs []AddressRef) (Lookup, error) {
	return c.lookup(ctx, addrs, true)
}

func (c *Client) lookup(ctx context.Context, addrs []AddressRef, additions bool) (Lookup, error) {
	out := Lookup{Labels: map[string]Label{}, Entities: map[string][]EntityRef{}}
	if _, ok := httpx.IdentityFrom(ctx); !ok {
		return out, nil
	}
	for start := 0; start == 0 || start < len(addrs); start += MaxLookupBatch {
		var part Lookup
		chunk := addrs[start:min(start+MaxLookupBatch, len(addrs))]
		if chunk == nil {
			chunk = []AddressRef{} // no addresses (an additions-only call): [], not null
		}
		var q url.Values
		if additions && start == 0 {
			q = url.Values{"additions": {"true"}}
		}
		if err := c.c.Do(ctx, http.MethodPost, "/internal/lookup", q, map[string]any{"addresses": chunk}, &part); err != nil {
			return out, err
		}
		if start == 0 {
			out.Additions = part.Additions
		}
		for k, v := range part.Labels {
			out.Labels[k] = v
		}
		for k, v := range part.Entities {
			out.Entities[k] = v
		}
	}
	return out, nil
}

// Entity returns the caller's entity id, or ErrNotFound.
func (c *Client) Entity(ctx context.Context, id string) (UserEntity, error) {
	var e UserEntity
	if _, ok := httpx.IdentityFrom(ctx); !ok {
		return e, ErrNotFound
	}
	err := c.c.Do(ctx, http.MethodGet, "/internal/entities/"+url.PathEscape(id), nil, nil, &e)
	return e, notFound(err)
}

// MaxEntityBatch is the most ids the service takes in one Entities or AdditionsOf call.
const MaxEntityBatch = 1000

// Entities returns those of ids that are the caller's entities, with their addresses, keyed by
// id in lower case (as the service stores them); an id of none is absent. It makes one call per
// MaxEntityBatch distinct ids, none for no ids or without a caller in ctx.
func (c *Client) Entities(ctx context.Context, ids []string) (map[string]UserEntity, error) {
	out := map[string]UserEntity{}
	if _, ok := httpx.IdentityFrom(ctx); !ok || len(ids) == 0 {
		return out, nil
	}
	for start := 0; start < len(ids); start += MaxEntityBatch {
		var part struct {
			Entities []UserEntity `json:"entities"`
		}
		chunk := ids[start:min(start+MaxEntityBatch, len(ids))]
		if err := c.c.Do(ctx, http.MethodPost, "/internal/entities", nil, map[string]any{"ids": chunk}, &part); err != nil {
			return out, err
		}
		for _, e := range part.Entities {
			out[strings.ToLower(e.ID)] = e
		}
	}
	return out, nil
}

// SharedEntity returns entity id if it is shareable, or ErrNotFound.
func (c *Client) SharedEntity(ctx context.Context, id string) (UserEntity, error) {
	var e UserEntity
	err := c.c.Do(ctx, http.MethodGet, "/internal/shared/entities/"+url.PathEscape(id), nil, nil, &e)
	return e, notFound(err)
}

// UserLabel is one of the caller's labels with its address.
type UserLabel struct {
	Name      string `json:"name"`
	Note      string `json:"note"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// SearchResult is the caller's labels and entities matching a search query.
type SearchResult struct {
	Entities []UserEntity `json:"entities"`
	Labels   []UserLabel  `json:"labels"`
}

// Search returns the caller's labels and entities matching query (name substring or address
// prefix, case-insensitive), up to limit of each after skipping offset. Without a caller in ctx
// it returns nothing and makes no call.
func (c *Client) Search(ctx context.Context, query string, limit, offset int) (SearchResult, error) {
	out := SearchResult{Entities: []UserEntity{}, Labels: []UserLabel{}}
	if _, ok := httpx.IdentityFrom(ctx); !ok || limit == 0 {
		return out, nil
	}
	q := url.Values{"query": {query}, "limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(offset)}}
	err := c.c.Do(ctx, http.MethodGet, "/internal/search", q, nil, &out)
	return out, err
}

// Additions returns the caller's addresses added to an operator entity, by chain type.
func (c *Client) Additions(ctx context.Context, operatorEntityID string) (map[string][]string, error) {
	var out struct {
		Addresses map[string][]string `json:"addresses"`
	}
	if _, ok := httpx.IdentityFrom(ctx); !ok {
		return map[string][]string{}, nil
	}
	err := c.c.Do(ctx, http.MethodGet, "/internal/additions/"+url.PathEscape(operatorEntityID), nil, nil, &out)
	if out.Addresses == nil {
		out.Addresses = map[string][]string{}
	}
	return out.Addresses, err
}

// AdditionsOf returns the caller's additions to the operator entities ids, by entity id and
// chain type (an entity with none is absent): one call per MaxEntityBatch distinct ids, none for
// no ids or without a caller in ctx.
func (c *Client) AdditionsOf(ctx context.Context, ids []string) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	if _, ok := httpx.IdentityFrom(ctx); !ok || len(ids) == 0 {
		return out, nil
	}
	for start := 0; start < len(ids); start += MaxEntityBatch {
		var part struct {
			Additions map[string]map[string][]string `json:"additions"`
		}
		chunk := ids[start:min(start+MaxEntityBatch, len(ids))]
		if err := c.c.Do(ctx, http.MethodPost, "/internal/additions", nil, map[string]any{"ids": chunk}, &part); err != nil {
			return out, err
		}
		for k, v := range part.Additions {
			out[k] = v
		}
	}
	return out, nil
}

func notFound(err error) error {
	var ue *httpx.UpstreamError
	if errors.As(err, &ue) && ue.Status == http.StatusNotFound {
		return ErrNotFound
	}
	return err
}

// Apply adds to ai (an address of chainType) the caller's label of it and the first of the
// caller's entities holding it, as the API renders them.
func (l Lookup) Apply(ai *render.AddressInfo, chainType string) {
	key := AddressRef{ChainType: chainType, Address: ai.Address}.Key()
	label, ok := l.Labels[key]
	var ent *render.Entity
	if es := l.Entities[key]; len(es) > 0 {
		ent = render.UserEntity(es[0].ID, es[0].Name, es[0].Note)
	}
	ai.SetUser(chainType, label.Name, ok, ent)
}
