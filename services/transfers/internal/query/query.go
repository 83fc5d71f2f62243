// Package query parses the query parameters of the transfers service's public routes into plain
// structs, checking every rule API.md states. It touches no database: references to entities
// and entity types are resolved later by the app. Every error is a *params.Error naming the
// parameter, ready to be a 400.
package query

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/transfers/client"
)

// MaxWindow is how far offset + limit may reach into a result.
const MaxWindow = 10000

// MaxHourlyRange is the longest range a 1h histogram may cover.
const MaxHourlyRange = 30 * 24 * time.Hour

// Kind is what a reference names.
type Kind int

// Reference kinds.
const (
	KindAddress    Kind = iota // an address; Addresses holds its normalised forms
	KindEntity                 // an operator entity id (slug)
	KindUserEntity             // a caller's user entity id (UUID)
	KindType                   // type:<entityType>
	KindDeposit                // deposit:<entityId>
)

// Ref is one value of base, from, to or counterparties.
type Ref struct {
	Kind      Kind
	Value     string   // the entity id, entity type, or the address as given
	Addresses []string // KindAddress: its canonical forms, one per chain type it is valid for
	Types     []chains.Type
	Negate    bool
}

// Token is one value of tokens: a contract address or a pricing id.
type Token struct {
	Address   string // canonical contract address, when it is one
	PricingID string // otherwise the pricing id
}

// Transfers is a parsed GET /transfers (and, without paging, /transfers/histogram).
type Transfers struct {
	Base           []Ref
	Flow           string // in, out, self, all
	From, To       []Ref
	Counterparties []Ref
	Tokens         []Token
	Chains         []chains.Chain
	Window         params.Window
	ValueGte       *float64
	ValueLte       *float64
	USDGte         *float64
	USDLte         *float64
	SortKey        string // time, value, usd
	SortDir        string // desc, asc
	Limit          int
	Offset         int
	// IncludeCursors asks for the next page's cursor; Cursor, when set, is where this page
	// starts (cursor.go); Filter is FilterHash of the query, for the cursors it issues.
	IncludeCursors bool
	Cursor         *Cursor
	Filter         uint64
}

// Histogram is a parsed /transfers/histogram or /transfers/histogram/simple.
type Histogram struct {
	Transfers
	Granularity string // 1h or 1d
}

// Swaps is a parsed GET /swaps.
type Swaps struct {
	Base     []Ref
	Flow     string // in, out, all
	From, To []Ref
	Tokens   []Token
	Chains   []chains.Chain
	Window   params.Window
	USDGte   *float64
	USDLte   *float64
	SortKey  string // time, value (read.swapSource), usd
	SortDir  string
	Limit    int
	Offset   int
	// Senders and Receivers constrain each side as from and to do; Counterparties the side
	// other than base; Protocols the pool's protocol; Value0/Value1 each token's amount.
	Senders, Receivers                         []Ref
	Counterparties                             []Ref
	Protocols                                  []string
	Value0Gte, Value0Lte, Value1Gte, Value1Lte *float64
}

// Counterparties is a parsed /counterparties/... query.
type Counterparties struct {
	Flow     string // in, out, either
	Limit    int
	Chains   []chains.Chain
	Tokens   []Token
	Window   params.Window
	ValueGte *float64
	ValueLte *float64
	USDGte   *float64
	USDLte   *float64
	// Tags keeps the counterparties whose address carries one of these tag ids (app/tags.go).
	Tags []string
}

// Flow is a parsed /flow/... query.
type Flow struct {
	Chains []chains.Chain
	Window params.Window
}

var (
	slugRE = params.EntityID
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	typeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
)

// IsEntityID reports whether s has the shape of an operator or user entity id.
func IsEntityID(s string) bool { return slugRE.MatchString(s) || uuidRE.MatchString(s) }

// IsUserEntityID reports whether s is a user entity id (a UUID).
func IsUserEntityID(s string) bool { return uuidRE.MatchString(s) }

// Parser parses queries against the chains a deployment serves.
type Parser struct {
	Chains *chains.Set
	Now    func() time.Time
}

