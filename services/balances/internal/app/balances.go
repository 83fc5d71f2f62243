package app

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// Balances is what /balances/address and /balances/entity share.
type Balances struct {
	Balances           map[string][]TokenBalance `json:"balances"`
	TotalBalance       map[string]float64        `json:"totalBalance"`
	TotalBalance24hAgo map[string]float64        `json:"totalBalance24hAgo"`
}

// AddressBalancesView is the answer of /balances/address.
type AddressBalancesView struct {
	Addresses map[string]map[string]AddressInfo `json:"addresses"`
	Balances
}

// EntityBalancesView is the answer of /balances/entity.
type EntityBalancesView struct {
	Entities map[string]Entity `json:"entities"`
	Balances
}

// priced renders holdings as TokenBalances per chain with their totals; exact adds
// balanceExact. ago are the holdings of 24 h ago (holdingsAgo), valued at the prices in force
// then for totalBalance24hAgo.
func (a *App) priced(ctx context.Context, hs, ago []store.Holding, exact bool) (Balances, error) {
	out := Balances{Balances: map[string][]TokenBalance{}, TotalBalance: map[string]float64{}, TotalBalance24hAgo: map[string]float64{}}
	ts, err := a.tokens(ctx, holdingKeys(append(append([]store.Holding{}, hs...), ago...)))
	if err != nil {
		return out, err
	}
	qs, err := a.quotes(ctx, pricingIDs(ts), a.now())
	if err != nil {
		return out, err
	}
	for _, h := range hs {
		t := ts[[2]string{h.Chain, h.Token}]
		q := qs[t.PricingID]
		tb := TokenBalance{ID: t.ID, Name: t.Name, Symbol: t.Symbol, Balance: units(h.Balance, t.Decimals)}
		if exact {
			tb.BalanceExact = h.Balance.String()
		}
		if h.Token != "" && strings.HasPrefix(h.Token, "0x") {
			tb.EthereumAddress = h.Token
		}
		if q.Has {
			tb.Price, tb.QuoteTime, tb.USD = q.Price, render.Timestamp(q.Time), tb.Balance*q.Price
			if q.Has24h {
				tb.PriceChange24h = q.Price - q.Price24h
				if q.Price24h != 0 {
					tb.PriceChange24hPercent = tb.PriceChange24h / q.Price24h * 100
				}
			}
		}
		out.Balances[h.Chain] = append(out.Balances[h.Chain], tb)
		out.TotalBalance[h.Chain] += tb.USD
	}
	for c := range out.Balances {
		out.TotalBalance24hAgo[c] = 0
	}
	for _, h := range ago {
		if h.Balance.Sign() <= 0 {
			continue
		}
		if _, ok := out.Balances[h.Chain]; !ok {
			// A chain emptied within the day stays in the answer, holding nothing now, so its
			// 24 h change shows (an emptied wallet's total fell, it did not vanish).
			out.Balances[h.Chain], out.TotalBalance[h.Chain], out.TotalBalance24hAgo[h.Chain] = []TokenBalance{}, 0, 0
		}
		t := ts[[2]string{h.Chain, h.Token}]
		out.TotalBalance24hAgo[h.Chain] += units(h.Balance, t.Decimals) * qs[t.PricingID].Price24h
	}
	for c := range out.Balances {
		l := out.Balances[c]
		sort.Slice(l, func(i, j int) bool {
			if l[i].USD != l[j].USD {
				return l[i].USD > l[j].USD
			}
			return l[i].ID < l[j].ID
		})
	}
	return out, nil
}

// holdingsAgo returns the subject's balances 24 h ago as its daily snapshots hold them: the
// snapshot of the UTC day of now−24 h (yesterday's close). An operator entity's are counted back
// from its maintained totals (one day of changes); addresses' come from their snapshots.
func (a *App) holdingsAgo(ctx context.Context, s Subject) ([]store.Holding, error) {
	day := store.Day(a.now().Add(-24 * time.Hour))
	if s.Entity == "" {
		return a.holdingsAt(ctx, s, day)
	}
	hs, err := a.st.EntityBalancesBack(ctx, s.Entity, s.Chains, day)
	if err != nil || len(s.Refs) == 0 {
		return hs, err
	}
	refs := s
	refs.Entity = ""
	extra, err := a.holdingsAt(ctx, refs, day)
	return mergeHoldings(append(hs, extra...)), err
}

// currentAndAgo returns the subject's current holdings and those of 24 h ago.
func (a *App) currentAndAgo(ctx context.Context, s Subject) (hs, ago []store.Holding, err error) {
	if hs, err = a.holdings(ctx, s); err != nil {
		return nil, nil, err
	}
	ago, err = a.holdingsAgo(ctx, s)
	return hs, ago, err
}

