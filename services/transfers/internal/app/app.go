// Package app is the transfers service's use cases: it resolves the references of a parsed
// query (entities, entity types, deposit services, user entities) into address sets through the
// attribution read model and user-labels, runs the store's reads, and renders the API's objects
// with the operator's attributions and the caller's own labels.
package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/shopspring/decimal"
)

// Store is what the app reads.
type Store interface {
	PageTransfers(ctx context.Context, f store.TransferFilter, p store.Page) (store.TransferPage, error)
	ListSwaps(ctx context.Context, f store.SwapFilter, p store.Page) ([]store.SwapRow, int, error)
	TransactionsByHash(ctx context.Context, hash string) ([]store.TransactionRow, error)
	TransfersOfTx(ctx context.Context, chain, hash string, times []time.Time) ([]store.TransferRow, error)
	Histogram(ctx context.Context, f store.TransferFilter, granularity string) ([]store.Bucket, error)
	Counterparties(ctx context.Context, f store.CounterpartyFilter) ([]store.Counterparty, error)
	Flow(ctx context.Context, addrs store.AddrSet, chains []string, from, to time.Time) ([]store.FlowPoint, error)
	Activity(ctx context.Context, addrs []string) (store.Activity, error)
	Attributions(ctx context.Context, keys []store.AddressKey) (map[store.AddressKey]store.Attribution, error)
	ResolveSet(ctx context.Context, set store.AddrSet) (store.AddrSet, map[string]bool, error)
	SetSize(ctx context.Context, set store.AddrSet) (store.AddrSet, map[string]bool, error)
	SetAddresses(ctx context.Context, set store.AddrSet) ([]string, error)
	ExchangeVolumes(ctx context.Context, addrs, chains []string) ([]store.ExchangeVolume, error)
	EntityTypes(ctx context.Context) ([]string, error)
}

// UserLabels is what the app asks user-labels (services/user-labels/client satisfies it). A
// request's entity references are resolved with one Entities call and one AdditionsOf call at
// most (prepare), whatever their number.
type UserLabels interface {
	Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error)
	// AdditionsOf answers the caller's additions to the operator entities ids, by entity id then
	// chain type (one with none absent).
	AdditionsOf(ctx context.Context, ids []string) (map[string]map[string][]string, error)
	// Entities answers those of ids (lower case) that are the caller's user entities, by id.
	Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error)
}

// App is safe for concurrent use.
type App struct {
	store      Store
	labels     UserLabels
	chains     *chains.Set
	tags       Tags                 // nil: no intelligence service (tags.go)
	tokens     *taclient.KnownCache // nil: no token registry; pricing ids are not checked (tokens.go)
	entities   *taclient.KnownCache // nil: no intelligence; the read model's names only (entities.go)
	intelTypes *entityRegistry      // with entities: intelligence's entity types, for the 400
}

// New returns the app. labels may be nil when no user-labels service is configured: then no
// caller has labels or user entities.
func New(s Store, labels UserLabels, cs *chains.Set, opts ...Option) *App {
	if labels == nil {
		labels = noLabels{}
	}
	a := &App{store: s, labels: labels, chains: cs}
	for _, o := range opts {
		o(a)
	}
	return a
}

type noLabels struct{}

func (noLabels) Lookup(context.Context, []ulclient.AddressRef) (ulclient.Lookup, error) {
	return ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}, nil
}
func (noLabels) AdditionsOf(context.Context, []string) (map[string]map[string][]string, error) {
	return map[string]map[string][]string{}, nil
}
func (noLabels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	return noUserEntities(), nil
}

func prefix(param string) string {
	if param == "" {
		return ""
	}
	return param + ": "
}

// flatten turns {chainType: [address]} into canonical addresses.
func flatten(m map[string][]string) []string {
	var out []string
	for ct, as := range m {
		for _, a := range as {
			if n, err := address.Normalize(chains.Type(ct), a); err == nil {
				a = n
			}
			out = append(out, a)
		}
	}
	return out
}