func (p Parser) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// known applies the shared parameter policy (params.DropUnknown): parameters the route does not
// take (allowed lists those it does) are ignored, so clients of the public API that send them
// keep working; it never fails.
func known(q url.Values, allowed ...string) error {
	params.DropUnknown(q, allowed...)
	return nil
}

var (
	timeParams      = []string{"timeLast", "timeGte", "timeLte"}
	transferFilters = append([]string{"base", "flow", "from", "to", "counterparties", "tokens", "chains",
		"valueGte", "valueLte", "usdGte", "usdLte"}, timeParams...)
	pageParams = []string{"sortKey", "sortDir", "limit", "offset"}
	// cursorPageParams are /transfers' (and /transfers/unenriched's) keyset paging (cursor.go).
	cursorPageParams = []string{"includeCursors", "cursor"}
)

// Transfers parses GET /transfers.
func (p Parser) Transfers(q url.Values) (Transfers, error) {
	if err := known(q, append(append(slices.Clone(transferFilters), pageParams...), cursorPageParams...)...); err != nil {
		return Transfers{}, err
	}
	t, err := p.transferFilters(q)
	if err != nil {
		return Transfers{}, err
	}
	if t.SortKey, err = params.Enum(q, "sortKey", "time", "time", "value", "usd"); err != nil {
		return Transfers{}, err
	}
	if t.SortDir, err = params.Enum(q, "sortDir", "desc", "desc", "asc"); err != nil {
		return Transfers{}, err
	}
	if t.Limit, t.Offset, err = page(q); err != nil {
		return Transfers{}, err
	}
	t.Filter = FilterHash(q)
	if err := paging(q, &t); err != nil {
		return Transfers{}, err
	}
	return t, nil
}

func page(q url.Values) (limit, offset int, err error) {
	if limit, err = params.Int(q, "limit", client.DefaultLimit, 1, client.MaxLimit); err != nil {
		return 0, 0, err
	}
	if offset, err = params.Int(q, "offset", 0, 0, MaxWindow); err != nil {
		return 0, 0, err
	}
	if offset+limit > MaxWindow {
		return 0, 0, params.Errorf("offset", "offset + limit must be at most %d, got %d", MaxWindow, offset+limit)
	}
	return limit, offset, nil
}

func (p Parser) transferFilters(q url.Values) (Transfers, error) {
	var t Transfers
	var err error
	if t.Chains, err = p.chains(q); err != nil {
		return t, err
	}
	if t.Base, err = p.refs(q, "base", false, false, t.Chains); err != nil {
		return t, err
	}
	if t.Flow, err = params.Enum(q, "flow", "all", "in", "out", "self", "all"); err != nil {
		return t, err
	}
	if t.From, err = p.refs(q, "from", true, true, t.Chains); err != nil {
		return t, err
	}
	if t.To, err = p.refs(q, "to", true, true, t.Chains); err != nil {
		return t, err
	}
	if t.Counterparties, err = p.refs(q, "counterparties", false, false, t.Chains); err != nil {
		return t, err
	}
	if len(t.Base) == 0 {
		if t.Flow != "all" {
			return t, params.Errorf("flow", "is relative to base; give base too")
		}
		if len(t.Counterparties) > 0 {
			return t, params.Errorf("counterparties", "selects transfers between base and these; give base too")
		}
	}
	if t.Tokens, err = tokens(q); err != nil {
		return t, err
	}
	if t.Window, err = params.TimeWindow(q, p.now()); err != nil {
		return t, err
	}
	if t.ValueGte, t.ValueLte, err = params.FloatRange(q, "valueGte", "valueLte"); err != nil {
		return t, err
	}
	if t.USDGte, t.USDLte, err = params.FloatRange(q, "usdGte", "usdLte"); err != nil {
		return t, err
	}
	return t, nil
}

