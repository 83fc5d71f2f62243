package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// Ref names an address of a chain type.
type Ref struct{ ChainType, Address string }

// Holding is a balance of a token on a chain (of an address or a sum over several).
type Holding struct {
	Chain, Token string
	Balance      *big.Int
}

// Change is a day-over-day change of a balance of a token on a chain.
type Change struct {
	Chain, Token string
	Day          time.Time
	Delta        *big.Int
}

// TokenMeta is what is known of a (chain, token). Decimals is -1 when unknown.
type TokenMeta struct {
	PricingID, Name, Symbol, TVTicker string
	Decimals                          int32
	ObservedID, ObservedName          string
	ObservedSymbol                    string
	ObservedDecimals                  int32
}

func refArrays(refs []Ref) (cts, as []string) {
	cts, as = make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		cts[i], as[i] = r.ChainType, r.Address
	}
	return cts, as
}

func scanHoldings(rows pgx.Rows, err error) ([]Holding, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Holding
	for rows.Next() {
		var h Holding
		var bal string
		if err := rows.Scan(&h.Chain, &h.Token, &bal); err != nil {
			return nil, err
		}
		if h.Balance, err = parseInt(bal); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

func scanChanges(rows pgx.Rows, err error) ([]Change, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var d string
		if err := rows.Scan(&c.Chain, &c.Token, &c.Day, &d); err != nil {
			return nil, err
		}
		if c.Delta, err = parseInt(d); err != nil {
			return nil, err
		}
		c.Day = Day(c.Day)
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddressBalances returns an address's current non-zero balances on chains.
func (s *Store) AddressBalances(ctx context.Context, addr string, chains []string) ([]Holding, error) {
	return scanHoldings(s.pool.Query(ctx, q("read_address_balances"), chains, addr))
}

// SetBalances returns the summed current balances of refs on chains.
func (s *Store) SetBalances(ctx context.Context, refs []Ref, chains []string) ([]Holding, error) {
	cts, as := refArrays(refs)
	return scanHoldings(s.pool.Query(ctx, q("read_set_balances"), cts, as, chains))
}

// EntityBalances returns an operator entity's balances on chains from its maintained totals
// (entity_current): one index range, O(tokens) rows whatever the entity's size.
func (s *Store) EntityBalances(ctx context.Context, entity string, chains []string) ([]Holding, error) {
	return scanHoldings(s.pool.Query(ctx, q("read_entity_current"), entity, chains))
}

// EntityBalancesAt returns an operator entity's balances on chains at the end of UTC day day,
// summed in SQL from its day-over-day changes (O(tokens) rows back).
func (s *Store) EntityBalancesAt(ctx context.Context, entity string, chains []string, day time.Time) ([]Holding, error) {
	return scanHoldings(s.pool.Query(ctx, q("read_entity_at"), entity, chains, day.Format(dateFmt)))
}

// EntityBalancesBack returns an operator entity's balances on chains at the end of UTC day day,
// counted back from its maintained totals (read_entity_back.sql): the cheap form of
// EntityBalancesAt for a recent day.
func (s *Store) EntityBalancesBack(ctx context.Context, entity string, chains []string, day time.Time) ([]Holding, error) {
	return scanHoldings(s.pool.Query(ctx, q("read_entity_back"), entity, chains, day.Format(dateFmt)))
}

// SummedEntityBalances sums an operator entity's addresses' current balances on chains: what
// EntityBalances must equal. The serving path never reads it (it costs a probe per address);
// checks of the maintained totals do.
func (s *Store) SummedEntityBalances(ctx context.Context, entity string, chains []string) ([]Holding, error) {
	return scanHoldings(s.pool.Query(ctx, q("read_entity_balances"), entity, chains))
}

// SetChanges returns the day-over-day changes of the snapshots of refs on chains.
func (s *Store) SetChanges(ctx context.Context, refs []Ref, chains []string) ([]Change, error) {
	cts, as := refArrays(refs)
	return scanChanges(s.pool.Query(ctx, q("read_set_changes"), cts, as, chains))
}

// EntityChanges returns an operator entity's day-over-day snapshot changes on chains.
func (s *Store) EntityChanges(ctx context.Context, entity string, chains []string) ([]Change, error) {
	return scanChanges(s.pool.Query(ctx, q("read_entity_changes"), entity, chains))
}

// TokenMetas returns what is known of each (chain, token).
func (s *Store) TokenMetas(ctx context.Context, keys [][2]string) (map[[2]string]TokenMeta, error) {
	cs, ts := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		cs[i], ts[i] = k[0], k[1]
	}
	rows, err := s.pool.Query(ctx, q("read_token_meta"), cs, ts)
	if err != nil {
		return nil, err
	}
	return scanTokenMetas(rows)
}

func scanTokenMetas(rows pgx.Rows) (map[[2]string]TokenMeta, error) {
	defer rows.Close()
	out := map[[2]string]TokenMeta{}
	for rows.Next() {
		var k [2]string
		var m TokenMeta
		if err := rows.Scan(&k[0], &k[1], &m.PricingID, &m.Name, &m.Symbol, &m.TVTicker, &m.Decimals, &m.ObservedID, &m.ObservedName,
			&m.ObservedSymbol, &m.ObservedDecimals); err != nil {
			return nil, err
		}
		out[k] = m
	}
	return out, rows.Err()
}

// Registry returns a registry entry with its deployments; ok is false for an unknown id.
func (s *Store) Registry(ctx context.Context, pricingID string) (MarketToken, bool, error) {
	rows, err := s.pool.Query(ctx, q("read_registry"), pricingID)
	if err != nil {
		return MarketToken{}, false, err
	}
	defer rows.Close()
	t := MarketToken{PricingID: pricingID}
	found := false
	for rows.Next() {
		var chain, token *string
		var dec *int32
		if err := rows.Scan(&t.Name, &t.Symbol, &t.TVTicker, &chain, &token, &dec); err != nil {
			return t, false, err
		}
		found = true
		if chain != nil {
			t.Deployments = append(t.Deployments, Deployment{Chain: *chain, Token: *token, Decimals: *dec})
		}
	}
	return t, found, rows.Err()
}

// PricesAt returns the price point in force at t of each pricing id that has one.
func (s *Store) PricesAt(ctx context.Context, ids []string, t time.Time) (map[string]PricePoint, error) {
	rows, err := s.pool.Query(ctx, q("read_prices_at"), ids, t)
	if err != nil {
		return nil, err
	}
	return scanPrices(rows)
}

func scanPrices(rows pgx.Rows) (map[string]PricePoint, error) {
	defer rows.Close()
	out := map[string]PricePoint{}
	for rows.Next() {
		var p PricePoint
		if err := rows.Scan(&p.PricingID, &p.Time, &p.Price); err != nil {
			return nil, err
		}
		p.Time = p.Time.UTC()
		out[p.PricingID] = p
	}
	return out, rows.Err()
}

// DayPrice is a day's closing price.
type DayPrice struct {
	Day   time.Time
	Price float64
}

// PriceDays returns each pricing id's daily closes from day from to day to (sorted), led by
// the last close before from.
func (s *Store) PriceDays(ctx context.Context, ids []string, from, to time.Time) (map[string][]DayPrice, error) {
	rows, err := s.pool.Query(ctx, q("read_price_days"), ids, from.Format(dateFmt), to.Format(dateFmt))
	if err != nil {
		return nil, err
	}
	return scanPriceDays(rows)
}

func scanPriceDays(rows pgx.Rows) (map[string][]DayPrice, error) {
	defer rows.Close()
	out := map[string][]DayPrice{}
	for rows.Next() {
		var id string
		var d DayPrice
		if err := rows.Scan(&id, &d.Day, &d.Price); err != nil {
			return nil, err
		}
		d.Day = Day(d.Day)
		out[id] = append(out[id], d)
	}
	for _, l := range out {
		sort.Slice(l, func(i, j int) bool { return l[i].Day.Before(l[j].Day) })
	}
	return out, rows.Err()
}

// EntityWindow is what an operator entity's history and time series read: its day-over-day
// changes, what is known of their tokens, and the daily closes of the pricing ids those tokens
// can resolve to.
type EntityWindow struct {
	Changes []Change
	Metas   map[[2]string]TokenMeta
	Closes  map[string][]DayPrice
}

// EntityWindow reads an operator entity's window on chains in one round trip: natives maps
// each chain to its native coin's pricing id (the catalogue's), earliest is the first day the
// closes may start on and to the last.
func (s *Store) EntityWindow(ctx context.Context, entity string, chains []string, natives map[string]string, earliest, to time.Time) (EntityWindow, error) {
	ncs, nids := nativeArrays(natives)
	b := &pgx.Batch{}
	b.Queue(q("read_entity_changes"), entity, chains)
	b.Queue(q("read_entity_token_meta"), entity, chains)
	b.Queue(q("read_entity_price_days"), entity, chains, ncs, nids, earliest.Format(dateFmt), to.Format(dateFmt))
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var w EntityWindow
	var err error
	if w.Changes, err = scanChanges(br.Query()); err != nil {
		return w, err
	}
	if w.Metas, err = scanRows(br, scanTokenMetas); err != nil {
		return w, err
	}
	w.Closes, err = scanRows(br, scanPriceDays)
	return w, err
}

// nativeArrays are natives (chain → native pricing id) as the two arrays a statement unnests.
func nativeArrays(natives map[string]string) (chains, ids []string) {
	for c, id := range natives {
		chains, ids = append(chains, c), append(ids, id)
	}
	return chains, ids
}

// AttributionView is an address's attribution with its entities.
type AttributionView struct {
	Label, DepositServiceID string
	IsContract              bool
	Entity, Predicted       *Entity
}

func entityFrom(v [8]*string) *Entity {
	if v[0] == nil {
		return nil
	}
	return &Entity{ID: *v[0], Name: *v[1], Type: *v[2], Note: *v[3], Service: *v[4], Website: *v[5], Twitter: *v[6], LinkedIn: *v[7]}
}

// Attributions returns the attribution of each ref that has one.
func (s *Store) Attributions(ctx context.Context, refs []Ref) (map[Ref]AttributionView, error) {
	cts, as := refArrays(refs)
	rows, err := s.pool.Query(ctx, q("read_attributions"), cts, as)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[Ref]AttributionView{}
	for rows.Next() {
		var r Ref
		var v AttributionView
		var e, p [8]*string
		dest := []any{&r.ChainType, &r.Address, &v.Label, &v.DepositServiceID, &v.IsContract}
		for i := range e {
			dest = append(dest, &e[i])
		}
		for i := range p {
			dest = append(dest, &p[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		v.Entity, v.Predicted = entityFrom(e), entityFrom(p)
		out[r] = v
	}
	return out, rows.Err()
}

// Entities returns the operator entities of ids that exist.
func (s *Store) Entities(ctx context.Context, ids []string) (map[string]Entity, error) {
	rows, err := s.pool.Query(ctx, q("read_entities"), ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Entity{}
	for rows.Next() {
		var e Entity
		var tags string
		if err := rows.Scan(&e.ID, &e.Name, &e.Type, &e.Note, &e.Service, &e.Website, &e.Twitter, &e.LinkedIn, &e.Description, &tags); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &e.Tags); err != nil {
			return nil, fmt.Errorf("entity %s: populated tags: %w", e.ID, err)
		}
		out[e.ID] = e
	}
	return out, rows.Err()
}

// EntityMembers returns up to limit addresses of an operator entity of the chain types given.
func (s *Store) EntityMembers(ctx context.Context, entity string, chainTypes []string, limit int) ([]Ref, error) {
	rows, err := s.pool.Query(ctx, q("read_entity_members"), entity, chainTypes, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Ref
	for rows.Next() {
		var r Ref
		if err := rows.Scan(&r.ChainType, &r.Address); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Ranked is a holder (an address or an entity id) and its balance.
type Ranked struct {
	ID      string
	Balance *big.Int
}

// Subaccount is a Solana-style subaccount balance.
type Subaccount struct {
	Address, Owner, Chain, Token string
	Balance                      *big.Int
}

// Subaccounts returns up to limit subaccounts owned by owners holding one of tokens.
func (s *Store) Subaccounts(ctx context.Context, owners []string, tokens [][2]string, limit int) ([]Subaccount, error) {
	cs, ts := make([]string, len(tokens)), make([]string, len(tokens))
	for i, t := range tokens {
		cs[i], ts[i] = t[0], t[1]
	}
	rows, err := s.pool.Query(ctx, q("read_subaccounts"), owners, cs, ts, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Subaccount
	for rows.Next() {
		var sa Subaccount
		var bal string
		if err := rows.Scan(&sa.Address, &sa.Owner, &sa.Chain, &sa.Token, &bal); err != nil {
			return nil, err
		}
		if sa.Balance, err = parseInt(bal); err != nil {
			return nil, err
		}
		out = append(out, sa)
	}
	return out, rows.Err()
}

// AddressHolding is one address's balance of a token on a chain.
type AddressHolding struct {
	Ref
	Holding
}

// SetHoldings returns the current balances of each address of refs on chains.
func (s *Store) SetHoldings(ctx context.Context, refs []Ref, chains []string) ([]AddressHolding, error) {
	cts, as := refArrays(refs)
	rows, err := s.pool.Query(ctx, q("read_usd_inputs"), cts, as, chains)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AddressHolding
	for rows.Next() {
		var h AddressHolding
		var bal string
		if err := rows.Scan(&h.ChainType, &h.Address, &h.Chain, &h.Token, &bal); err != nil {
			return nil, err
		}
		if h.Balance, err = parseInt(bal); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
