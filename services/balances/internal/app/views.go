package app

import (
	"context"

	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// The API's address objects are libs/render's, shared with every service that answers with
// them.
type (
	Entity       = render.Entity
	PopulatedTag = render.PopulatedTag
	AddressLabel = render.AddressLabel
	AddressInfo  = render.AddressInfo
)

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
	return render.EntityOf(&render.StoredEntity{ID: e.ID, Name: e.Name, Type: e.Type, Note: e.Note, Service: e.Service,
		Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn})
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
	var at *render.Attribution
	if a, ok := b.attrs[store.Ref{ChainType: ct, Address: addr}]; ok {
		at = &render.Attribution{Entity: entityOut(a.Entity), Label: a.Label, Predicted: entityOut(a.Predicted),
			DepositServiceID: a.DepositServiceID, IsContract: a.IsContract}
	}
	ai := render.Info(chain, ct, addr, false, at)
	b.labels.Apply(&ai, ct)
	return ai
}
