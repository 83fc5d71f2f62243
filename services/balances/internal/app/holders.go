package app

import (
	"context"
	"math/big"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// HolderToken is the token object of /token/holders.
type HolderToken struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	TVTicker string `json:"tvTicker,omitempty"`
}

// AddressHolder is one address among a token's top holders.
type AddressHolder struct {
	Address  AddressInfo `json:"address"`
	Balance  float64     `json:"balance"`
	USD      float64     `json:"usd"`
	PctOfCap float64     `json:"pctOfCap"`
}

// EntityHolder is one operator entity among a token's top holders.
type EntityHolder struct {
	Entity   Entity  `json:"entity"`
	Balance  float64 `json:"balance"`
	USD      float64 `json:"usd"`
	PctOfCap float64 `json:"pctOfCap"`
}

// Holders is the answer of /token/holders.
type Holders struct {
	Token             HolderToken                `json:"token"`
	TotalSupply       map[string]float64         `json:"totalSupply"`
	AddressTopHolders map[string][]AddressHolder `json:"addressTopHolders"`
	EntityTopHolders  map[string][]EntityHolder  `json:"entityTopHolders,omitempty"`
}

// HoldersQuery pages the holders.
type HoldersQuery struct {
	GroupByEntity bool
	Limit, Offset int
}

// pct is part / whole as a fraction (0 when whole is 0).
func pct(part, whole *big.Int) float64 {
	if whole.Sign() == 0 {
		return 0
	}
	f, _ := new(big.Rat).SetFrac(part, whole).Float64()
	return f
}

// Holders answers /token/holders/*: per chain the largest holders of the token, by address and,
// grouped, by operator entity; pctOfCap divides by the sum of every holder's balance.
func (a *App) Holders(ctx context.Context, r TokenRef, hq HoldersQuery) (Holders, error) {
	t, keys, err := a.deployments(ctx, r)
	if err != nil {
		return Holders{}, err
	}
	metas, err := a.tokens(ctx, keys)
	if err != nil {
		return Holders{}, err
	}
	out := Holders{Token: HolderToken{ID: t.ID, Name: t.Name, Symbol: t.Symbol, TVTicker: t.TVTicker},
		TotalSupply: map[string]float64{}, AddressTopHolders: map[string][]AddressHolder{}}
	if out.Token.Name == "" && len(keys) == 1 {
		m := metas[keys[0]]
		out.Token = HolderToken{ID: m.ID, Name: m.Name, Symbol: m.Symbol, TVTicker: m.TVTicker}
	}
	if hq.GroupByEntity {
		out.EntityTopHolders = map[string][]EntityHolder{}
	}
	price, err := a.priceNow(ctx, t.PricingID)
	if err != nil {
		return out, err
	}
	for _, k := range keys {
		if err := a.chainHolders(ctx, k, metas[k].Decimals, price, hq, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (a *App) chainHolders(ctx context.Context, k [2]string, decimals int32, price float64, hq HoldersQuery, out *Holders) error {
	chain := k[0]
	page, err := a.st.HolderPage(ctx, chain, k[1], hq.Limit, hq.Offset, hq.GroupByEntity)
	if err != nil {
		return err
	}
	supply, rs := page.Supply, page.Addresses
	if supply.Sign() == 0 {
		return nil // nobody holds it on this chain
	}
	out.TotalSupply[chain] += units(supply, decimals)
	refs := make([]store.Ref, len(rs))
	for i, r := range rs {
		refs[i] = store.Ref{ChainType: store.ChainType(chain), Address: r.ID}
	}
	b, err := a.newBook(ctx, refs)
	if err != nil {
		return err
	}
	list := out.AddressTopHolders[chain]
	if list == nil {
		list = []AddressHolder{}
	}
	for _, r := range rs {
		u := units(r.Balance, decimals)
		list = append(list, AddressHolder{Address: b.info(chain, r.ID), Balance: u, USD: u * price, PctOfCap: pct(r.Balance, supply)})
	}
	out.AddressTopHolders[chain] = list
	if !hq.GroupByEntity {
		return nil
	}
	es := page.Entities
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	ents, err := a.st.Entities(ctx, ids)
	if err != nil {
		return err
	}
	elist := out.EntityTopHolders[chain]
	if elist == nil {
		elist = []EntityHolder{}
	}
	for _, e := range es {
		ent := ents[e.ID]
		u := units(e.Balance, decimals)
		elist = append(elist, EntityHolder{Entity: *entityOut(&ent), Balance: u, USD: u * price, PctOfCap: pct(e.Balance, supply)})
	}
	out.EntityTopHolders[chain] = elist
	return nil
}

// Totals is the answer of the internal USD totals route.
type Totals struct {
	TotalUSD  float64            `json:"totalUsd"`
	Addresses map[string]float64 `json:"addresses"` // "<chainType>:<address>" → USD
	Entities  map[string]float64 `json:"entities"`  // operator entity id → USD
}

// USDTotals values the current balances of refs (each) and of operator entities (each) at
// current prices; TotalUSD sums the addresses.
func (a *App) USDTotals(ctx context.Context, refs []store.Ref, entities []string) (Totals, error) {
	out := Totals{Addresses: map[string]float64{}, Entities: map[string]float64{}}
	names := make([]string, 0, len(a.chains.Chains()))
	for _, c := range a.chains.Chains() {
		names = append(names, c.Name)
	}
	var hs []store.AddressHolding
	if len(refs) > 0 {
		var err error
		if hs, err = a.st.SetHoldings(ctx, refs, names); err != nil {
			return out, err
		}
	}
	byEntity := map[string][]store.Holding{}
	for _, id := range entities {
		h, err := a.st.EntityBalances(ctx, id, names)
		if err != nil {
			return out, err
		}
		byEntity[id] = h
	}
	var all []store.Holding
	for _, h := range hs {
		all = append(all, h.Holding)
	}
	for _, l := range byEntity {
		all = append(all, l...)
	}
	ts, err := a.tokens(ctx, holdingKeys(all))
	if err != nil {
		return out, err
	}
	qs, err := a.quotes(ctx, pricingIDs(ts), a.now())
	if err != nil {
		return out, err
	}
	value := func(h store.Holding) float64 {
		t := ts[[2]string{h.Chain, h.Token}]
		return units(h.Balance, t.Decimals) * qs[t.PricingID].Price
	}
	for _, r := range refs {
		out.Addresses[r.ChainType+":"+r.Address] = 0
	}
	for _, h := range hs {
		v := value(h.Holding)
		out.Addresses[h.ChainType+":"+h.Address] += v
		out.TotalUSD += v
	}
	for id, l := range byEntity {
		out.Entities[id] = 0
		for _, h := range l {
			out.Entities[id] += value(h)
		}
	}
	return out, nil
}
