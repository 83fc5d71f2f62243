// Package events holds the intelligence service's Kafka consumers: transfers feed the
// heuristics, the entity activity figures and the contract flags, transactions and
// chain.contracts the contract registry, chain.tokens the token metadata, balances the
// predictions' USD figures, and the market topics the token registry and prices. Every
// handler is idempotent.
package events

import (
	"context"
	"math/big"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/evmcode"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// Handlers turns records into store writes.
type Handlers struct {
	Store *store.Store
}

func norm(chain, addr string) (chains.Type, string, bool) {
	c, ok := chains.Lookup(chain)
	if !ok || addr == "" {
		return "", "", false
	}
	n, err := address.Normalize(c.Type, addr)
	if err != nil {
		return "", "", false
	}
	return c.Type, n, true
}

// Transfers records transfer pairs and activity (chain.transfers.v1), and marks as contracts
// the addresses a transfer says hold code (from_is_contract, to_is_contract: a DEX pool, say,
// whose creation intelligence never saw). The marks are not taken back by a reorg: code at an
// address stays whichever block the transfer ended in.
func (h Handlers) Transfers(ctx context.Context, batch []eventbus.Message[*eventsv1.Transfer]) error {
	if err := h.Store.MarkContracts(ctx, transferContracts(batch)); err != nil {
		return err
	}
	facts := make([]store.TransferFact, 0, len(batch))
	for _, m := range batch {
		f := store.TransferFact{Offset: store.Offset{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}}
		if !m.Tombstone {
			t := m.Msg
			ct, from, ok1 := norm(t.Chain, t.From)
			_, to, ok2 := norm(t.Chain, t.To)
			if ok1 && ok2 {
				f.Chain, f.ChainType, f.BlockHash, f.ID, f.From, f.To, f.TimeMs = t.Chain, string(ct), t.BlockHash, t.Id, from, to, t.BlockTimeMs
				if t.HistoricalUsd != nil {
					f.USD = *t.HistoricalUsd
				}
			}
		}
		// Unusable records still advance the partition's applied offset.
		facts = append(facts, f)
	}
	return h.Store.ApplyTransfers(ctx, facts)
}

// transferContracts are the addresses the batch's transfers flag as contracts.
func transferContracts(batch []eventbus.Message[*eventsv1.Transfer]) []store.ContractAddress {
	var out []store.ContractAddress
	for _, m := range batch {
		if m.Tombstone {
			continue
		}
		for _, side := range []struct {
			addr     string
			contract bool
		}{{m.Msg.From, m.Msg.FromIsContract}, {m.Msg.To, m.Msg.ToIsContract}} {
			if !side.contract {
				continue
			}
			if ct, a, ok := norm(m.Msg.Chain, side.addr); ok {
				out = append(out, store.ContractAddress{ChainType: string(ct), Address: a})
			}
		}
	}
	return out
}

// Reorgs takes the transfers of orphaned blocks back out of the heuristic inputs, and applies
// those of blocks named canonical again (chain.reorgs.v1). A redelivered reorg changes nothing.
func (h Handlers) Reorgs(ctx context.Context, batch []eventbus.Message[*eventsv1.Reorg]) error {
	for _, m := range batch {
		if m.Tombstone || m.Msg.Chain == "" {
			continue
		}
		hashes := func(bs []*eventsv1.Reorg_Block) []string {
			out := make([]string, 0, len(bs))
			for _, b := range bs {
				if b.GetHash() != "" {
					out = append(out, b.GetHash())
				}
			}
			return out
		}
		if err := h.Store.ApplyReorg(ctx, m.Msg.Chain, hashes(m.Msg.Orphaned), hashes(m.Msg.Canonical)); err != nil {
			return err
		}
	}
	return nil
}

// Transactions records contract creations (chain.transactions.v1).
func (h Handlers) Transactions(ctx context.Context, batch []eventbus.Message[*eventsv1.Transaction]) error {
	return eventbus.WriteRows(creation, h.Store.ApplyContracts)(ctx, batch)
}

func creation(m eventbus.Message[*eventsv1.Transaction]) (store.Contract, bool) {
	t := m.Msg
	// A creation that left no code (a constructor that self-destructed or returned none) made
	// no contract: ingest reads the code of every creation and publishes no record of such an
	// address, so it stays an account here too.
	if t.ContractCreated == "" || !t.Success || t.BytecodeSize == 0 {
		return store.Contract{}, false
	}
	ct, addr, ok := norm(t.Chain, t.ContractCreated)
	if !ok {
		return store.Contract{}, false
	}
	_, dep, _ := norm(t.Chain, t.From)
	return store.Contract{Chain: t.Chain, ChainType: string(ct), Address: addr, Deployer: dep,
		DeployTxHash: t.Hash, BlockTimeMs: t.BlockTimeMs, BytecodeSize: int(t.BytecodeSize)}, true
}

// Contracts records what the chain says of contracts: code, selectors, proxy implementation,
// and the creation when known (chain.contracts.v1).
func (h Handlers) Contracts(ctx context.Context, batch []eventbus.Message[*eventsv1.Contract]) error {
	return eventbus.WriteRows(contract, h.Store.ApplyContracts)(ctx, batch)
}

func contract(m eventbus.Message[*eventsv1.Contract]) (store.Contract, bool) {
	c := m.Msg
	ct, addr, ok := norm(c.Chain, c.Address)
	// An EIP-7702 delegation is an EOA's code: earlier ingest releases published such accounts
	// as contracts (migration 17 removed what they stored).
	if !ok || c.Bytecode == "" || evmcode.IsDelegationHex(c.Bytecode) {
		return store.Contract{}, false
	}
	_, dep, _ := norm(c.Chain, c.Deployer)
	_, idep, _ := norm(c.Chain, c.InternalDeployer)
	_, proxy, _ := norm(c.Chain, c.ProxyImplementation)
	return store.Contract{Chain: c.Chain, ChainType: string(ct), Address: addr, Deployer: dep, DeployTxHash: c.DeployTxHash,
		BlockTimeMs: c.BlockTimeMs, BytecodeSize: (len(c.Bytecode) - 2) / 2, CodeKnown: true, Bytecode: c.Bytecode,
		FunctionSighashes: c.FunctionSighashes, ProxyImplementation: proxy, InternalDeployer: idep}, true
}

// Tokens records token metadata (chain.tokens.v1).
func (h Handlers) Tokens(ctx context.Context, batch []eventbus.Message[*eventsv1.Token]) error {
	return eventbus.WriteRows(token, h.Store.ApplyTokens)(ctx, batch)
}

func token(m eventbus.Message[*eventsv1.Token]) (store.Token, bool) {
	t := m.Msg
	_, addr, ok := norm(t.Chain, t.Address)
	if !ok {
		return store.Token{}, false
	}
	_, dep, _ := norm(t.Chain, t.Deployer)
	return store.Token{Chain: t.Chain, Address: addr, Name: t.Name, Symbol: t.Symbol, Decimals: int(t.Decimals),
		PricingID: t.PricingId, Deployer: dep, DeployTx: t.DeployTxHash}, true
}

// Balances keeps the latest balances of candidate addresses (chain.balances.v1).
func (h Handlers) Balances(ctx context.Context, batch []eventbus.Message[*eventsv1.BalanceObservation]) error {
	return eventbus.WriteRows(balance, h.Store.ApplyBalances)(ctx, batch)
}

func balance(m eventbus.Message[*eventsv1.BalanceObservation]) (store.Balance, bool) {
	b := m.Msg
	if b.OwnerAddress != "" {
		return store.Balance{}, false
	}
	ct, addr, ok := norm(b.Chain, b.Address)
	if !ok {
		return store.Balance{}, false
	}
	tok := ""
	if b.TokenAddress != "" {
		if _, tok, ok = norm(b.Chain, b.TokenAddress); !ok {
			return store.Balance{}, false
		}
	}
	v, ok := new(big.Int).SetString(b.Balance, 10)
	if !ok || v.Sign() < 0 {
		return store.Balance{}, false
	}
	return store.Balance{Chain: b.Chain, ChainType: string(ct), Address: addr, TokenAddress: tok, TokenID: b.TokenId,
		Decimals: int(b.TokenDecimals), Balance: v, BlockNumber: b.BlockNumber}, true
}

// MarketTokens keeps the token registry (market.tokens.v1, compacted).
func (h Handlers) MarketTokens(ctx context.Context, batch []eventbus.Message[*eventsv1.MarketToken]) error {
	latest := map[string]*eventsv1.MarketToken{}
	var order []string
	for _, m := range batch {
		key := m.Key // the pricing id
		if !m.Tombstone && m.Msg.PricingId != "" {
			key = m.Msg.PricingId
		}
		if key == "" {
			continue
		}
		if _, seen := latest[key]; !seen {
			order = append(order, key)
		}
		if m.Tombstone {
			latest[key] = nil
		} else {
			latest[key] = m.Msg
		}
	}
	var ts []store.MarketToken
	var deleted []string
	for _, k := range order {
		t := latest[k]
		if t == nil {
			deleted = append(deleted, k)
			continue
		}
		mt := store.MarketToken{PricingID: t.PricingId, Name: t.Name, Symbol: t.Symbol}
		for _, d := range t.Deployments {
			a := d.Address
			if a != "" {
				_, n, ok := norm(d.Chain, a)
				if !ok {
					continue
				}
				a = n
			}
			mt.Deployments = append(mt.Deployments, store.Deployment{Chain: d.Chain, Address: a, Decimals: int(d.Decimals)})
		}
		ts = append(ts, mt)
	}
	return h.Store.ApplyMarketTokens(ctx, ts, deleted)
}

// Prices records price points (market.prices.v1).
func (h Handlers) Prices(ctx context.Context, batch []eventbus.Message[*eventsv1.Price]) error {
	return eventbus.WriteRows(func(m eventbus.Message[*eventsv1.Price]) (store.PricePoint, bool) {
		return store.PricePoint{PricingID: m.Msg.PricingId, TimeMs: m.Msg.TimeMs, Price: m.Msg.Price}, m.Msg.PricingId != "" && m.Msg.Price >= 0
	}, h.Store.ApplyPrices)(ctx, batch)
}