// AddressBalances answers /balances/address/{address}.
func (a *App) AddressBalances(ctx context.Context, addr string, chains []string) (AddressBalancesView, error) {
	var out AddressBalancesView
	s, err := a.AddressSubject(addr, chains)
	if err != nil {
		return out, err
	}
	hs, ago, err := a.currentAndAgo(ctx, s)
	if err != nil {
		return out, err
	}
	if out.Balances, err = a.priced(ctx, hs, ago, true); err != nil {
		return out, err
	}
	b, err := a.newBook(ctx, s.Refs)
	if err != nil {
		return out, err
	}
	out.Addresses = map[string]map[string]AddressInfo{}
	for c := range out.Balances.Balances {
		out.Addresses[c] = map[string]AddressInfo{s.Address: b.info(c, s.Address)}
	}
	return out, nil
}

// EntityBalances answers /balances/entity/{entity}. An operator entity is answered from its
// maintained totals whether or not the caller asked for cheap=true: they are exact, so the
// cheap answer and the full one are the same.
func (a *App) EntityBalances(ctx context.Context, id string, chains []string) (EntityBalancesView, error) {
	var out EntityBalancesView
	s, err := a.EntitySubject(ctx, id, chains)
	if err != nil {
		return out, err
	}
	hs, ago, err := a.currentAndAgo(ctx, s)
	if err != nil {
		return out, err
	}
	if out.Balances, err = a.priced(ctx, hs, ago, false); err != nil {
		return out, err
	}
	ent, err := a.entityView(ctx, s)
	if err != nil {
		return out, err
	}
	out.Entities = map[string]Entity{ent.ID: ent}
	return out, nil
}

// entityView is the Entity object of an entity subject.
func (a *App) entityView(ctx context.Context, s Subject) (Entity, error) {
	if s.User {
		ue, err := a.labels.Entity(ctx, s.EntityID)
		if err != nil {
			return Entity{}, err
		}
		typ := ue.Type
		if typ == "" {
			typ = "user"
		}
		desc, tags := "", []PopulatedTag{}
		return Entity{ID: ue.ID, Name: ue.Name, Note: ue.Note, Type: typ, Description: &desc, PopulatedTags: &tags}, nil
	}
	ents, err := a.st.Entities(ctx, []string{s.Entity})
	if err != nil {
		return Entity{}, err
	}
	e := ents[s.Entity]
	out := entityOut(&e)
	tags := make([]PopulatedTag, 0, len(e.Tags))
	for _, t := range e.Tags {
		tags = append(tags, PopulatedTag{ID: t.ID, Label: t.Label, Rank: t.Rank, TagParams: t.Params, DisablePage: t.DisablePage,
			ExcludeEntities: t.ExcludeEntities, Chain: t.Chain})
	}
	out.Description, out.PopulatedTags = &e.Description, &tags
	return *out, nil
}

// TokenAmount is the answer of /token/balance.
type TokenAmount struct {
	PricingID string  `json:"pricingID"`
	Name      string  `json:"name"`
	Symbol    string  `json:"symbol"`
	Balance   float64 `json:"balance"`
	Price     float64 `json:"price"`
	USD       float64 `json:"usd"`
}

// TokenRef names a token by pricing id or by chain and contract.
type TokenRef struct {
	PricingID      string
	Chain, Address string
}

// deployments resolves a token to its (chain, token) keys on the deployment's chains.
func (a *App) deployments(ctx context.Context, r TokenRef) (token, [][2]string, error) {
	id := r.PricingID
	if id == "" {
		ts, err := a.tokens(ctx, [][2]string{{r.Chain, r.Address}})
		if err != nil {
			return token{}, nil, err
		}
		t := ts[[2]string{r.Chain, r.Address}]
		if t.PricingID == "" || t.PricingID == t.Address {
			if t.Name == "" {
				return token{}, nil, notFound("token %s on %s not found", params.Trunc(r.Address), r.Chain)
			}
			return t, [][2]string{{r.Chain, r.Address}}, nil
		}
		id = t.PricingID
	}
	reg, ok, err := a.st.Registry(ctx, id)
	if err != nil {
		return token{}, nil, err
	}
	t := token{ID: id, PricingID: id, Name: reg.Name, Symbol: reg.Symbol, TVTicker: reg.TVTicker}
	var keys [][2]string
	for _, d := range reg.Deployments {
		if a.chains.Has(d.Chain) {
			keys = append(keys, [2]string{d.Chain, d.Token})
		}
	}
	for _, c := range a.chains.Chains() {
		if c.NativePricingID == id && !contains(keys, [2]string{c.Name, ""}) {
			keys = append(keys, [2]string{c.Name, ""})
			if !ok {
				t.Name, t.Symbol = c.NativeName, c.NativeSymbol
			}
			ok = true
		}
	}
	if !ok {
		return token{}, nil, notFound("token %q not found", params.Trunc(id))
	}
	return t, keys, nil
}

