package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
)

// ChainTypes are the chain types a deployment accepts labels and entity addresses for: the types
// of its configured chains. The zero value accepts none; use NewChainTypes.
type ChainTypes struct {
	types []chains.Type
	names string // "evm, bitcoin, ..." for error messages
}

// NewChainTypes returns the chain types of the chains in set (every chain type when set is nil).
func NewChainTypes(set *chains.Set) ChainTypes {
	var ct ChainTypes
	for _, t := range chains.Types {
		if set == nil || len(chains.OfType(set.Chains(), t)) > 0 {
			ct.types = append(ct.types, t)
		}
	}
	names := make([]string, len(ct.types))
	for i, t := range ct.types {
		names[i] = string(t)
	}
	ct.names = strings.Join(names, ", ")
	return ct
}

// Parse returns the chain type named s, or an error naming the accepted ones.
func (ct ChainTypes) Parse(s string) (chains.Type, error) {
	for _, t := range ct.types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown chain type %q (want one of %s)", params.Trunc(s), ct.names)
}

// NormalizeRef validates address for chainType and returns its canonical form. The error is
// worded for the caller (it names the chain type and what is wrong) without a field name.
func (ct ChainTypes) NormalizeRef(chainType, addr string) (AddressRef, error) {
	t, err := ct.Parse(chainType)
	if err != nil {
		return AddressRef{}, err
	}
	norm, err := address.Normalize(t, addr)
	if err != nil {
		var ae *address.Error
		if errors.As(err, &ae) {
			return AddressRef{}, ae
		}
		return AddressRef{}, fmt.Errorf("invalid %s address: %w", t, err)
	}
	return AddressRef{ChainType: string(t), Address: norm}, nil
}

// ParseLabelID parses a label id "<address>:<chainType>" (the chain type follows the last
// colon, since TON raw addresses contain one) and normalises the address.
func (ct ChainTypes) ParseLabelID(id string) (AddressRef, error) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return AddressRef{}, fmt.Errorf("%q is not <address>:<chainType>", params.Trunc(id))
	}
	return ct.NormalizeRef(id[i+1:], id[:i])
}

// ParseLabelIDs parses label ids ("<address>:<chainType>") named by param, dropping
// duplicates. Errors name param, and the item's index when indexed is set.
func (ct ChainTypes) ParseLabelIDs(param string, ids []string, indexed bool) ([]AddressRef, error) {
	if len(ids) == 0 {
		return nil, httpx.BadRequest("%s: required (comma-separated <address>:<chainType> values)", param)
	}
	refs := make([]AddressRef, 0, len(ids))
	seen := make(map[AddressRef]bool, len(ids))
	for i, id := range ids {
		ref, err := ct.ParseLabelID(id)
		if err != nil {
			if indexed {
				return nil, httpx.BadRequest("%s[%d]: %v", param, i, err)
			}
			return nil, httpx.BadRequest("%s: %v", param, err)
		}
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// LabelInput is a label body whose fields were all present.
type LabelInput struct {
	Name, Note, Address, ChainType string
}

// ValidateLabel checks in against the limits and normalises its address. path prefixes the
// field names in the error ("labels[3]"), or is empty.
func (ct ChainTypes) ValidateLabel(path string, in LabelInput) (Label, error) {
	if err := checkText(path, "name", in.Name, MaxNameRunes, true); err != nil {
		return Label{}, err
	}
	if err := checkText(path, "note", in.Note, MaxNoteRunes, false); err != nil {
		return Label{}, err
	}
	if _, err := ct.Parse(in.ChainType); err != nil {
		return Label{}, httpx.BadRequest("%s: %v", field(path, "chainType"), err)
	}
	ref, err := ct.NormalizeRef(in.ChainType, in.Address)
	if err != nil {
		return Label{}, httpx.BadRequest("%s: %v", field(path, "address"), err)
	}
	return Label{Name: in.Name, Note: in.Note, Address: ref.Address, ChainType: ref.ChainType}, nil
}

// EntityBody is an entity body as decoded: Addresses nil means the field was absent.
type EntityBody struct {
	Name      string
	Note      string
	Shareable *bool
	Addresses map[string][]string
}

// ValidateEntity checks an entity body (POST, PUT) against the limits. path prefixes the field
// names in the error ("entities[1]"), or is empty.
func (ct ChainTypes) ValidateEntity(path string, b EntityBody) (EntityInput, error) {
	if err := checkText(path, "name", b.Name, MaxNameRunes, false); err != nil {
		return EntityInput{}, err
	}
	if err := checkText(path, "note", b.Note, MaxNoteRunes, false); err != nil {
		return EntityInput{}, err
	}
	refs, err := ct.ValidateAddresses(path, b.Addresses)
	if err != nil {
		return EntityInput{}, err
	}
	return EntityInput{Name: b.Name, Note: b.Note, Shareable: b.Shareable, Addresses: refs}, nil
}

// ValidateAddresses checks an addresses object {chainType: [address]}: it must be present, name
// known chain types, hold valid addresses and at most MaxEntityAddresses distinct ones. The
// result is canonical, distinct and sorted by chain type then address.
func (ct ChainTypes) ValidateAddresses(path string, m map[string][]string) ([]AddressRef, error) {
	f := field(path, "addresses")
	if m == nil {
		return nil, httpx.BadRequest("%s: required (an object {chainType: [address, ...]})", f)
	}
	keys := make([]string, 0, len(m))
	total := 0
	for k, v := range m {
		keys = append(keys, k)
		total += len(v)
	}
	slices.Sort(keys)
	refs := make([]AddressRef, 0, min(total, 4*MaxEntityAddresses))
	seen := make(map[AddressRef]bool, len(refs))
	for _, k := range keys {
		if _, err := ct.Parse(k); err != nil {
			return nil, httpx.BadRequest("%s: %v", f, err)
		}
		if m[k] == nil { // null, as "addresses": null is, not an empty list that would empty the set
			return nil, httpx.BadRequest("%s.%s: must be an array of addresses, not null", f, k)
		}
		for i, a := range m[k] {
			ref, err := ct.NormalizeRef(k, a)
			if err != nil {
				return nil, httpx.BadRequest("%s.%s[%d]: %v", f, k, i, err)
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	if len(refs) > MaxEntityAddresses {
		return nil, httpx.BadRequest("%s: at most %d addresses per entity (got %d distinct)", f, MaxEntityAddresses, len(refs))
	}
	SortRefs(refs)
	return refs, nil
}

// SortRefs sorts by chain type, then address.
func SortRefs(refs []AddressRef) {
	slices.SortFunc(refs, func(a, b AddressRef) int {
		if c := strings.Compare(a.ChainType, b.ChainType); c != 0 {
			return c
		}
		return strings.Compare(a.Address, b.Address)
	})
}

func checkText(path, name, v string, max int, required bool) error {
	if required && v == "" {
		return httpx.BadRequest("%s: must not be empty", field(path, name))
	}
	if !utf8.ValidString(v) {
		return httpx.BadRequest("%s: must be valid UTF-8", field(path, name))
	}
	if n := utf8.RuneCountInString(v); n > max {
		return httpx.BadRequest("%s: at most %d characters (got %d)", field(path, name), max, n)
	}
	return nil
}

func field(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
