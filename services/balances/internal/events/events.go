// Package events turns the records the balances service consumes (chain.balances.v1,
// chain.reorgs.v1, market.tokens.v1, market.prices.v1, intel.attributions.v1) into store
// writes. Every handler is idempotent: the store ignores what it already has, so a redelivered
// batch changes nothing, and the consumer commits offsets only after the write commits.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// Writer is the part of the store the consumers write through.
type Writer interface {
	AppendObservations(ctx context.Context, obs []store.Observation) error
	ApplyReorg(ctx context.Context, chain string, from int64, orphaned, canonical []string) (store.ReorgResult, error)
	ApplyTokens(ctx context.Context, ups []store.MarketToken, deleted []string) error
	WritePrices(ctx context.Context, ps []store.PricePoint) error
	ApplyAttributions(ctx context.Context, as []store.Attribution) (int, error)
}

// Handlers hold the consumers' handlers.
type Handlers struct {
	W   Writer
	Log *slog.Logger
	// DeepReorg, if set, is told of each reorg that reached pruned history (the metric operators
	// alert on).
	DeepReorg func(ctx context.Context, chain string)
}

func norm(chain, addr string) string { return address.Canonical(chain, addr) }

func hash(h string) string { return address.CanonicalHash(h) }

var maxNumeric = new(big.Int).Exp(big.NewInt(10), big.NewInt(78), nil)

// Observation maps a BalanceObservation to a store row.
func Observation(m *eventsv1.BalanceObservation) (store.Observation, error) {
	if m.Chain == "" || m.Address == "" || m.BlockTimeMs <= 0 {
		return store.Observation{}, fmt.Errorf("observation lacks chain, address or block time")
	}
	if _, ok := chains.Lookup(m.Chain); !ok {
		return store.Observation{}, fmt.Errorf("observation of unknown chain %q", m.Chain)
	}
	v, ok := new(big.Int).SetString(m.Balance, 10)
	if !ok || v.Sign() < 0 || v.Cmp(maxNumeric) >= 0 {
		return store.Observation{}, fmt.Errorf("observation balance %q is not a non-negative integer of at most 78 digits", m.Balance)
	}
	if m.BlockNumber > math.MaxInt64 {
		return store.Observation{}, fmt.Errorf("observation block %d out of range", m.BlockNumber)
	}
	return store.Observation{
		Chain: m.Chain, Address: norm(m.Chain, m.Address), Token: norm(m.Chain, m.TokenAddress),
		BlockNumber: int64(m.BlockNumber), BlockHash: hash(m.BlockHash), BlockTime: time.UnixMilli(m.BlockTimeMs).UTC(),
		Balance: v, Owner: norm(m.Chain, m.OwnerAddress), Kind: m.SubaccountKind,
		TokenID: m.TokenId, TokenName: m.TokenName, TokenSymbol: m.TokenSymbol, TokenDecimals: m.TokenDecimals,
	}, nil
}

// Balances handles a batch of chain.balances.v1: it appends the batch to observations (the
// Applier folds it into the read models) and returns, so offsets are committed once the
// observations are durable.
func (h Handlers) Balances(ctx context.Context, batch []eventbus.Message[*eventsv1.BalanceObservation]) error {
	rows := make([]store.Observation, 0, len(batch))
	for _, m := range batch {
		if m.Tombstone {
			continue
		}
		o, err := Observation(m.Msg)
		if err != nil {
			h.Log.Warn("skipping malformed balance observation", "error", err, "partition", m.Partition, "offset", m.Offset)
			continue
		}
		rows = append(rows, o)
	}
	return h.W.AppendObservations(ctx, rows)
}

// Reorgs handles a batch of chain.reorgs.v1, one reorg after the other.
func (h Handlers) Reorgs(ctx context.Context, batch []eventbus.Message[*eventsv1.Reorg]) error {
	for _, m := range batch {
		if m.Tombstone || m.Msg.Chain == "" {
			continue
		}
		res, err := h.W.ApplyReorg(ctx, m.Msg.Chain, lowestBlock(m.Msg), blockHashes(m.Msg.Orphaned), blockHashes(m.Msg.Canonical))
		if err != nil {
			return err
		}
		h.Log.Info("reorg applied", "chain", m.Msg.Chain, "observations_voided", res.Voided,
			"observations_restored", res.Restored, "balances_recomputed", res.Keys)
		if res.BeforeHorizon > 0 || res.PastPruned {
			h.Log.Warn("reorg reaches history the pruner thinned (older than the pruning horizon); its fallback saw only the kept observations (raise BALANCES_OBSERVATION_RETENTION above the deepest reorg, and keep the reorg consumer's lag below it)",
				"chain", m.Msg.Chain, "observations_before_horizon", res.BeforeHorizon, "past_pruned_blocks", res.PastPruned,
				"common_ancestor", m.Msg.CommonAncestorNumber)
			if h.DeepReorg != nil {
				h.DeepReorg(ctx, m.Msg.Chain)
			}
		}
	}
	return nil
}

// blockHashes are the canonical hashes of blocks.
func blockHashes(bs []*eventsv1.Reorg_Block) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		if b.GetHash() != "" {
			out = append(out, hash(b.Hash))
		}
	}
	return out
}