// resolve turns references into the address sets they include and exclude. only is true
// when at least one reference includes (then include may be empty: nothing matches). Entity
// ids were checked and the caller's user entities and additions read by prepare, for the whole
// request (nc); an operator entity becomes its read-model part plus the caller's additions to
// it. deposit:<entityId> of an entity neither the read model nor intelligence knows is a 404 (a
// known entity without deposit addresses matches nothing; nc collects those the model gave no
// deposit addresses, for one lookup per request: nameCheck.deposits); type:<entityType> of
// neither a documented entity type nor one the model or intelligence holds is a 400 listing
// them.
func (a *App) resolve(ctx context.Context, nc *nameCheck, param string, refs []query.Ref) (include, exclude store.AddrSet, only bool, err error) {
	if !nc.prepared {
		if err := a.prepare(ctx, nc, refParam{param, refs}); err != nil {
			return include, exclude, false, err
		}
	}
	for _, r := range refs {
		set := &include
		if r.Negate {
			set = &exclude
		} else {
			only = true
		}
		switch r.Kind {
		case query.KindAddress:
			set.Addrs = append(set.Addrs, r.Addresses...)
		case query.KindUserEntity:
			addrs, err := nc.userEntityAddresses(param, r.Value)
			if err != nil {
				return include, exclude, false, err
			}
			set.Addrs = append(set.Addrs, addrs...)
		case query.KindEntity:
			set.Entities = append(set.Entities, r.Value)
			set.Addrs = append(set.Addrs, flatten(nc.additions[r.Value])...)
		case query.KindType:
			set.Types = append(set.Types, r.Value)
		case query.KindDeposit:
			set.Deposits = append(set.Deposits, r.Value)
		}
	}
	for _, set := range []*store.AddrSet{&include, &exclude} {
		set.Addrs = dedupe(set.Addrs)
		resolved, known, err := a.store.ResolveSet(ctx, *set)
		if err != nil {
			return include, exclude, false, err
		}
		if err := a.checkTypes(ctx, nc, param, set.Types, known); err != nil {
			return include, exclude, false, err
		}
		for _, d := range set.Deposits {
			if !known["deposit:"+d] {
				nc.pending = append(nc.pending, paramName{param, d})
			}
		}
		*set = resolved
	}
	return include, exclude, only, nil
}

// documentedTypes are the entity types API.md documents: type:<t> of one of them is always well
// formed, matching nothing while no address has it (a fresh read model has none).
var documentedTypes = render.EntityTypes

// nameCheck is one request's check of the names its references use, and what user-labels
// supplied for them (prepare).
type nameCheck struct {
	pending []paramName // deposit:<entity> with no deposit addresses: is the entity known?
	types   []string    // the read model's entity types, once read (read)
	read    bool
	// prepared: prepare has run over every reference of the request; users are the caller's
	// user entities it names (by lower-case id), additions the caller's additions to operator
	// entities (by entity id, then chain type).
	prepared  bool
	users     map[string]ulclient.UserEntity
	additions map[string]map[string][]string
}

type paramName struct{ param, name string }

// checkTypes checks entity types against the documented ones, those the read model holds
// (known: ResolveSet's, then the model's list, read at most once a request) and those
// intelligence's entities have: any other is a 400 listing them (intelligence's as it last
// answered).
func (a *App) checkTypes(ctx context.Context, nc *nameCheck, param string, types []string, known map[string]bool) error {
	for _, t := range types {
		if known["type:"+t] || slices.Contains(documentedTypes, t) {
			continue
		}
		if !nc.read {
			ts, err := a.store.EntityTypes(ctx)
			if err != nil {
				return err
			}
			nc.types, nc.read = ts, true
		}
		if slices.Contains(nc.types, t) {
			continue // gained addresses since ResolveSet read
		}
		if u, err := a.unknownNames(ctx, []string{typeKey + t}); err != nil || u == "" {
			if err != nil {
				return err
			}
			continue // a type of intelligence's entities, none with addresses
		}
		all := dedupe(append(slices.Clone(documentedTypes), nc.types...))
		if a.intelTypes != nil {
			all = dedupe(append(all, a.intelTypes.lastTypes()...))
		}
		return &InvalidInputError{Field: param, Reason: fmt.Sprintf("type:%s is not an entity type (one of %s)", t, strings.Join(all, ", "))}
	}
	return nil
}

