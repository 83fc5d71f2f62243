// Package filter parses and validates stream filters: the JSON a client sends in a subscribe
// message or a v2 stream body, with the value syntax of GET /transfers (addresses, entity ids,
// type:<entityType>, deposit:<entityId>, token contracts or pricing ids, chains, base, usdGte).
package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
)

// MinUSDAlone is the smallest usdGte a filter without any address, entity, entity type, deposit
// service or token may have: such a filter is a candidate for every transfer (the engine indexes
// it by nothing else), so it must be rare.
const MinUSDAlone = 10_000_000

// MaxValues is the most values one list of a filter may hold.
const MaxValues = 100

// Kind is what a reference names: libs/params' reference kinds, which GET /transfers' and the
// alert rules' parsers share.
type Kind = params.RefKind

// Reference kinds.
const (
	KindAddress    = params.RefAddress    // an address; Addresses holds its canonical forms
	KindEntity     = params.RefEntity     // an operator entity id (slug)
	KindUserEntity = params.RefUserEntity // a caller's user entity id (UUID)
	KindType       = params.RefType       // type:<entityType>
	KindDeposit    = params.RefDeposit    // deposit:<entityId>
)

// Ref is one value of base, from, to or counterparties.
type Ref = params.Reference

// Token is one value of tokens: a contract address or a pricing id.
type Token struct {
	Address   string
	PricingID string
}

// Spec is a validated filter.
type Spec struct {
	Base           []Ref
	Flow           string // in, out, self, all
	From, To       []Ref
	Counterparties []Ref
	Tokens         []Token
	Chains         []string
	USDGte, USDLte *float64
	ValGte, ValLte *float64
}

// Error is a filter the rules refuse; its message names the field and the rule.
type Error struct{ Field, Rule string }

func (e *Error) Error() string { return e.Field + ": " + e.Rule }

func errf(field, format string, args ...any) error {
	return &Error{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// Raw is a filter as JSON carries it. List fields take an array of strings or one
// comma-separated string; numbers take a JSON number or a decimal string.
type Raw struct {
	From           List    `json:"from,omitempty"`
	To             List    `json:"to,omitempty"`
	Chains         List    `json:"chains,omitempty"`
	Tokens         List    `json:"tokens,omitempty"`
	Base           List    `json:"base,omitempty"`
	Counterparties List    `json:"counterparties,omitempty"`
	Flow           string  `json:"flow,omitempty"`
	USDGte         *Number `json:"usdGte,omitempty"`
	USDLte         *Number `json:"usdLte,omitempty"`
	ValueGte       *Number `json:"valueGte,omitempty"`
	ValueLte       *Number `json:"valueLte,omitempty"`
}

// List is a JSON array of strings or one comma-separated string.
type List []string

// UnmarshalJSON accepts ["a","b"], "a,b" and null.
func (l *List) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = splitList(s)
		return nil
	}
	var arr []string
	if err := json.Unmarshal(b, &arr); err != nil {
		return fmt.Errorf("want an array of strings or a comma-separated string")
	}
	var out []string
	for _, s := range arr {
		out = append(out, splitList(s)...)
	}
	*l = out
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Number is a JSON number or a decimal string.
type Number float64

// UnmarshalJSON accepts 5, 5.5 and "5.5". Its error is the rule broken, worded for a client and
// naming the value as sent: `must be a finite number, got 1e999` (a value out of float64's range
// or infinite), `must be a number or a decimal string, got "abc"`.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := strings.Trim(string(b), `"`)
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case (err == nil || errors.Is(err, strconv.ErrRange)) && math.IsInf(f, 0):
		return fmt.Errorf("must be a finite number, got %s", short(string(b)))
	case err != nil || math.IsNaN(f):
		return fmt.Errorf("must be a number or a decimal string, got %s", short(string(b)))
	}
	*n = Number(f)
	return nil
}

// Options say which fields a parse accepts.
type Options struct {
	// Served are the chains this deployment serves (nil: every known chain).
	Served *chains.Set
}

