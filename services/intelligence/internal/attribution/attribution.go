// Package attribution holds the intelligence domain types (entities, resolved address
// attributions, tags) and the in-memory AttributionCache that serves address lookups.
package attribution

import (
	"regexp"
	"strings"
)

// Entity is an operator entity.
type Entity struct {
	ID          string
	Name        string
	Type        string
	Note        string
	Description string
	Website     string
	Twitter     string
	LinkedIn    string
	Service     string
	// Version is that of the entity's details: it grows whenever they (Tags included) change.
	Version int64
	// Tags are the entity's populated tags as the store keeps them (its addresses' tags that
	// propagate to entities, by rank); set where the entity is read for publication only.
	Tags []PopulatedTag
}

// Address is the resolved attribution of one address on a chain type.
type Address struct {
	ChainType        string
	Address          string
	EntityID         string // operator entity; "" when none
	Label            string
	Confidence       float32
	Source           string
	PredictedEntity  string
	DepositServiceID string
	IsContract       bool
	ClusterIDs       []string
	Version          int64
}

// Key is "<chainType>:<address>", the attribution topic's record key.
func Key(chainType, address string) string { return chainType + ":" + address }

// Tag is a tag definition.
type Tag struct {
	ID              string
	Label           string
	Rank            int
	DisablePage     bool
	ExcludeEntities bool
	Chain           string
}

// PopulatedTag is a tag with one parameter value.
type PopulatedTag struct {
	Tag    Tag
	Params string
}

// PopulatedLabel is the tag's label with params filled in: "{param}" in the label is replaced
// by params; a label without the placeholder stays as it is.
func (t Tag) PopulatedLabel(params string) string {
	if strings.Contains(t.Label, "{param}") {
		return strings.ReplaceAll(t.Label, "{param}", params)
	}
	return t.Label
}

var entityIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,127}$`)

// ValidEntityID reports whether id is a valid operator entity id (a slug, docs/contracts.md).
func ValidEntityID(id string) bool { return entityIDRE.MatchString(id) }

var slugUnsafe = regexp.MustCompile(`[^a-z0-9_.-]+`)

// Slug turns a free-form id into an operator entity id ("" when nothing usable is left).
func Slug(s string) string {
	s = strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(strings.TrimSpace(s)), "-"), "-_.")
	if len(s) > 128 {
		s = s[:128]
	}
	if !ValidEntityID(s) {
		return ""
	}
	return s
}
