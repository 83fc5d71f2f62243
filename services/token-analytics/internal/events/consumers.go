// Package events is the token-analytics service's Kafka side: the consumers that keep the flow
// rollups, the per-block figures of /networks/status, the registry's on-chain discoveries, address classes and reserve balances, and the
// relay that publishes the outbox (market.tokens.v1, market.prices.v1).
package events

import (
	"context"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/render"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// Store is what the consumers write.
type Store interface {
	ApplyFlows(ctx context.Context, fs []app.Flow) error
	ApplyReorg(ctx context.Context, chain string, orphaned, canonical []string) error
	ApplyClasses(ctx context.Context, cs []app.ClassChange) error
	UpsertTokens(ctx context.Context, us []app.TokenUpdate) error
	AddReserveBalances(ctx context.Context, bs []app.ReserveBalance) error
	ApplyBlocks(ctx context.Context, bs []app.BlockStat) error
}

// Handlers are the consumers' batch handlers. Every one is idempotent: a redelivered batch
// changes nothing.
type Handlers struct {
	Store  Store
	Chains *chains.Set
	// Reserves are the non-circulating addresses whose balances are kept ("<chain>:<address>"),
	// of the token Reserve ("<chain>:<contract>").
	Reserves map[string]bool
	Reserve  string
}

// Normalize is the stored form of an address on a chain: lower case on EVM chains.
func Normalize(chain, addr string) string {
	if c, ok := chains.Lookup(chain); ok && c.Type == chains.TypeEVM {
		return strings.ToLower(addr)
	}
	return addr
}

func (h Handlers) chainType(chain string) (string, bool) {
	if h.Chains != nil && !h.Chains.Has(chain) {
		return "", false
	}
	c, ok := chains.Lookup(chain)
	if !ok {
		return "", false
	}
	return string(c.Type), true
}

// Transfers counts transfers in the rollups.
func (h Handlers) Transfers(ctx context.Context, batch []eventbus.Message[*eventsv1.Transfer]) error {
	fs := make([]app.Flow, 0, len(batch))
	for _, m := range batch {
		t := m.Msg
		if m.Tombstone || t.Id == "" {
			continue
		}
		ct, ok := h.chainType(t.Chain)
		if !ok {
			continue
		}
		fs = append(fs, app.Flow{Chain: t.Chain, ID: t.Id, ChainType: ct, BlockHash: t.BlockHash,
			Time: time.UnixMilli(t.BlockTimeMs), Token: Normalize(t.Chain, t.TokenAddress),
			From: Normalize(t.Chain, t.From), To: Normalize(t.Chain, t.To),
			Value: Units(t.Amount, t.TokenDecimals), USD: t.GetHistoricalUsd()})
	}
	return h.Store.ApplyFlows(ctx, fs)
}

// Transactions keep, per block, its transaction count and lowest gas price for
// /networks/status: a transaction with index i says its block has at least i+1. Only an EVM
// transaction's gas price is one (wei per gas, shown in gwei): on other chains the field is not
// wei per unit of gas (the simulator puts a per-vbyte rate on bitcoin and dogecoin, 0 on solana,
// tron and ton), so it is not read there and their gasFee stays null.
func (h Handlers) Transactions(ctx context.Context, batch []eventbus.Message[*eventsv1.Transaction]) error {
	bs := make([]app.BlockStat, 0, len(batch))
	for _, m := range batch {
		t := m.Msg
		if m.Tombstone || t.BlockHash == "" {
			continue
		}
		ct, ok := h.chainType(t.Chain)
		if !ok {
			continue
		}
		b := app.BlockStat{Chain: t.Chain, Hash: t.BlockHash, Number: t.BlockNumber, Time: time.UnixMilli(t.BlockTimeMs).UTC(),
			Transactions: int(t.TxIndex) + 1}
		price := t.EffectiveGasPrice
		if price == "" {
			price = t.GasPrice
		}
		if v, ok := new(big.Float).SetString(price); ok && price != "" && ct == string(chains.TypeEVM) {
			f, _ := v.Float64()
			b.MinGasPrice = &f
		}
		bs = append(bs, b)
	}
	return h.Store.ApplyBlocks(ctx, bs)
}

// Blocks record every block ingest indexed, an empty one too, so /networks/status's tip is the
// newest indexed block and not the newest holding a transaction; a block's transaction count is
// its own, the transactions of chain.transactions.v1 only ever raise it.
func (h Handlers) Blocks(ctx context.Context, batch []eventbus.Message[*eventsv1.Block]) error {
	bs := make([]app.BlockStat, 0, len(batch))
	for _, m := range batch {
		b := m.Msg
		if m.Tombstone || b.Hash == "" {
			continue
		}
		if _, ok := h.chainType(b.Chain); !ok {
			continue
		}
		bs = append(bs, app.BlockStat{Chain: b.Chain, Hash: b.Hash, Number: b.Number, Time: time.UnixMilli(b.TimeMs).UTC(),
			Transactions: int(b.Transactions)})
	}
	return h.Store.ApplyBlocks(ctx, bs)
}

// Units is an exact amount in the smallest unit as a float of token units (0 if unparsable).
func Units(amount string, decimals int32) float64 {
	v, ok := new(big.Float).SetString(amount)
	if !ok {
		return 0
	}
	f, _ := v.Float64()
	return f / math.Pow10(int(decimals))
}

// Swaps learn DEX pools: a swap's contract counts as a DEX counterparty from then on (the swap's
// own value is in the token transfers into and out of the pool).
func (h Handlers) Swaps(ctx context.Context, batch []eventbus.Message[*eventsv1.Swap]) error {
	var cs []app.ClassChange
	for _, m := range batch {
		s := m.Msg
		if m.Tombstone || s.ContractAddress == "" {
			continue
		}
		ct, ok := h.chainType(s.Chain)
		if !ok {
			continue
		}
		cs = append(cs, app.ClassChange{ChainType: ct, Address: Normalize(s.Chain, s.ContractAddress), IsPool: true})
	}
	return h.Store.ApplyClasses(ctx, cs)
}

// Reorgs take orphaned blocks' transfers out of the rollups.
func (h Handlers) Reorgs(ctx context.Context, batch []eventbus.Message[*eventsv1.Reorg]) error {
	for _, m := range batch {
		r := m.Msg
		if m.Tombstone || r.Chain == "" {
			continue
		}
		if _, ok := h.chainType(r.Chain); !ok {
			continue
		}
		var orphaned, canonical []string
		for _, b := range r.Orphaned {
			orphaned = append(orphaned, b.Hash)
		}
		for _, b := range r.Canonical {
			canonical = append(canonical, b.Hash)
		}
		if err := h.Store.ApplyReorg(ctx, r.Chain, orphaned, canonical); err != nil {
			return err
		}
	}
	return nil
}

// Attributions keep each address's class (its entity's type, else the type of the entity whose
// deposit address it is), the types of the entities they name, and what top_flow shows of it.
func (h Handlers) Attributions(ctx context.Context, batch []eventbus.Message[*eventsv1.Attribution]) error {
	cs := make([]app.ClassChange, 0, len(batch))
	for _, m := range batch {
		if m.Tombstone {
			ct, addr, ok := eventsv1.SplitAttributionKey(m.Key)
			if ok {
				cs = append(cs, app.ClassChange{ChainType: ct, Address: addr, SetsEntity: true})
			}
			continue
		}
		a := m.Msg
		addr := a.Address
		if a.ChainType == string(chains.TypeEVM) {
			addr = strings.ToLower(addr)
		}
		c := app.ClassChange{ChainType: a.ChainType, Address: addr, SetsEntity: true, Version: a.Version, DepositService: a.DepositServiceId,
			Info: &app.AddressAttribution{Entity: entity(a.Entity), Label: a.Label, PredictedEntity: entity(a.PredictedEntity),
				DepositServiceID: a.DepositServiceId, Contract: a.IsContract}}
		if a.Entity != nil {
			c.EntityType = a.Entity.Type
		}
		for _, e := range []*eventsv1.Entity{a.Entity, a.PredictedEntity} {
			if e != nil && e.Id != "" {
				c.Entities = append(c.Entities, app.EntityType{ID: e.Id, Type: e.Type, Version: e.Version})
			}
		}
		cs = append(cs, c)
	}
	return h.Store.ApplyClasses(ctx, cs)
}

func entity(e *eventsv1.Entity) *app.Entity {
	if e == nil || e.Id == "" {
		return nil
	}
	return render.EntityOf(&render.StoredEntity{ID: e.Id, Name: e.Name, Type: e.Type, Note: e.Note, Service: e.Service,
		Website: e.Website, Twitter: e.Twitter, LinkedIn: e.Linkedin})
}

// Tokens add on-chain discoveries that carry a pricing id to the registry.
func (h Handlers) Tokens(ctx context.Context, batch []eventbus.Message[*eventsv1.Token]) error {
	var us []app.TokenUpdate
	for _, m := range batch {
		t := m.Msg
		if m.Tombstone || t.PricingId == "" || t.Address == "" {
			continue
		}
		if _, ok := h.chainType(t.Chain); !ok {
			continue
		}
		us = append(us, app.TokenUpdate{PricingID: t.PricingId, Name: t.Name, Symbol: t.Symbol,
			Deployments: []app.Deployment{{Chain: t.Chain, Address: Normalize(t.Chain, t.Address), Decimals: t.Decimals}}})
	}
	return h.Store.UpsertTokens(ctx, us)
}

// Balances keep the exact balances of the configured non-circulating addresses, only.
func (h Handlers) Balances(ctx context.Context, batch []eventbus.Message[*eventsv1.BalanceObservation]) error {
	if len(h.Reserves) == 0 {
		return nil
	}
	var bs []app.ReserveBalance
	for _, m := range batch {
		b := m.Msg
		if m.Tombstone || b.OwnerAddress != "" {
			continue
		}
		addr, tok := Normalize(b.Chain, b.Address), Normalize(b.Chain, b.TokenAddress)
		if !h.Reserves[b.Chain+":"+addr] || h.Reserve != b.Chain+":"+tok {
			continue
		}
		bs = append(bs, app.ReserveBalance{Chain: b.Chain, Address: addr, Token: tok, BlockNumber: b.BlockNumber,
			BlockHash: b.BlockHash, Balance: b.Balance})
	}
	return h.Store.AddReserveBalances(ctx, bs)
}
