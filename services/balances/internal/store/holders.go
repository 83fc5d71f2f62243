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

// EntityAdditionsQuery asks, for a caller with additions to operator entities, what grouped
// holders need to rank those entities with their additions.
type EntityAdditionsQuery struct {
	Keys  [][2]string      // (chain, token) of each deployment
	Depth int              // the operator entities' ranking is read this deep (offset + limit)
	Added map[string][]Ref // the caller's additions by operator entity id, as counted in it
}

// EntityAdditionsPage is, on one deployment, the largest operator entities from the top, as
// entity_current ranks them (Top), and the entities with the caller's additions at their totals
// for the caller (Added).
type EntityAdditionsPage struct {
	Top, Added HolderPage
}

// EntityAdditions reads, in one round trip, per deployment the operator entities' ranking Depth
// deep from the top and the totals of the entities with additions (read_entity_holders_added.sql):
// an entity the additions lift can only displace entities of that depth.
func (s *Store) EntityAdditions(ctx context.Context, eq EntityAdditionsQuery) (map[[2]string]EntityAdditionsPage, error) {
	out := map[[2]string]EntityAdditionsPage{}
	b := &pgx.Batch{}
	for _, k := range eq.Keys {
		var ids, addrs []string
		ct := ChainType(k[0])
		for id, refs := range eq.Added {
			for _, r := range refs {
				if r.ChainType == ct {
					ids, addrs = append(ids, id), append(addrs, r.Address)
				}
			}
		}
		b.Queue(q("read_entity_holders_full"), k[0], k[1], eq.Depth, 0)
		b.Queue(q("read_entity_holders_added"), k[0], k[1], ids, addrs)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	for _, k := range eq.Keys {
		p := EntityAdditionsPage{Top: HolderPage{EntityOf: map[string]Entity{}}, Added: HolderPage{EntityOf: map[string]Entity{}}}
		for _, into := range []*HolderPage{&p.Top, &p.Added} {
			rows, err := br.Query()
			if err != nil {
				return out, err
			}
			if err := scanEntityHolders(rows, into); err != nil {
				return out, err
			}
		}
		out[k] = p
	}
	return out, nil
}