// lowestBlock is the lowest number of the blocks a reorg orphans or makes canonical again (0:
// none it names has one).
func lowestBlock(r *eventsv1.Reorg) int64 {
	var low uint64
	for _, b := range append(append([]*eventsv1.Reorg_Block(nil), r.Orphaned...), r.Canonical...) {
		if n := b.GetNumber(); b.GetHash() != "" && n > 0 && (low == 0 || n < low) {
			low = n
		}
	}
	return int64(min(low, math.MaxInt64))
}

// Tokens handles a batch of market.tokens.v1 (compacted; a tombstone deletes the pricing id).
func (h Handlers) Tokens(ctx context.Context, batch []eventbus.Message[*eventsv1.MarketToken]) error {
	last := map[string]*eventsv1.MarketToken{}
	var order []string
	for _, m := range batch {
		id := m.Key
		if !m.Tombstone && m.Msg.PricingId != "" {
			id = m.Msg.PricingId
		}
		if id == "" {
			continue
		}
		if _, seen := last[id]; !seen {
			order = append(order, id)
		}
		if m.Tombstone {
			last[id] = nil
		} else {
			last[id] = m.Msg
		}
	}
	var ups []store.MarketToken
	var dels []string
	for _, id := range order {
		t := last[id]
		if t == nil {
			dels = append(dels, id)
			continue
		}
		mt := store.MarketToken{PricingID: id, Name: t.Name, Symbol: t.Symbol, TVTicker: t.TvTicker}
		for _, d := range t.Deployments {
			if _, ok := chains.Lookup(d.Chain); !ok {
				continue
			}
			mt.Deployments = append(mt.Deployments, store.Deployment{Chain: d.Chain, Token: norm(d.Chain, d.Address), Decimals: d.Decimals})
		}
		ups = append(ups, mt)
	}
	return h.W.ApplyTokens(ctx, ups, dels)
}

// Prices handles a batch of market.prices.v1.
func (h Handlers) Prices(ctx context.Context, batch []eventbus.Message[*eventsv1.Price]) error {
	ps := make([]store.PricePoint, 0, len(batch))
	for _, m := range batch {
		if m.Tombstone || m.Msg.PricingId == "" || m.Msg.TimeMs <= 0 || math.IsNaN(m.Msg.Price) || math.IsInf(m.Msg.Price, 0) || m.Msg.Price < 0 {
			continue
		}
		ps = append(ps, store.PricePoint{PricingID: m.Msg.PricingId, Time: time.UnixMilli(m.Msg.TimeMs).UTC(), Price: m.Msg.Price})
	}
	return h.W.WritePrices(ctx, ps)
}

func entity(e *eventsv1.Entity) *store.Entity {
	if e == nil || e.Id == "" {
		return nil
	}
	out := &store.Entity{ID: e.Id, Name: e.Name, Type: e.Type, Note: e.Note, Service: e.Service, Website: e.Website,
		Twitter: e.Twitter, LinkedIn: e.Linkedin, Description: e.Description, Tags: []store.Tag{}, Version: e.Version}
	for _, t := range e.PopulatedTags {
		out.Tags = append(out.Tags, store.Tag{ID: t.Id, Label: t.Label, Rank: t.Rank, Params: t.TagParams, DisablePage: t.DisablePage,
			ExcludeEntities: t.ExcludeEntities, Chain: t.Chain})
	}
	return out
}

// Attributions handles a batch of intel.attributions.v1: per address the newest version of the
// batch decides (a tombstone deletes); the store moves the balances of relabelled addresses.
func (h Handlers) Attributions(ctx context.Context, batch []eventbus.Message[*eventsv1.Attribution]) error {
	last := map[[2]string]store.Attribution{}
	var order [][2]string
	for _, m := range batch {
		ct, addr, ok := eventsv1.SplitAttributionKey(m.Key)
		if !m.Tombstone {
			ct, addr = m.Msg.ChainType, m.Msg.Address
			ok = ct != "" && addr != ""
		}
		if !ok {
			h.Log.Warn("skipping attribution without chain type and address", "key", m.Key, "offset", m.Offset)
			continue
		}
		if a, err := address.Normalize(chains.Type(ct), addr); err == nil {
			addr = a
		}
		k := [2]string{ct, addr}
		prev, seen := last[k]
		if !seen {
			order = append(order, k)
		}
		if m.Tombstone {
			last[k] = store.Attribution{ChainType: ct, Address: addr, Tombstone: true}
			continue
		}
		if seen && !prev.Tombstone && prev.Version > m.Msg.Version {
			continue
		}
		last[k] = store.Attribution{ChainType: ct, Address: addr, Entity: entity(m.Msg.Entity), Predicted: entity(m.Msg.PredictedEntity),
			Label: m.Msg.Label, DepositServiceID: m.Msg.DepositServiceId, IsContract: m.Msg.IsContract, Version: m.Msg.Version}
	}
	as := make([]store.Attribution, 0, len(order))
	for _, k := range order {
		as = append(as, last[k])
	}
	moved, err := h.W.ApplyAttributions(ctx, as)
	if err == nil && moved > 0 {
		h.Log.Debug("relabelled addresses moved between entities", "addresses", moved)
	}
	return err
}
