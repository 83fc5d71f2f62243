package app

import (
	"errors"
	"strings"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
)

// Target is one address on one chain, normalised.
type Target struct {
	Chain     string
	ChainType chains.Type
	Address   string
}

// Key is the attribution key "<chainType>:<address>".
func (t Target) Key() string { return string(t.ChainType) + ":" + t.Address }

// ParseTarget reads an address path parameter and the optional chain query parameter. With a
// chain, the address must be valid for that chain's type; without one, the chain type is
// detected from the format and the first configured chain of that type is used. An unknown or
// unconfigured chain is a 400 naming the parameter; an address valid on no (or not that) chain
// is a 404, as API.md asks for an unknown address format.
func ParseTarget(set *chains.Set, raw, chain string) (Target, error) {
	if chain != "" {
		cs, err := set.Resolve([]string{chain})
		if err != nil {
			return Target{}, invalid("chain", "%v", err)
		}
		c := cs[0]
		n, err := address.Normalize(c.Type, raw)
		if err != nil {
			return Target{}, notAddress(err)
		}
		return Target{Chain: c.Name, ChainType: c.Type, Address: n}, nil
	}
	for _, t := range address.DetectTypes(raw) {
		c, ok := firstOfType(set, t)
		if !ok {
			continue
		}
		n, err := address.Normalize(t, raw)
		if err != nil {
			return Target{}, notAddress(err)
		}
		return Target{Chain: c.Name, ChainType: t, Address: n}, nil
	}
	return Target{}, notFound("address", "address %q has the format of no chain configured on this deployment", short(raw))
}

func firstOfType(set *chains.Set, t chains.Type) (chains.Chain, bool) {
	for _, c := range set.Chains() {
		if c.Type == t {
			return c, true
		}
	}
	return chains.Chain{}, false
}

// ParseTargetsAll returns the address on every configured chain where its format is valid, in
// catalogue order, restricted to the chains in only when given (the chains and chain
// parameters); none is a 404, as ParseTarget answers an address outside its chain.
func ParseTargetsAll(set *chains.Set, raw string, only map[string]bool) ([]Target, error) {
	var out []Target
	for _, t := range address.DetectTypes(raw) {
		n, err := address.Normalize(t, raw)
		if err != nil {
			continue
		}
		for _, c := range chains.OfType(set.Chains(), t) {
			if len(only) == 0 || only[c.Name] {
				out = append(out, Target{Chain: c.Name, ChainType: t, Address: n})
			}
		}
	}
	switch {
	case len(out) > 0:
		return out, nil
	case len(only) > 0:
		names := make([]string, 0, len(only))
		for _, c := range set.Chains() { // catalogue order, so the message is stable
			if only[c.Name] {
				names = append(names, c.Name)
			}
		}
		return nil, notFound("address", "address %q is not valid on the requested chains (%s)", short(raw), strings.Join(names, ","))
	}
	return nil, notFound("address", "address %q has the format of no chain configured on this deployment", short(raw))
}

// ParseChainAddress reads a {chain}/{address} pair of path parameters: an unknown or
// unconfigured chain is a 400, an address invalid for the chain a 404.
func ParseChainAddress(set *chains.Set, chain, raw string) (Target, error) {
	cs, err := set.Resolve([]string{chain})
	if err != nil {
		return Target{}, invalid("chain", "%v", err)
	}
	n, err := address.Normalize(cs[0].Type, raw)
	if err != nil {
		return Target{}, notAddress(err)
	}
	return Target{Chain: cs[0].Name, ChainType: cs[0].Type, Address: n}, nil
}

func notAddress(err error) error {
	var ae *address.Error
	if errors.As(err, &ae) {
		return notFound("address", "%s", ae.Error())
	}
	return notFound("address", "%v", err)
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