// Parse validates r.
func Parse(r Raw, o Options) (Spec, error) {
	var s Spec
	var err error
	if s.Chains, err = parseChains(r.Chains, o.Served); err != nil {
		return s, err
	}
	if s.Base, err = refs("base", r.Base, false, false); err != nil {
		return s, err
	}
	if s.From, err = refs("from", r.From, true, true); err != nil {
		return s, err
	}
	if s.To, err = refs("to", r.To, true, true); err != nil {
		return s, err
	}
	if s.Counterparties, err = refs("counterparties", r.Counterparties, false, false); err != nil {
		return s, err
	}
	if len(s.Counterparties) > 0 && len(s.Base) == 0 {
		return s, errf("counterparties", "only transfers between base and these; give base too")
	}
	if s.Tokens, err = tokens(r.Tokens); err != nil {
		return s, err
	}
	s.Flow = r.Flow
	switch s.Flow {
	case "":
		s.Flow = "all"
	case "in", "out", "self", "all":
	default:
		return s, errf("flow", "must be one of in, out, self, all")
	}
	if len(s.Base) == 0 && s.Flow != "all" {
		return s, errf("flow", "is relative to base; give base too")
	}
	if s.USDGte, s.USDLte, err = bounds("usdGte", "usdLte", r.USDGte, r.USDLte); err != nil {
		return s, err
	}
	if s.ValGte, s.ValLte, err = bounds("valueGte", "valueLte", r.ValueGte, r.ValueLte); err != nil {
		return s, err
	}
	if !s.Selective() && (s.USDGte == nil || *s.USDGte < MinUSDAlone) {
		return s, errf("filters", "give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least %d", MinUSDAlone)
	}
	return s, nil
}

// Selective reports whether s names at least one address, entity, entity type (type:), deposit
// service (deposit:) or token a transfer must involve (negations do not count: they narrow
// nothing down). Each of these is a key the engine indexes the filter by, so it is offered only
// the transfers that touch it; how many those are (type:cex is a busy one) is bounded by the
// key's stream quota, each delivery being charged, as API.md's rule has it (any from or to).
func (s Spec) Selective() bool {
	return len(s.Base) > 0 || len(s.Tokens) > 0 || positive(s.From) || positive(s.To)
}

func positive(rs []Ref) bool {
	for _, r := range rs {
		if !r.Negate {
			return true
		}
	}
	return false
}

func bounds(gteName, lteName string, gte, lte *Number) (*float64, *float64, error) {
	var g, l *float64
	if gte != nil {
		v := float64(*gte)
		if v < 0 {
			return nil, nil, errf(gteName, "must not be negative")
		}
		g = &v
	}
	if lte != nil {
		v := float64(*lte)
		if v < 0 {
			return nil, nil, errf(lteName, "must not be negative")
		}
		l = &v
	}
	if g != nil && l != nil && *g > *l {
		return nil, nil, errf(gteName, "is greater than %s", lteName)
	}
	return g, l, nil
}

func parseChains(vals []string, served *chains.Set) ([]string, error) {
	if len(vals) > MaxValues {
		return nil, errf("chains", "more than %d values", MaxValues)
	}
	for _, v := range vals {
		if _, ok := chains.Lookup(v); !ok {
			return nil, errf("chains", "%q is not a known chain", short(v))
		}
		if served != nil && !served.Has(v) {
			return nil, errf("chains", "%q is not served by this deployment", short(v))
		}
	}
	return vals, nil
}

func refs(name string, vals []string, negation, prefixes bool) ([]Ref, error) {
	if len(vals) > MaxValues {
		return nil, errf(name, "more than %d values", MaxValues)
	}
	out := make([]Ref, 0, len(vals))
	for _, v := range vals {
		r, err := ParseRef(name, v, negation, prefixes)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseRef parses one reference of field name, as GET /transfers does (libs/params'
// ParseReference), its error a filter *Error.
func ParseRef(name, v string, negation, prefixes bool) (Ref, error) {
	r, err := params.ParseReference(name, v, negation, prefixes)
	return r, asFilterError(err)
}

// asFilterError is err, a libs/params *Error, as a filter *Error naming the same field.
func asFilterError(err error) error {
	var pe *params.Error
	if errors.As(err, &pe) {
		return &Error{Field: pe.Param, Rule: pe.Rule}
	}
	return err
}

func tokens(vals []string) ([]Token, error) {
	if len(vals) > MaxValues {
		return nil, errf("tokens", "more than %d values", MaxValues)
	}
	out := make([]Token, 0, len(vals))
	for _, v := range vals {
		a, id, err := params.ParseToken("tokens", v)
		if err != nil {
			return nil, asFilterError(err)
		}
		out = append(out, Token{Address: a, PricingID: id})
	}
	return out, nil
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
