// Package chains is the catalogue of blockchains chainintel knows: their public names, their
// chain type (which decides the address format) and their native coin.
package chains

import (
	"fmt"
	"sort"
	"strings"
)

// Type is a family of chains that share an address format.
type Type string

// Chain types.
const (
	TypeEVM      Type = "evm"
	TypeBitcoin  Type = "bitcoin"
	TypeTron     Type = "tron"
	TypeSolana   Type = "solana"
	TypeDogecoin Type = "dogecoin"
	TypeTON      Type = "ton"
)

// Types lists every chain type in a stable order.
var Types = []Type{TypeEVM, TypeBitcoin, TypeTron, TypeSolana, TypeDogecoin, TypeTON}

// ParseType returns the chain type named s, or an error naming the accepted values.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return "", fmt.Errorf("unknown chain type %q (want one of %s)", s, strings.Join(names, ", "))
}

// Chain describes one chain. The zero value is not a valid chain.
type Chain struct {
	Name            string // public name used in the API, e.g. "ethereum"
	Type            Type
	EVMChainID      int64  // EIP-155 chain id; 0 for non-EVM chains
	NativeSymbol    string // e.g. "ETH"
	NativeName      string // e.g. "Ether"
	NativePricingID string // pricing id of the native coin, e.g. "ethereum"
	NativeDecimals  int32
}

// All is every chain the API contract names, in the contract's order.
var All = []Chain{
	{Name: "ethereum", Type: TypeEVM, EVMChainID: 1, NativeSymbol: "ETH", NativeName: "Ether", NativePricingID: "ethereum", NativeDecimals: 18},
	{Name: "polygon", Type: TypeEVM, EVMChainID: 137, NativeSymbol: "POL", NativeName: "Polygon", NativePricingID: "matic-network", NativeDecimals: 18},
	{Name: "bsc", Type: TypeEVM, EVMChainID: 56, NativeSymbol: "BNB", NativeName: "BNB", NativePricingID: "binancecoin", NativeDecimals: 18},
	{Name: "optimism", Type: TypeEVM, EVMChainID: 10, NativeSymbol: "ETH", NativeName: "Ether", NativePricingID: "ethereum", NativeDecimals: 18},
	{Name: "avalanche", Type: TypeEVM, EVMChainID: 43114, NativeSymbol: "AVAX", NativeName: "Avalanche", NativePricingID: "avalanche-2", NativeDecimals: 18},
	{Name: "arbitrum_one", Type: TypeEVM, EVMChainID: 42161, NativeSymbol: "ETH", NativeName: "Ether", NativePricingID: "ethereum", NativeDecimals: 18},
	{Name: "base", Type: TypeEVM, EVMChainID: 8453, NativeSymbol: "ETH", NativeName: "Ether", NativePricingID: "ethereum", NativeDecimals: 18},
	{Name: "bitcoin", Type: TypeBitcoin, NativeSymbol: "BTC", NativeName: "Bitcoin", NativePricingID: "bitcoin", NativeDecimals: 8},
	{Name: "tron", Type: TypeTron, NativeSymbol: "TRX", NativeName: "TRON", NativePricingID: "tron", NativeDecimals: 6},
	{Name: "solana", Type: TypeSolana, NativeSymbol: "SOL", NativeName: "Solana", NativePricingID: "solana", NativeDecimals: 9},
	{Name: "dogecoin", Type: TypeDogecoin, NativeSymbol: "DOGE", NativeName: "Dogecoin", NativePricingID: "dogecoin", NativeDecimals: 8},
	{Name: "ton", Type: TypeTON, NativeSymbol: "TON", NativeName: "Toncoin", NativePricingID: "the-open-network", NativeDecimals: 9},
}

var byName = func() map[string]Chain {
	m := make(map[string]Chain, len(All))
	for _, c := range All {
		m[c.Name] = c
	}
	return m
}()

// Lookup returns the chain with the given public name.
func Lookup(name string) (Chain, bool) {
	c, ok := byName[name]
	return c, ok
}

// ByEVMChainID returns the EVM chain with the given EIP-155 id.
func ByEVMChainID(id int64) (Chain, bool) {
	for _, c := range All {
		if c.Type == TypeEVM && c.EVMChainID == id {
			return c, true
		}
	}
	return Chain{}, false
}

// Names returns the names of the given chains in order.
func Names(cs []Chain) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// OfType returns the chains of type t among cs, in order.
func OfType(cs []Chain, t Type) []Chain {
	var out []Chain
	for _, c := range cs {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// Set is a configured subset of All, such as the chains an operator enabled.
type Set struct {
	chains []Chain
	names  map[string]bool
}

// NewSet builds a set from chain names; an empty list means every chain. Unknown names are an
// error naming them all.
func NewSet(names []string) (*Set, error) {
	if len(names) == 0 {
		names = Names(All)
	}
	s := &Set{names: make(map[string]bool, len(names))}
	var unknown []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || s.names[n] {
			continue
		}
		c, ok := Lookup(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		s.names[n] = true
		s.chains = append(s.chains, c)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown chains %s (known: %s)", strings.Join(unknown, ", "), strings.Join(Names(All), ", "))
	}
	// Keep the catalogue's order so listings are stable whatever order config gave.
	order := make(map[string]int, len(All))
	for i, c := range All {
		order[c.Name] = i
	}
	sort.SliceStable(s.chains, func(i, j int) bool { return order[s.chains[i].Name] < order[s.chains[j].Name] })
	return s, nil
}

// Chains returns the chains in the set, in catalogue order. The slice must not be modified.
func (s *Set) Chains() []Chain { return s.chains }

// Has reports whether the named chain is in the set.
func (s *Set) Has(name string) bool { return s.names[name] }

// Resolve checks requested chain names against the set: empty means every chain in the set,
// otherwise each name must be in it. The error names the first offender.
func (s *Set) Resolve(requested []string) ([]Chain, error) {
	if len(requested) == 0 {
		return s.chains, nil
	}
	out := make([]Chain, 0, len(requested))
	seen := make(map[string]bool, len(requested))
	for _, n := range requested {
		if seen[n] {
			continue
		}
		seen[n] = true
		if !s.names[n] {
			if _, known := Lookup(n); known {
				return nil, fmt.Errorf("chain %q is not configured on this deployment", n)
			}
			return nil, fmt.Errorf("unknown chain %q", n)
		}
		c, _ := Lookup(n)
		out = append(out, c)
	}
	return out, nil
}
