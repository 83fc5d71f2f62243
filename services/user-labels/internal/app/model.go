// Package app is the user-labels service's logic: each user's private labels of addresses, their
// custom entities, and their additions to operator entities. It validates every input against
// the API's limits, normalises addresses with libs/address, and scopes every operation to one
// user (labels and entities belong to the user, never to a key or an org). The store behind it
// is a small interface (Store) so the rules read in one place.
package app

import (
	"errors"
	"fmt"
	"time"
)

// Limits of the API (API.md, "User labels and entities").
const (
	MaxNameRunes        = 256    // label and entity names, in characters
	MaxNoteRunes        = 1024   // label and entity notes, in characters
	MaxEntityAddresses  = 100    // addresses per entity, all chain types together
	MaxLabelsPerWrite   = 10000  // labels in one POST /user/labels
	MaxEntitiesPerWrite = 1000   // entities in one POST /user/entities
	MaxLookupAddresses  = 10000  // addresses in one internal lookup
	EntityTypeUser      = "user" // the type of every user entity
)

// AddressRef names an address on a chain type. Address is canonical (libs/address).
type AddressRef struct {
	ChainType string `json:"chainType"`
	Address   string `json:"address"`
}

// Key is "<chainType>:<address>", the form used in lookup answers and events.
func (a AddressRef) Key() string { return a.ChainType + ":" + a.Address }

// Label is a user's label of an address (API.md UserLabel).
type Label struct {
	Name      string `json:"name"`
	Note      string `json:"note"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// Ref is the address the label is about.
func (l Label) Ref() AddressRef { return AddressRef{ChainType: l.ChainType, Address: l.Address} }

// Entity is a user's custom entity (API.md UserEntity). Addresses is nil when it was not asked
// for (it is then omitted from JSON) and never nil otherwise.
type Entity struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Note      string `json:"note"`
	Type      string `json:"type"`
	Shareable bool   `json:"shareable"`
	// LinkShareable is Shareable under the public API's name; Service is always null (a user
	// entity is nobody's service). Both are in the public Entity shape clients read.
	LinkShareable bool                `json:"linkShareable"`
	Service       *bool               `json:"service"`
	Addresses     map[string][]string `json:"addresses,omitzero"`
	CreatedAt     time.Time           `json:"createdAt"`
	UpdatedAt     time.Time           `json:"updatedAt"`
}

// SearchResult is a user's labels and entities matching a search query.
type SearchResult struct {
	Entities []Entity `json:"entities"`
	Labels   []Label  `json:"labels"`
}

// EntityInput is a validated entity body: name and note within limits, addresses canonical,
// distinct, sorted and at most MaxEntityAddresses. Shareable nil means "not given".
type EntityInput struct {
	Name      string
	Note      string
	Shareable *bool
	Addresses []AddressRef
}

// EntityRef is an entity an address belongs to, as the internal lookup reports it.
type EntityRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Note string `json:"note"`
}

// LabelText is a label without its address, as the internal lookup reports it.
type LabelText struct {
	Name string `json:"name"`
	Note string `json:"note"`
}

// Lookup is a user's view of a batch of addresses, keyed by AddressRef.Key() of each address as
// the caller sent it; addresses with neither a label nor an entity are absent.
type Lookup struct {
	Labels   map[string]LabelText   `json:"labels"`
	Entities map[string][]EntityRef `json:"entities"`
	// Additions are, when the lookup asks for them (?additions=true), the user's additions to
	// every operator entity by entity id and chain type; absent when not asked or when none.
	Additions map[string]map[string][]string `json:"additions,omitempty"`
}

// Additions are a user's addresses added to one operator entity.
type Additions struct {
	EntityID  string              `json:"id"`
	Addresses map[string][]string `json:"addresses"`
}

// ErrNotFound is returned by the store when a label or entity does not exist for the user
// (whether it does not exist at all or belongs to someone else is never told apart).
var ErrNotFound = errors.New("not found")

// LimitError is returned by the store when adding addresses would take an entity past Max.
type LimitError struct {
	Have, Adding, Max int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("addresses: at most %d addresses per entity; it has %d and %d more were given",
		e.Max, e.Have, e.Adding)
}

// Default caps on what one user may store (USERLABELS_MAX_LABELS_PER_USER,
// USERLABELS_MAX_ENTITIES_PER_USER). They bound every per-user cost that grows with the stored
// set: the label list, a search, a lookup index.
const (
	DefaultMaxLabelsPerUser   = 100000
	DefaultMaxEntitiesPerUser = 10000
)

// OwnerLimitError is returned by the store when a write would take the user past the cap on
// stored labels or entities; nothing is written then.
type OwnerLimitError struct {
	What   string // "labels" or "entities"
	Have   int    // stored now
	Adding int    // new ones the write would store (updates of stored ones are not counted)
	Max    int
}

func (e *OwnerLimitError) Error() string {
	return fmt.Sprintf("%s: at most %d %s per user; you have %d and this request adds %d",
		e.What, e.Max, e.What, e.Have, e.Adding)
}

// Group returns refs as {chainType: [address...]}, never nil.
func Group(refs []AddressRef) map[string][]string {
	out := make(map[string][]string)
	for _, r := range refs {
		out[r.ChainType] = append(out[r.ChainType], r.Address)
	}
	return out
}
