package store

import (
	"context"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
)

// HolderQuery asks for one page of a token's holders on each of its deployments.
type HolderQuery struct {
	Keys          [][2]string // (chain, token) of each deployment
	PricingID     string      // "" for a token without one: no price is read
	Now           time.Time   // the price in force at Now
	Limit, Offset int
	Entities      bool // also the operator entities holding the most
}

// HolderPage is a token's supply on a chain and one page of its largest holders: addresses
// (with their attributions) and, when asked, operator entities.
type HolderPage struct {
	Supply    *big.Int
	Addresses []Ranked
	Attrs     map[Ref]AttributionView // the attributed addresses of the page
	Entities  []Ranked
	EntityOf  map[string]Entity // the entities of the page
}

// HolderPages is everything /token/holders reads after resolving the token.
type HolderPages struct {
	Metas map[[2]string]TokenMeta
	Price PricePoint // zero without a price
	Pages map[[2]string]HolderPage
}

// HolderPages reads, in one round trip, the token's metadata on each deployment, its price now,
// and per deployment its supply and a page of holders (and entity holders when asked).
func (s *Store) HolderPages(ctx context.Context, hq HolderQuery) (HolderPages, error) {
	out := HolderPages{Pages: map[[2]string]HolderPage{}}
	b := &pgx.Batch{}
	cs, ts := make([]string, len(hq.Keys)), make([]string, len(hq.Keys))
	for i, k := range hq.Keys {
		cs[i], ts[i] = k[0], k[1]
	}
	b.Queue(q("read_token_meta"), cs, ts)
	if hq.PricingID != "" {
		b.Queue(q("read_prices_at"), []string{hq.PricingID}, hq.Now)
	}
	for _, k := range hq.Keys {
		b.Queue(q("read_supply"), k[0], k[1])
		b.Queue(q("read_holders_attr"), k[0], k[1], hq.Limit, hq.Offset, ChainType(k[0]))
		if hq.Entities {
			b.Queue(q("read_entity_holders_full"), k[0], k[1], hq.Limit, hq.Offset)
		}
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var err error
	if out.Metas, err = scanRows(br, scanTokenMetas); err != nil {
		return out, err
	}
	if hq.PricingID != "" {
		ps, err := scanRows(br, scanPrices)
		if err != nil {
			return out, err
		}
		out.Price = ps[hq.PricingID]
	}
	for _, k := range hq.Keys {
		p, err := readHolderPage(br, k[0], hq.Entities)
		if err != nil {
			return out, err
		}
		out.Pages[k] = p
	}
	return out, nil
}

func readHolderPage(br pgx.BatchResults, chain string, entities bool) (HolderPage, error) {
	p := HolderPage{Supply: new(big.Int), Attrs: map[Ref]AttributionView{}, EntityOf: map[string]Entity{}}
	var v string
	switch err := br.QueryRow().Scan(&v); {
	case err == pgx.ErrNoRows:
	case err != nil:
		return p, err
	default:
		sup, err := parseInt(v)
		if err != nil {
			return p, err
		}
		p.Supply = sup
	}
	rows, err := br.Query()
	if err != nil {
		return p, err
	}
	if err := scanAttributedHolders(rows, ChainType(chain), &p); err != nil {
		return p, err
	}
	if !entities {
		return p, nil
	}
	if rows, err = br.Query(); err != nil {
		return p, err
	}
	return p, scanEntityHolders(rows, &p)
}

func scanAttributedHolders(rows pgx.Rows, chainType string, p *HolderPage) error {
	defer rows.Close()
	for rows.Next() {
		var r Ranked
		var bal string
		var has bool
		var v AttributionView
		var e, pe [8]*string
		dest := []any{&r.ID, &bal, &has, &v.Label, &v.DepositServiceID, &v.IsContract}
		for i := range e {
			dest = append(dest, &e[i])
		}
		for i := range pe {
			dest = append(dest, &pe[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		var err error
		if r.Balance, err = parseInt(bal); err != nil {
			return err
		}
		p.Addresses = append(p.Addresses, r)
		if has {
			v.Entity, v.Predicted = entityFrom(e), entityFrom(pe)
			p.Attrs[Ref{ChainType: chainType, Address: r.ID}] = v
		}
	}
	return rows.Err()
}

func scanEntityHolders(rows pgx.Rows, p *HolderPage) error {
	defer rows.Close()
	for rows.Next() {
		var r Ranked
		var bal string
		var e Entity
		if err := rows.Scan(&r.ID, &bal, &e.Name, &e.Type, &e.Note, &e.Service, &e.Website, &e.Twitter, &e.LinkedIn); err != nil {
			return err
		}
		var err error
		if r.Balance, err = parseInt(bal); err != nil {
			return err
		}
		e.ID = r.ID
		p.Entities = append(p.Entities, r)
		p.EntityOf[r.ID] = e
	}
	return rows.Err()
}