// Histogram parses GET /transfers/histogram.
func (p Parser) Histogram(q url.Values) (Histogram, error) {
	if err := known(q, append(slices.Clone(transferFilters), "granularity")...); err != nil {
		return Histogram{}, err
	}
	t, err := p.transferFilters(q)
	if err != nil {
		return Histogram{}, err
	}
	h := Histogram{Transfers: t}
	if h.Granularity, err = params.Enum(q, "granularity", "1d", "1h", "1d"); err != nil {
		return Histogram{}, err
	}
	if h.Granularity == "1h" {
		from, to := h.Window.From, h.Window.To
		if to.IsZero() {
			to = p.now()
		}
		if from.IsZero() || to.Sub(from) > MaxHourlyRange {
			return Histogram{}, params.Errorf("granularity", "1h covers at most 30 days; give timeLast or timeGte/timeLte spanning 30 days or less, or use 1d")
		}
	}
	return h, nil
}

// SimpleHistogram parses GET /transfers/histogram/simple: daily buckets of base, chains, flow and
// the window (API.md). The other /transfers filters are /transfers/histogram's, which is API tier
// only: this route is public and keyless, so it ignores them like any parameter it does not take
// rather than answer a filtered histogram past the tier gate, its credits and its rate limit.
func (p Parser) SimpleHistogram(q url.Values) (Histogram, error) {
	if err := known(q, append([]string{"base", "chains", "flow"}, timeParams...)...); err != nil {
		return Histogram{}, err
	}
	t, err := p.transferFilters(q)
	if err != nil {
		return Histogram{}, err
	}
	return Histogram{Transfers: t, Granularity: "1d"}, nil
}

// Swaps parses GET /swaps.
func (p Parser) Swaps(q url.Values) (Swaps, error) {
	if err := known(q, append([]string{"base", "chains", "flow", "from", "to", "tokens", "usdGte", "usdLte",
		"senders", "receivers", "counterparties", "protocols", "value0Gte", "value0Lte", "value1Gte", "value1Lte"},
		append(slices.Clone(timeParams), pageParams...)...)...); err != nil {
		return Swaps{}, err
	}
	var s Swaps
	var err error
	if s.Chains, err = p.chains(q); err != nil {
		return s, err
	}
	if s.Base, err = p.refs(q, "base", false, false, s.Chains); err != nil {
		return s, err
	}
	if s.Flow, err = params.Enum(q, "flow", "all", "in", "out", "self", "all"); err != nil {
		return s, err
	}
	if len(s.Base) == 0 && s.Flow != "all" {
		return s, params.Errorf("flow", "is relative to base; give base too")
	}
	if s.From, err = p.refs(q, "from", true, true, s.Chains); err != nil {
		return s, err
	}
	if s.To, err = p.refs(q, "to", true, true, s.Chains); err != nil {
		return s, err
	}
	if s.Tokens, err = tokens(q); err != nil {
		return s, err
	}
	if s.Window, err = params.TimeWindow(q, p.now()); err != nil {
		return s, err
	}
	if s.USDGte, s.USDLte, err = params.FloatRange(q, "usdGte", "usdLte"); err != nil {
		return s, err
	}
	if err := p.swapFilters(q, &s); err != nil {
		return s, err
	}
	if s.SortKey, err = params.Enum(q, "sortKey", "time", "time", "value", "usd"); err != nil {
		return s, err
	}
	if s.SortDir, err = params.Enum(q, "sortDir", "desc", "desc", "asc"); err != nil {
		return s, err
	}
	if s.Limit, s.Offset, err = page(q); err != nil {
		return s, err
	}
	return s, nil
}

// Counterparties parses the query of GET /counterparties/....
func (p Parser) Counterparties(q url.Values) (Counterparties, error) {
	if err := known(q, append([]string{"flow", "limit", "chains", "tokens", "valueGte", "valueLte", "usdGte", "usdLte", "tags"}, timeParams...)...); err != nil {
		return Counterparties{}, err
	}
	var c Counterparties
	var err error
	if c.Flow, err = params.Enum(q, "flow", "either", "in", "out", "either"); err != nil {
		return c, err
	}
	if c.Limit, err = params.Int(q, "limit", 20, 1, 1000); err != nil {
		return c, err
	}
	if c.Chains, err = p.chains(q); err != nil {
		return c, err
	}
	if c.Tokens, err = tokens(q); err != nil {
		return c, err
	}
	if c.Window, err = params.TimeWindow(q, p.now()); err != nil {
		return c, err
	}
	if c.ValueGte, c.ValueLte, err = params.FloatRange(q, "valueGte", "valueLte"); err != nil {
		return c, err
	}
	if c.USDGte, c.USDLte, err = params.FloatRange(q, "usdGte", "usdLte"); err != nil {
		return c, err
	}
	if c.Tags, err = counterpartyTags(q); err != nil {
		return c, err
	}
	return c, nil
}

