package app

import (
	"context"

	"github.com/chainintel/chainintel/services/balances/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Entity is the API's Entity object.
type Entity struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Note     string  `json:"note"`
	Type     string  `json:"type"`
	Service  *string `json:"service"`
	Website  string  `json:"website,omitempty"`
	Twitter  string  `json:"twitter,omitempty"`
	LinkedIn string  `json:"linkedin,omitempty"`
	// Description and PopulatedTags are set on the entities of /balances/entity only.
	Description   *string         `json:"description,omitempty"`
	PopulatedTags *[]PopulatedTag `json:"populatedTags,omitempty"`
}

// PopulatedTag is the API's PopulatedTag.
type PopulatedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int32  `json:"rank"`
	TagParams       string `json:"tagParams"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain,omitempty"`
}

// AddressLabel is the API's AddressLabel object.
type AddressLabel struct {
	Name      string `json:"name"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// AddressInfo is the API's AddressInfo object.
type AddressInfo struct {
	Address          string        `json:"address"`
	Chain            string        `json:"chain"`
	ServiceEntity    *Entity       `json:"serviceEntity,omitempty"`
	ServiceLabel     *AddressLabel `json:"serviceLabel,omitempty"`
	PredictedEntity  *Entity       `json:"predictedEntity,omitempty"`
	UserEntity       *Entity       `json:"userEntity,omitempty"`
	UserLabel        *AddressLabel `json:"userLabel,omitempty"`
	DepositServiceID string        `json:"depositServiceID,omitempty"`
	Contract         bool          `json:"contract"`
	IsUserAddress    bool          `json:"isUserAddress"`
}

// TokenBalance is the API's TokenBalance object. A token without a price has price and usd 0
// and no quoteTime.
type TokenBalance struct {
	ID                    string  `json:"id"`
	Name                  string  `json:"name"`
	Symbol                string  `json:"symbol"`
	Balance               float64 `json:"balance"`
	BalanceExact          string  `json:"balanceExact,omitempty"`
	EthereumAddress       string  `json:"ethereumAddress,omitempty"`
	Price                 float64 `json:"price"`
	PriceChange24h        float64 `json:"priceChange24h"`
	PriceChange24hPercent float64 `json:"priceChange24hPercent"`
	QuoteTime             string  `json:"quoteTime,omitempty"`
	USD                   float64 `json:"usd"`
}

func entityOut(e *store.Entity) *Entity {
	if e == nil {
		return nil
	}
	out := &Entity{ID: e.ID, Name: e.Name, Note: e.Note, Type: e.Type, Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn}
	if e.Service != "" {
		s := e.Service
		out.Service = &s
	}
	return out
}

// book holds the attributions and the caller's labels of a set of addresses.
type book struct {
	attrs  map[store.Ref]store.AttributionView
	labels ulclient.Lookup
}

func (a *App) newBook(ctx context.Context, refs []store.Ref) (*book, error) {
	b := &book{}
	var err error
	if b.attrs, err = a.st.Attributions(ctx, refs); err != nil {
		return nil, err
	}
	ul := make([]ulclient.AddressRef, len(refs))
	for i, r := range refs {
		ul[i] = ulclient.AddressRef{ChainType: r.ChainType, Address: r.Address}
	}
	if b.labels, err = a.labels.Lookup(ctx, ul); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *book) info(chain, addr string) AddressInfo {
	ct := store.ChainType(chain)
	ai := AddressInfo{Address: addr, Chain: chain}
	if at, ok := b.attrs[store.Ref{ChainType: ct, Address: addr}]; ok {
		ai.ServiceEntity = entityOut(at.Entity)
		if at.Label != "" {
			ai.ServiceLabel = &AddressLabel{Name: at.Label, Address: addr, ChainType: ct}
		}
		ai.PredictedEntity = entityOut(at.Predicted)
		ai.DepositServiceID = at.DepositServiceID
		ai.Contract = at.IsContract
	}
	key := ct + ":" + addr
	if l, ok := b.labels.Labels[key]; ok {
		ai.UserLabel = &AddressLabel{Name: l.Name, Address: addr, ChainType: ct}
	}
	if es := b.labels.Entities[key]; len(es) > 0 {
		ai.UserEntity = &Entity{ID: es[0].ID, Name: es[0].Name, Note: es[0].Note, Type: "user"}
		ai.IsUserAddress = true
	}
	return ai
}