// deposits looks up, in one read, the entities of the request's deposit: references that have
// no deposit addresses: one neither the read model nor intelligence knows is a 404 (the first, in the order of
// the parameters), a known one matches nothing.
func (a *App) deposits(ctx context.Context, nc *nameCheck) error {
	if len(nc.pending) == 0 {
		return nil
	}
	var ids []string
	for _, p := range nc.pending {
		ids = append(ids, p.name)
	}
	_, known, err := a.store.SetSize(ctx, store.AddrSet{Entities: dedupe(ids)})
	if err != nil {
		return err
	}
	var unknown []string
	for _, p := range nc.pending {
		if !known[p.name] {
			unknown = append(unknown, p.name)
		}
	}
	u, err := a.unknownNames(ctx, unknown)
	if err != nil {
		return err
	}
	for _, p := range nc.pending {
		if u != "" && p.name == u {
			return notFound("entity", "%sunknown entity %q in deposit:%s", prefix(p.param), p.name, p.name)
		}
	}
	nc.pending = nil
	return nil
}

func dedupe(s []string) []string {
	if len(s) < 2 {
		return s
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// chainNames is the chain filter: the requested chains, or the configured ones when they are
// not every chain (nil: no filter).
func (a *App) chainNames(cs []chains.Chain) []string {
	if len(cs) == 0 {
		if len(a.chains.Chains()) == len(chains.All) {
			return nil
		}
		cs = a.chains.Chains()
	}
	return chains.Names(cs)
}

func tokenFilter(ts []query.Token) (addrs, ids []string) {
	for _, t := range ts {
		if t.Address != "" {
			addrs = append(addrs, t.Address)
		} else {
			ids = append(ids, t.PricingID)
		}
	}
	return addrs, ids
}

// transferFilter resolves a parsed /transfers query.
func (a *App) transferFilter(ctx context.Context, q query.Transfers) (store.TransferFilter, error) {
	f := store.TransferFilter{Flow: q.Flow, Chains: a.chainNames(q.Chains), TimeFrom: q.Window.From, TimeTo: q.Window.To,
		ValueGte: q.ValueGte, ValueLte: q.ValueLte, USDGte: q.USDGte, USDLte: q.USDLte}
	nc := &nameCheck{}
	err := a.prepare(ctx, nc, refParam{"base", q.Base}, refParam{"counterparties", q.Counterparties},
		refParam{"from", q.From}, refParam{"to", q.To})
	if err != nil {
		return f, err
	}
	if len(q.Base) > 0 {
		if f.Base, _, _, err = a.resolve(ctx, nc, "base", q.Base); err != nil {
			return f, err
		}
		f.HasBase = true
	}
	if len(q.Counterparties) > 0 {
		if f.Counterparties, _, _, err = a.resolve(ctx, nc, "counterparties", q.Counterparties); err != nil {
			return f, err
		}
		f.HasCP = true
	}
	if f.From.In, f.From.NotIn, f.From.Only, err = a.resolve(ctx, nc, "from", q.From); err != nil {
		return f, err
	}
	if f.To.In, f.To.NotIn, f.To.Only, err = a.resolve(ctx, nc, "to", q.To); err != nil {
		return f, err
	}
	if err := a.deposits(ctx, nc); err != nil {
		return f, err
	}
	if err := a.checkTokens(ctx, q.Tokens); err != nil {
		return f, err
	}
	f.TokenAddrs, f.TokenIDs = tokenFilter(q.Tokens)
	return f, nil
}

// TransferList is GET /transfers's answer.
type TransferList struct {
	Transfers []Transfer `json:"transfers"`
	Count     int        `json:"count"`
	// NextCursor (includeCursors=true) is the cursor parameter of the next page, absent at the
	// end (cursor.go).
	NextCursor string `json:"nextCursor,omitempty"`
}

// Transfers answers GET /transfers.
func (a *App) Transfers(ctx context.Context, q query.Transfers) (TransferList, error) {
	return a.transferList(ctx, q, true)
}

// transferList reads a page of transfers; enrich renders their addresses' attributions and the
// caller's labels (else only address and chain: /transfers/unenriched).
func (a *App) transferList(ctx context.Context, q query.Transfers, enrich bool) (TransferList, error) {
	f, err := a.transferFilter(ctx, q)
	if err != nil {
		return TransferList{}, err
	}
	// Rendering, the store reads the page's attributions beside it where its plan can.
	p := store.Page{SortKey: q.SortKey, SortDir: q.SortDir, Limit: q.Limit, Offset: q.Offset, Attributions: enrich}
	var pg store.TransferPage
	var read []store.TransferRow
	if q.Cursor != nil {
		pg, read, err = a.cursorPage(ctx, f, q, p)
	} else {
		pg, err = a.store.PageTransfers(ctx, f, p)
		read = pg.Rows
	}
	if err != nil {
		return TransferList{}, err
	}
	rows, count := pg.Rows, pg.Count
	b := &book{}
	if enrich {
		if b, err = a.newBook(ctx, transferRefs(rows), pg.Attributed); err != nil {
			return TransferList{}, err
		}
	}
	out := TransferList{Transfers: make([]Transfer, 0, len(rows)), Count: count}
	for _, r := range rows {
		out.Transfers = append(out.Transfers, b.transfer(r))
	}
	if q.IncludeCursors || q.Cursor != nil {
		out.NextCursor = nextCursor(q, rows, read, count)
	}
	return out, nil
}

// HistogramBucket is one bucket of a histogram.
type HistogramBucket struct {
	Time  string  `json:"time"`
	Count int64   `json:"count"`
	USD   float64 `json:"usd"`
}

// Histogram answers GET /transfers/histogram and /transfers/histogram/simple.
func (a *App) Histogram(ctx context.Context, q query.Histogram) ([]HistogramBucket, error) {
	f, err := a.transferFilter(ctx, q.Transfers)
	if err != nil {
		return nil, err
	}
	g := store.Day
	if q.Granularity == "1h" {
		g = store.Hour
	}
	bs, err := a.store.Histogram(ctx, f, g)
	if err != nil {
		return nil, err
	}
	out := make([]HistogramBucket, 0, len(bs))
	for _, b := range bs {
		out = append(out, HistogramBucket{Time: Timestamp(b.Time), Count: b.Count, USD: b.USD.InexactFloat64()})
	}
	return out, nil
}

// SwapList is GET /swaps's answer.
type SwapList struct {
	Swaps []Swap `json:"swaps"`
	Count int    `json:"count"`
}

// Swaps answers GET /swaps.
func (a *App) Swaps(ctx context.Context, q query.Swaps) (SwapList, error) {
	f := store.SwapFilter{Flow: q.Flow, Chains: a.chainNames(q.Chains), TimeFrom: q.Window.From, TimeTo: q.Window.To,
		USDGte: q.USDGte, USDLte: q.USDLte}
	nc := &nameCheck{}
	err := a.prepare(ctx, nc, refParam{"base", q.Base}, refParam{"from", q.From}, refParam{"to", q.To},
		refParam{"senders", q.Senders}, refParam{"receivers", q.Receivers}, refParam{"counterparties", q.Counterparties})
	if err != nil {
		return SwapList{}, err
	}
	if len(q.Base) > 0 {
		if f.Base, _, _, err = a.resolve(ctx, nc, "base", q.Base); err != nil {
			return SwapList{}, err
		}
		f.HasBase = true
	}
	if f.From.In, f.From.NotIn, f.From.Only, err = a.resolve(ctx, nc, "from", q.From); err != nil {
		return SwapList{}, err
	}
	if f.To.In, f.To.NotIn, f.To.Only, err = a.resolve(ctx, nc, "to", q.To); err != nil {
		return SwapList{}, err
	}
	if err := a.swapFilters(ctx, nc, q, &f); err != nil {
		return SwapList{}, err
	}
	if err := a.deposits(ctx, nc); err != nil {
		return SwapList{}, err
	}
	if err := a.checkTokens(ctx, q.Tokens); err != nil {
		return SwapList{}, err
	}
	f.TokenAddrs, f.TokenIDs = tokenFilter(q.Tokens)
	rows, count, err := a.store.ListSwaps(ctx, f, store.Page{SortKey: q.SortKey, SortDir: q.SortDir, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return SwapList{}, err
	}
	refs := make([]addrRef, 0, 3*len(rows))
	for _, r := range rows {
		refs = append(refs, addrRef{r.Chain, r.Contract}, addrRef{r.Chain, r.Sender}, addrRef{r.Chain, r.Receiver})
	}
	b, err := a.newBook(ctx, refs, nil)
	if err != nil {
		return SwapList{}, err
	}
	out := SwapList{Swaps: make([]Swap, 0, len(rows)), Count: count}
	for _, r := range rows {
		out.Swaps = append(out.Swaps, b.swap(r))
	}
	return out, nil
}

// Transaction answers GET /tx/{hash}: the transaction on every configured chain it is on; a
// 404 when it is on none.
func (a *App) Transaction(ctx context.Context, hash string) (map[string]Transaction, error) {
	txs, err := a.store.TransactionsByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	var refs []addrRef
	transfers := map[string][]store.TransferRow{}
	times := map[string][]time.Time{}
	for _, t := range txs {
		times[t.Chain] = append(times[t.Chain], t.BlockTime)
	}
	var found []store.TransactionRow
	for _, t := range txs {
		if !a.chains.Has(t.Chain) {
			continue
		}
		found = append(found, t)
		trs, err := a.store.TransfersOfTx(ctx, t.Chain, t.Hash, times[t.Chain])
		if err != nil {
			return nil, err
		}
		transfers[t.Chain] = trs
		refs = append(refs, addrRef{t.Chain, t.From}, addrRef{t.Chain, t.To}, addrRef{t.Chain, t.ContractCreated})
		refs = append(refs, transferRefs(trs)...)
	}
	if len(found) == 0 {
		return nil, notFound("transaction", "transaction %s not found on any chain", hash)
	}
	b, err := a.newBook(ctx, refs, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Transaction, len(found))
	for _, t := range found {
		out[t.Chain] = b.transaction(t, transfers[t.Chain])
	}
	return out, nil
}

// subject resolves a path's address or entity into its address set.
func (a *App) subject(ctx context.Context, r query.Ref) (store.AddrSet, error) {
	nc := &nameCheck{}
	set, _, _, err := a.resolve(ctx, nc, "", []query.Ref{r})
	if err != nil {
		return set, err
	}
	return set, a.deposits(ctx, nc)
}

// Counterparty is one entry of /counterparties.
type Counterparty struct {
	Address          AddressInfo `json:"address"`
	Chains           []string    `json:"chains"`
	Flow             string      `json:"flow"`
	TransactionCount int64       `json:"transactionCount"`
	USD              float64     `json:"usd"`
}

// Counterparties answers GET /counterparties/address|entity/....
func (a *App) Counterparties(ctx context.Context, subject query.Ref, q query.Counterparties) (map[string][]Counterparty, error) {
	addrs, err := a.subject(ctx, subject)
	if err != nil {
		return nil, err
	}
	if err := a.checkTokens(ctx, q.Tokens); err != nil {
		return nil, err
	}
	f := store.CounterpartyFilter{Addrs: addrs, Flow: q.Flow, Chains: a.chainNames(q.Chains), TimeFrom: q.Window.From,
		TimeTo: q.Window.To, ValueGte: q.ValueGte, ValueLte: q.ValueLte, USDGte: q.USDGte, USDLte: q.USDLte, Limit: q.Limit}
	f.TokenAddrs, f.TokenIDs = tokenFilter(q.Tokens)
	var cps []store.Counterparty
	if len(q.Tags) > 0 {
		cps, err = a.taggedCounterparties(ctx, f, q.Tags)
	} else {
		cps, err = a.store.Counterparties(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	refs := make([]addrRef, 0, len(cps))
	seenOn := map[string][]string{}
	for _, c := range cps {
		refs = append(refs, addrRef{c.Chain, c.Address})
		if !slices.Contains(seenOn[c.Address], c.Chain) {
			seenOn[c.Address] = append(seenOn[c.Address], c.Chain)
		}
	}
	b, err := a.newBook(ctx, refs, nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]Counterparty{}
	for _, c := range cps {
		flow := "either"
		switch {
		case c.In && !c.Out:
			flow = "in"
		case c.Out && !c.In:
			flow = "out"
		}
		out[c.Chain] = append(out[c.Chain], Counterparty{Address: b.info(c.Chain, c.Address, false), Chains: seenOn[c.Address],
			Flow: flow, TransactionCount: c.Count, USD: c.USD})
	}
	return out, nil
}

// FlowPoint is one day of /flow.
type FlowPoint struct {
	Time              string  `json:"time"`
	Inflow            float64 `json:"inflow"`
	Outflow           float64 `json:"outflow"`
	CumulativeInflow  float64 `json:"cumulativeInflow"`
	CumulativeOutflow float64 `json:"cumulativeOutflow"`
}

// Flow answers GET /flow/address|entity/...: daily USD in and out per chain, cumulative from
// the start of the window.
func (a *App) Flow(ctx context.Context, subject query.Ref, q query.Flow) (map[string][]FlowPoint, error) {
	addrs, err := a.subject(ctx, subject)
	if err != nil {
		return nil, err
	}
	pts, err := a.store.Flow(ctx, addrs, a.chainNames(q.Chains), q.Window.From, q.Window.To)
	if err != nil {
		return nil, err
	}
	out := map[string][]FlowPoint{}
	// The cumulative sums are exact too, each converted once: the sum of the days' floats
	// would not be the nearest float to the window's sum.
	cum := map[string][2]decimal.Decimal{}
	for _, p := range pts {
		c := cum[p.Chain]
		c[0], c[1] = c[0].Add(p.Inflow), c[1].Add(p.Outflow)
		cum[p.Chain] = c
		out[p.Chain] = append(out[p.Chain], FlowPoint{Time: Timestamp(p.Day), Inflow: p.Inflow.InexactFloat64(), Outflow: p.Outflow.InexactFloat64(),
			CumulativeInflow: c[0].InexactFloat64(), CumulativeOutflow: c[1].InexactFloat64()})
	}
	return out, nil
}

// Activity is /internal/activity's answer.
type Activity struct {
	VolumeUSD     float64 `json:"volumeUsd"`
	TransferCount int64   `json:"transferCount"`
	FirstTx       string  `json:"firstTx,omitempty"`
	LastTx        string  `json:"lastTx,omitempty"`
}

// Activity answers POST /internal/activity for addresses given as (chain type, address).
func (a *App) Activity(ctx context.Context, refs []ulclient.AddressRef) (Activity, error) {
	addrs := make([]string, 0, len(refs))
	for i, r := range refs {
		t, err := chains.ParseType(r.ChainType)
		if err != nil {
			return Activity{}, invalidAt("addresses", i, "chainType", err)
		}
		n, err := address.Normalize(t, r.Address)
		if err != nil {
			return Activity{}, invalidAt("addresses", i, "address", err)
		}
		addrs = append(addrs, n)
	}
	act, err := a.store.Activity(ctx, dedupe(addrs))
	if err != nil {
		return Activity{}, err
	}
	out := Activity{VolumeUSD: act.VolumeUSD, TransferCount: act.TransferCount}
	if act.First != nil {
		out.FirstTx = Timestamp(*act.First)
	}
	if act.Last != nil {
		out.LastTx = Timestamp(*act.Last)
	}
	return out, nil
}