// Flow parses the query of GET /flow/....
func (p Parser) Flow(q url.Values) (Flow, error) {
	if err := known(q, append([]string{"chains"}, timeParams...)...); err != nil {
		return Flow{}, err
	}
	var f Flow
	var err error
	if f.Chains, err = p.chains(q); err != nil {
		return f, err
	}
	if f.Window, err = params.TimeWindow(q, p.now()); err != nil {
		return f, err
	}
	return f, nil
}

// chains returns the requested chains; nil when none were named (every configured chain).
func (p Parser) chains(q url.Values) ([]chains.Chain, error) {
	return params.Chains(q, "chains", p.Chains)
}

// MaxEntityRefs is the most entity references (operator and user entity ids, type: and
// deposit: values, distinct) one reference parameter may hold, as a stream filter's list holds
// at most 100 values; addresses count only towards params.MaxListItems. Every entity reference is
// resolved against the read model, intelligence and user-labels, in batches per request, whose
// size this bounds.
const MaxEntityRefs = 100

// refs parses a list of addresses, entity ids and (when prefixes) type:/deposit: references.
// An address must be valid for at least one of the requested chains (none requested: the
// configured ones). More than MaxEntityRefs entity references is a 400.
func (p Parser) refs(q url.Values, name string, negation, prefixes bool, cs []chains.Chain) ([]Ref, error) {
	vals, err := params.List(q, name)
	if err != nil {
		return nil, err
	}
	out := make([]Ref, 0, len(vals))
	entities := 0
	for _, v := range vals {
		r, err := ParseRef(name, v, negation, prefixes)
		if err != nil {
			return nil, err
		}
		if err := p.FitsChains(name, r, cs); err != nil {
			return nil, err
		}
		if r.Kind != KindAddress {
			entities++
		}
		out = append(out, r)
	}
	if entities > MaxEntityRefs {
		return nil, params.Errorf(name, "at most %d entity references (entity ids, type: and deposit: values), got %d", MaxEntityRefs, entities)
	}
	return out, nil
}

// AddressChainError is an address whose format fits none of the requested chains: API.md's
// "unknown address format for the chain", a 404 (internal/http) whether the address is a path
// segment or a filter's value. It wraps the *params.Error naming the parameter.
type AddressChainError struct{ Err *params.Error }

func (e *AddressChainError) Error() string { return e.Err.Error() }

// Unwrap returns the parameter error.
func (e *AddressChainError) Unwrap() error { return e.Err }

// FitsChains checks that an address reference of parameter name (a path's "address" too) is
// valid on at least one of the requested chains cs or, none requested, of the configured ones
// (as balances' address routes check theirs); other references always fit.
func (p Parser) FitsChains(name string, r Ref, cs []chains.Chain) error {
	if r.Kind != KindAddress {
		return nil
	}
	which := "requested"
	if len(cs) == 0 {
		if p.Chains == nil {
			return nil
		}
		cs, which = p.Chains.Chains(), "configured"
	}
	if validOnAny(r.Types, cs) {
		return nil
	}
	return &AddressChainError{Err: &params.Error{Param: name,
		Rule: fmt.Sprintf("address %q is not valid on the %s chains (%s)", short(r.Value), which, strings.Join(chains.Names(cs), ", "))}}
}

func validOnAny(ts []chains.Type, cs []chains.Chain) bool {
	for _, c := range cs {
		if slices.Contains(ts, c.Type) {
			return true
		}
	}
	return false
}