func contains(keys [][2]string, k [2]string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// TokenBalance answers /token/balance: the subject's balance of a token summed across chains.
func (a *App) TokenBalance(ctx context.Context, r TokenRef, entityID, addr string) (TokenAmount, error) {
	t, keys, err := a.deployments(ctx, r)
	if err != nil {
		return TokenAmount{}, err
	}
	var chains []string
	for _, k := range keys {
		chains = append(chains, k[0])
	}
	var s Subject
	if entityID != "" {
		s, err = a.EntitySubject(ctx, entityID, nil)
	} else {
		s, err = a.AddressSubject(addr, nil)
	}
	if err != nil {
		return TokenAmount{}, err
	}
	s.Chains = intersect(s.Chains, chains)
	hs, err := a.holdings(ctx, s)
	if err != nil {
		return TokenAmount{}, err
	}
	metas, err := a.tokens(ctx, keys)
	if err != nil {
		return TokenAmount{}, err
	}
	out := TokenAmount{PricingID: t.PricingID, Name: t.Name, Symbol: t.Symbol}
	for _, h := range hs {
		k := [2]string{h.Chain, h.Token}
		if contains(keys, k) {
			out.Balance += units(h.Balance, metas[k].Decimals)
		}
	}
	if out.Price, err = a.priceNow(ctx, t.PricingID); err != nil {
		return out, err
	}
	out.USD = out.Balance * out.Price
	return out, nil
}

func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
			in[x] = false
		}
	}
	return out
}

// SubaccountBalance is one Solana-style subaccount's balance.
type SubaccountBalance struct {
	Address      string  `json:"address"`
	OwnerAddress string  `json:"ownerAddress"`
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Symbol       string  `json:"symbol"`
	Balance      float64 `json:"balance"`
	BalanceExact string  `json:"balanceExact"`
	Price        float64 `json:"price"`
	USD          float64 `json:"usd"`
}

// Subaccounts answers /balances/solana/subaccounts/*: the stake and lending subaccounts owned by
// owners (addresses) or by the addresses of entities, holding the token pricingID.
func (a *App) Subaccounts(ctx context.Context, owners, entities []string, pricingID string, limit int) ([]SubaccountBalance, error) {
	t, keys, err := a.deployments(ctx, TokenRef{PricingID: pricingID})
	if err != nil {
		return nil, err
	}
	var solKeys [][2]string
	for _, k := range keys {
		if store.ChainType(k[0]) == "solana" {
			solKeys = append(solKeys, k)
		}
	}
	subjects, err := a.entitySubjects(ctx, entities)
	if err != nil {
		return nil, err
	}
	for _, s := range subjects {
		refs := s.Refs
		if s.Entity != "" {
			members, err := a.st.EntityMembers(ctx, s.Entity, []string{"solana"}, MaxEntityOwners)
			if err != nil {
				return nil, err
			}
			refs = append(members, s.Refs...)
		}
		for _, r := range refs {
			if r.ChainType == "solana" {
				owners = append(owners, r.Address)
			}
		}
	}
	out := []SubaccountBalance{}
	if len(solKeys) == 0 || len(owners) == 0 {
		return out, nil
	}
	subs, err := a.st.Subaccounts(ctx, owners, solKeys, limit)
	if err != nil {
		return nil, err
	}
	metas, err := a.tokens(ctx, solKeys)
	if err != nil {
		return nil, err
	}
	price, err := a.priceNow(ctx, t.PricingID)
	if err != nil {
		return nil, err
	}
	for _, sa := range subs {
		m := metas[[2]string{sa.Chain, sa.Token}]
		u := units(sa.Balance, m.Decimals)
		out = append(out, SubaccountBalance{Address: sa.Address, OwnerAddress: sa.Owner, ID: t.ID, Name: t.Name, Symbol: t.Symbol,
			Balance: u, BalanceExact: sa.Balance.String(), Price: price, USD: u * price})
	}
	return out, nil
}

// MaxEntityOwners bounds how many addresses of an operator entity the subaccount routes look
// at.
const MaxEntityOwners = 10000
