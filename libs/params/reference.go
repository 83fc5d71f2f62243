package params

import (
	"regexp"
	"slices"
	"strings"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
)

// RefKind is what one value of an address-or-entity field (base, from, to) names.
type RefKind int

// Reference kinds.
const (
	RefAddress    RefKind = iota // an address; Reference.Addresses holds its canonical forms
	RefEntity                    // an operator entity id (slug)
	RefUserEntity                // a caller's user entity id (UUID), lower-cased
	RefType                      // type:<entityType>
	RefDeposit                   // deposit:<entityId>
)

// Reference is one parsed value of an address-or-entity field.
type Reference struct {
	Kind      RefKind
	Value     string   // the entity id, entity type, or the address as given
	Addresses []string // RefAddress: canonical forms, one per chain type it is valid for
	Negate    bool     // a leading ! (an exclusion)
}

var (
	userEntityRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	entityTypeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
)

// ParseReference parses one value of field name with the syntax of GET /transfers' and the
// stream filters' base, from and to: an address, an operator entity id, a user entity id, and,
// when prefixes is set, type:<entityType> and deposit:<entityId>; a leading ! excludes when
// negation is set. Names are checked for their form only (whether an entity exists is for the
// reader to decide). The error is an *Error naming name, in the words those parsers use.
func ParseReference(name, v string, negation, prefixes bool) (Reference, error) {
	var r Reference
	if strings.HasPrefix(v, "!") {
		if !negation {
			return r, Errorf(name, "a leading ! (exclusion) is only allowed in from and to")
		}
		r.Negate = true
		v = strings.TrimSpace(v[1:])
	}
	if kind, rest, ok := strings.Cut(v, ":"); ok && (kind == "type" || kind == "deposit") {
		if !prefixes {
			return r, Errorf(name, "%s: references are only allowed in from and to", kind)
		}
		if kind == "type" {
			if !entityTypeRE.MatchString(rest) {
				return r, Errorf(name, "type:%q is not an entity type such as type:cex", Trunc(rest))
			}
			r.Kind, r.Value = RefType, rest
			return r, nil
		}
		if !EntityID.MatchString(rest) {
			return r, Errorf(name, "deposit:%q does not name an entity id such as deposit:binance", Trunc(rest))
		}
		r.Kind, r.Value = RefDeposit, rest
		return r, nil
	}
	if ts := address.DetectTypes(v); len(ts) > 0 {
		r.Kind, r.Value = RefAddress, v
		for _, t := range ts {
			a, err := address.Normalize(t, v)
			if err != nil {
				return r, Errorf(name, "%v", err)
			}
			if !slices.Contains(r.Addresses, a) {
				r.Addresses = append(r.Addresses, a)
			}
		}
		return r, nil
	}
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		_, err := address.Normalize(chains.TypeEVM, v)
		return r, Errorf(name, "%v", err)
	}
	switch {
	case userEntityRE.MatchString(v):
		r.Kind, r.Value = RefUserEntity, strings.ToLower(v)
	case EntityID.MatchString(v):
		r.Kind, r.Value = RefEntity, v
	default:
		return r, Errorf(name, "%s", NotReference(v, Trunc(v), prefixes))
	}
	return r, nil
}

// ParseToken parses one value of a tokens field (GET /transfers, stream filters): a token
// contract address (its canonical form in address) or a pricing id (in pricingID). The error is
// an *Error naming name.
func ParseToken(name, v string) (addr, pricingID string, err error) {
	if ts := address.DetectTypes(v); len(ts) > 0 {
		a, err := address.Normalize(ts[0], v)
		if err != nil {
			return "", "", Errorf(name, "%v", err)
		}
		return a, "", nil
	}
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		_, err := address.Normalize(chains.TypeEVM, v)
		return "", "", Errorf(name, "%v", err)
	}
	if !EntityID.MatchString(v) {
		return "", "", Errorf(name, "%q is neither a token contract address nor a pricing id", Trunc(v))
	}
	return "", v, nil
}