// ParseRef parses one reference of parameter name.
func ParseRef(name, v string, negation, prefixes bool) (Ref, error) {
	var r Ref
	if strings.HasPrefix(v, "!") {
		if !negation {
			return r, params.Errorf(name, "a leading ! (exclusion) is only allowed in from and to")
		}
		r.Negate = true
		v = strings.TrimSpace(v[1:])
	}
	if kind, rest, ok := strings.Cut(v, ":"); ok && (kind == "type" || kind == "deposit") {
		if !prefixes {
			return r, params.Errorf(name, "%s: references are only allowed in from and to", kind)
		}
		switch kind {
		case "type":
			if !typeRE.MatchString(rest) {
				return r, params.Errorf(name, "type:%q is not an entity type such as type:cex", short(rest))
			}
			r.Kind, r.Value = KindType, rest
		case "deposit":
			if !slugRE.MatchString(rest) {
				return r, params.Errorf(name, "deposit:%q does not name an entity id such as deposit:binance", short(rest))
			}
			r.Kind, r.Value = KindDeposit, rest
		}
		return r, nil
	}
	if ts := address.DetectTypes(v); len(ts) > 0 {
		r.Kind, r.Value, r.Types = KindAddress, v, ts
		for _, t := range ts {
			a, err := address.Normalize(t, v)
			if err != nil {
				return r, params.Errorf(name, "%v", err)
			}
			if !slices.Contains(r.Addresses, a) {
				r.Addresses = append(r.Addresses, a)
			}
		}
		return r, nil
	}
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		_, err := address.Normalize(chains.TypeEVM, v)
		return r, params.Errorf(name, "%v", err)
	}
	switch {
	case uuidRE.MatchString(v):
		r.Kind, r.Value = KindUserEntity, strings.ToLower(v)
	case slugRE.MatchString(v):
		r.Kind, r.Value = KindEntity, v
	default:
		return r, params.Errorf(name, "%s", params.NotReference(v, short(v), prefixes))
	}
	return r, nil
}

// tokens parses the tokens parameter.
func tokens(q url.Values) ([]Token, error) {
	vals, err := params.List(q, "tokens")
	if err != nil {
		return nil, err
	}
	out := make([]Token, 0, len(vals))
	for _, v := range vals {
		if ts := address.DetectTypes(v); len(ts) > 0 {
			a, err := address.Normalize(ts[0], v)
			if err != nil {
				return nil, params.Errorf("tokens", "%v", err)
			}
			out = append(out, Token{Address: a})
			continue
		}
		if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
			_, err := address.Normalize(chains.TypeEVM, v)
			return nil, params.Errorf("tokens", "%v", err)
		}
		if !slugRE.MatchString(v) {
			return nil, params.Errorf("tokens", "%q is neither a token contract address nor a pricing id", short(v))
		}
		out = append(out, Token{PricingID: v})
	}
	return out, nil
}

// PathAddress parses an {address} path segment: its canonical forms and chain types. ok is
// false when it is no known address format (a 404).
func PathAddress(v string) (Ref, bool) {
	ts := address.DetectTypes(v)
	if len(ts) == 0 {
		return Ref{}, false
	}
	r := Ref{Kind: KindAddress, Value: v, Types: ts}
	for _, t := range ts {
		a, err := address.Normalize(t, v)
		if err != nil {
			return Ref{}, false
		}
		if !slices.Contains(r.Addresses, a) {
			r.Addresses = append(r.Addresses, a)
		}
	}
	return r, true
}

// PathEntity parses an {entity} path segment. ok is false when it cannot be an entity id.
func PathEntity(v string) (Ref, bool) {
	switch {
	case uuidRE.MatchString(v):
		return Ref{Kind: KindUserEntity, Value: strings.ToLower(v)}, true
	case slugRE.MatchString(v):
		return Ref{Kind: KindEntity, Value: v}, true
	}
	return Ref{}, false
}

// TxHash checks a transaction hash path segment and returns its canonical form: hex hashes
// lower-case (with or without 0x), others (base58 signatures) as given.
func TxHash(v string) (string, error) {
	if v == "" || len(v) > 128 {
		return "", params.Errorf("hash", "must be 1 to 128 characters")
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", params.Errorf("hash", "%q is not a transaction hash (letters and digits only)", short(v))
		}
	}
	h := v
	if len(h) > 2 && (h[:2] == "0x" || h[:2] == "0X") {
		h = "0x" + h[2:]
	}
	if isHex(strings.TrimPrefix(h, "0x")) {
		return strings.ToLower(h), nil
	}
	return v, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
