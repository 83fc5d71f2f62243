package app

import (
	"context"
	"math/big"
	"sort"

	"github.com/chainintel/chainintel/services/balances/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
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
	// EntityTopHolders is omitted unless the entities are asked for (groupByEntity): API.md marks
	// it optional, and absent optional fields are omitted, not null.
	EntityTopHolders map[string][]EntityHolder `json:"entityTopHolders,omitempty"`
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
// grouped, by operator entity; pctOfCap divides by the sum of every holder's balance. After the
// token is resolved, one round trip reads its metadata, its price and every chain's page (the
// addresses with their attributions, the entities with their objects), and one user-labels
// lookup covers the addresses of every chain (grouped, with the caller's additions to operator
// entities, which rank those entities again at their totals for the caller).
func (a *App) Holders(ctx context.Context, r TokenRef, hq HoldersQuery) (Holders, error) {
	t, keys, err := a.deployments(ctx, r)
	if err != nil {
		return Holders{}, err
	}
	pages, err := a.st.HolderPages(ctx, store.HolderQuery{Keys: keys, PricingID: t.PricingID, Now: a.now(),
		Limit: hq.Limit, Offset: hq.Offset, Entities: hq.GroupByEntity})
	if err != nil {
		return Holders{}, err
	}
	metas := make(map[[2]string]token, len(keys))
	for _, k := range keys {
		metas[k] = resolveToken(k, pages.Metas[k])
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
	b, err := a.holderBook(ctx, keys, pages.Pages, hq.GroupByEntity)
	if err != nil {
		return out, err
	}
	if len(b.labels.Additions) > 0 {
		if err := a.entitiesWithAdditions(ctx, keys, hq, pages.Pages, b.labels.Additions); err != nil {
			return out, err
		}
	}
	for _, k := range keys {
		chainHolders(k[0], pages.Pages[k], metas[k].Decimals, pages.Price.Price, b, &out)
	}
	return out, nil
}

// holderBook is the attributions the pages carry and the caller's labels of every address on
// them, asked in one lookup; grouped, and when someone holds the token, the same lookup brings
// the caller's additions to operator entities (b.labels.Additions), so a caller without
// additions pays no call for them.
func (a *App) holderBook(ctx context.Context, keys [][2]string, pages map[[2]string]store.HolderPage, grouped bool) (*book, error) {
	b := &book{attrs: map[store.Ref]store.AttributionView{}}
	var ul []ulclient.AddressRef
	held := false
	for _, k := range keys {
		p := pages[k]
		if p.Supply.Sign() == 0 {
			continue
		}
		held = true
		ct := store.ChainType(k[0])
		for _, r := range p.Addresses {
			ul = append(ul, ulclient.AddressRef{ChainType: ct, Address: r.ID})
		}
		for ref, v := range p.Attrs {
			b.attrs[ref] = v
		}
	}
	var err error
	if grouped && held {
		b.labels, err = a.labels.LookupWithAdditions(ctx, ul)
	} else {
		b.labels, err = a.labels.Lookup(ctx, ul)
	}
	return b, err
}

// entitiesWithAdditions ranks again the entity pages of the deployments where the caller's
// additions to operator entities may count: each such entity at its total for the caller (its
// maintained total plus the balances of the added addresses it does not hold, ownAdditions, as
// /balances/entity counts them). Additions only raise totals, so the new page is within the
// entities ranked offset+limit deep without them and the entities with additions.
func (a *App) entitiesWithAdditions(ctx context.Context, keys [][2]string, hq HoldersQuery,
	pages map[[2]string]store.HolderPage, added map[string]map[string][]string) error {
	types := map[string]bool{}
	for _, k := range keys {
		if pages[k].Supply.Sign() > 0 {
			types[store.ChainType(k[0])] = true
		}
	}
	asked := map[string]map[string][]string{}
	for id, byType := range added {
		for ct, addrs := range byType {
			if types[ct] {
				if asked[id] == nil {
					asked[id] = map[string][]string{}
				}
				asked[id][ct] = addrs
			}
		}
	}
	if len(asked) == 0 {
		return nil
	}
	own, err := a.ownAdditions(ctx, asked)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, refs := range own {
		for _, r := range refs {
			held[r.ChainType] = true
		}
	}
	var use [][2]string
	for _, k := range keys {
		if pages[k].Supply.Sign() > 0 && held[store.ChainType(k[0])] {
			use = append(use, k)
		}
	}
	if len(use) == 0 {
		return nil
	}
	res, err := a.st.EntityAdditions(ctx, store.EntityAdditionsQuery{Keys: use, Depth: hq.Offset + hq.Limit, Added: own})
	if err != nil {
		return err
	}
	for k, r := range res {
		p := pages[k]
		p.Entities, p.EntityOf = rankEntities(r, hq.Offset, hq.Limit)
		pages[k] = p
	}
	return nil
}

// rankEntities is the page [offset, offset+limit) of the entities holding the token, the
// totals with additions replacing those without, by balance then id as entity_current ranks.
func rankEntities(r store.EntityAdditionsPage, offset, limit int) ([]store.Ranked, map[string]store.Entity) {
	bal := map[string]*big.Int{}
	of := map[string]store.Entity{}
	for _, p := range []store.HolderPage{r.Top, r.Added} {
		for _, e := range p.Entities {
			bal[e.ID], of[e.ID] = e.Balance, p.EntityOf[e.ID]
		}
	}
	list := make([]store.Ranked, 0, len(bal))
	for id, b := range bal {
		if b.Sign() > 0 {
			list = append(list, store.Ranked{ID: id, Balance: b})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if c := list[i].Balance.Cmp(list[j].Balance); c != 0 {
			return c > 0
		}
		return list[i].ID < list[j].ID
	})
	list = list[min(offset, len(list)):min(offset+limit, len(list))]
	page := make(map[string]store.Entity, len(list))
	for _, e := range list {
		page[e.ID] = of[e.ID]
	}
	return list, page
}

// chainHolders adds one chain's page to out (nothing when nobody holds the token there).
func chainHolders(chain string, page store.HolderPage, decimals int32, price float64, b *book, out *Holders) {
	supply := page.Supply
	if supply.Sign() == 0 {
		return
	}
	out.TotalSupply[chain] += units(supply, decimals)
	list := out.AddressTopHolders[chain]
	if list == nil {
		list = []AddressHolder{}
	}
	for _, r := range page.Addresses {
		u := units(r.Balance, decimals)
		list = append(list, AddressHolder{Address: b.info(chain, r.ID), Balance: u, USD: u * price, PctOfCap: pct(r.Balance, supply)})
	}
	out.AddressTopHolders[chain] = list
	if out.EntityTopHolders == nil {
		return
	}
	elist := out.EntityTopHolders[chain]
	if elist == nil {
		elist = []EntityHolder{}
	}
	for _, e := range page.Entities {
		ent := page.EntityOf[e.ID]
		u := units(e.Balance, decimals)
		elist = append(elist, EntityHolder{Entity: *entityOut(&ent), Balance: u, USD: u * price, PctOfCap: pct(e.Balance, supply)})
	}
	out.EntityTopHolders[chain] = elist
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
