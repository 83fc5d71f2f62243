// Package events turns the chain.* and intel.attributions.v1 records the transfers service
// consumes into store writes. Handlers are idempotent: the store writes only rows it does not
// have and rollups only from those, so a redelivered batch changes nothing.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/render"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"google.golang.org/protobuf/proto"
)

// Writer is the part of the store the consumers write through.
type Writer interface {
	WriteTransfers(ctx context.Context, rows []store.TransferRow) (int, error)
	WriteTransactions(ctx context.Context, rows []store.TransactionRow) (int, error)
	WriteSwaps(ctx context.Context, rows []store.SwapRow) (int, error)
	RemoveBlocks(ctx context.Context, chain string, orphaned, canonical []store.Block) (store.ReorgResult, error)
	ApplyAttributions(ctx context.Context, upserts []store.Attribution, deletes []store.AddressKey) error
}

// Handlers hold the consumers' handlers.
type Handlers struct {
	W   Writer
	Log *slog.Logger
}

func norm(chain, addr string) string { return address.Canonical(chain, addr) }

func hash(h string) string { return address.CanonicalHash(h) }

func amount(s string, signed bool) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("amount %q is not a base-10 integer", s)
	}
	if !signed && v.Sign() < 0 {
		return nil, fmt.Errorf("amount %q is negative", s)
	}
	if v.CmpAbs(maxNumeric) >= 0 {
		return nil, fmt.Errorf("amount %q has more than 78 digits", s)
	}
	return v, nil
}

var maxNumeric = new(big.Int).Exp(big.NewInt(10), big.NewInt(78), nil)

func usd(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	x := *v
	return &x
}

// writeRows is the handler writing a batch's rows with write, the records toRow rejects skipped
// with a warning.
func writeRows[M proto.Message, R any](h Handlers, what string, toRow func(M) (R, error),
	write func(context.Context, []R) (int, error)) eventbus.Handler[M] {
	return eventbus.WriteRows(func(m eventbus.Message[M]) (R, bool) {
		r, err := toRow(m.Msg)
		if err != nil {
			h.Log.Warn("skipping malformed "+what, "error", err, "partition", m.Partition, "offset", m.Offset)
		}
		return r, err == nil
	}, func(ctx context.Context, rows []R) error {
		_, err := write(ctx, rows)
		return err
	})
}

// TransferRow maps a Transfer event to a row.
func TransferRow(m *eventsv1.Transfer) (store.TransferRow, error) {
	if m.Id == "" || m.Chain == "" || m.TransactionHash == "" || m.BlockTimeMs <= 0 {
		return store.TransferRow{}, fmt.Errorf("transfer %q lacks id, chain, hash or block time", m.Id)
	}
	a, err := amount(m.Amount, false)
	if err != nil {
		return store.TransferRow{}, fmt.Errorf("transfer %s: %w", m.Id, err)
	}
	txh := hash(m.TransactionHash)
	id := m.Id
	if strings.HasPrefix(id, m.TransactionHash) {
		id = txh + id[len(m.TransactionHash):]
	}
	return store.TransferRow{
		Chain: m.Chain, ID: id, TxHash: txh, BlockHash: hash(m.BlockHash), BlockNumber: int64(m.BlockNumber),
		BlockTime: time.UnixMilli(m.BlockTimeMs).UTC(), TxIndex: int32(m.TxIndex), LogIndex: int32(m.LogIndex),
		From: norm(m.Chain, m.From), To: norm(m.Chain, m.To), Token: norm(m.Chain, m.TokenAddress), TokenID: m.TokenId,
		TokenName: m.TokenName, TokenSymbol: m.TokenSymbol, TokenDecimals: m.TokenDecimals, Amount: a,
		UnitValue: render.UnitValue(a, m.TokenDecimals), USD: usd(m.HistoricalUsd), Type: int16(m.Type),
		FromIsContract: m.FromIsContract, ToIsContract: m.ToIsContract,
	}, nil
}

// Transfers handles a batch of chain.transfers.v1.
func (h Handlers) Transfers(ctx context.Context, batch []eventbus.Message[*eventsv1.Transfer]) error {
	return writeRows(h, "transfer", TransferRow, h.W.WriteTransfers)(ctx, batch)
}

// Transactions handles a batch of chain.transactions.v1.
func (h Handlers) Transactions(ctx context.Context, batch []eventbus.Message[*eventsv1.Transaction]) error {
	return writeRows(h, "transaction", TransactionRow, h.W.WriteTransactions)(ctx, batch)
}

// TransactionRow maps a Transaction event to a row.
func TransactionRow(m *eventsv1.Transaction) (store.TransactionRow, error) {
	if m.Hash == "" || m.Chain == "" || m.BlockTimeMs <= 0 {
		return store.TransactionRow{}, fmt.Errorf("transaction %q lacks hash, chain or block time", m.Hash)
	}
	var nums [4]*big.Int
	for i, s := range []string{m.Value, m.GasPrice, m.EffectiveGasPrice, m.Fee} {
		v, err := amount(s, false)
		if err != nil {
			return store.TransactionRow{}, fmt.Errorf("transaction %s: %w", m.Hash, err)
		}
		nums[i] = v
	}
	return store.TransactionRow{
		Chain: m.Chain, Hash: hash(m.Hash), BlockHash: hash(m.BlockHash), BlockNumber: int64(m.BlockNumber),
		BlockTime: time.UnixMilli(m.BlockTimeMs).UTC(), TxIndex: int32(m.TxIndex), From: norm(m.Chain, m.From),
		To: norm(m.Chain, m.To), ContractCreated: norm(m.Chain, m.ContractCreated), Nonce: int64(m.Nonce), Success: m.Success,
		Value: nums[0], ValueUSD: usd(m.ValueUsd), GasUsed: int64(m.GasUsed), GasPrice: nums[1], EffectiveGasPrice: nums[2],
		Fee: nums[3], FeeUSD: usd(m.FeeUsd), MethodID: strings.ToLower(m.MethodId),
	}, nil
}

// SwapRow maps a Swap event to a row.
func SwapRow(m *eventsv1.Swap) (store.SwapRow, error) {
	if m.Id == "" || m.Chain == "" || m.TransactionHash == "" || m.BlockTimeMs <= 0 {
		return store.SwapRow{}, fmt.Errorf("swap %q lacks id, chain, hash or block time", m.Id)
	}
	a0, err := amount(m.Amount0, true)
	if err != nil {
		return store.SwapRow{}, fmt.Errorf("swap %s: %w", m.Id, err)
	}
	a1, err := amount(m.Amount1, true)
	if err != nil {
		return store.SwapRow{}, fmt.Errorf("swap %s: %w", m.Id, err)
	}
	txh := hash(m.TransactionHash)
	id := m.Id
	if strings.HasPrefix(id, m.TransactionHash) {
		id = txh + id[len(m.TransactionHash):]
	}
	return store.SwapRow{
		Chain: m.Chain, ID: id, TxHash: txh, BlockHash: hash(m.BlockHash), BlockNumber: int64(m.BlockNumber),
		BlockTime: time.UnixMilli(m.BlockTimeMs).UTC(), LogIndex: int32(m.LogIndex), Contract: norm(m.Chain, m.ContractAddress),
		Sender: norm(m.Chain, m.Sender), Receiver: norm(m.Chain, m.Receiver),
		Token0: norm(m.Chain, m.Token0), Token0ID: m.Token0Id, Token0Name: m.Token0Name, Token0Symbol: m.Token0Symbol,
		Token0Decimals: m.Token0Decimals, Amount0: a0,
		Token1: norm(m.Chain, m.Token1), Token1ID: m.Token1Id, Token1Name: m.Token1Name, Token1Symbol: m.Token1Symbol,
		Token1Decimals: m.Token1Decimals, Amount1: a1, USD: usd(m.HistoricalUsd), Valid: m.Valid, Protocol: m.Protocol,
	}, nil
}

// Swaps handles a batch of chain.swaps.v1.
func (h Handlers) Swaps(ctx context.Context, batch []eventbus.Message[*eventsv1.Swap]) error {
	return writeRows(h, "swap", SwapRow, h.W.WriteSwaps)(ctx, batch)
}

// Reorgs handles a batch of chain.reorgs.v1, one reorg after the other.
func (h Handlers) Reorgs(ctx context.Context, batch []eventbus.Message[*eventsv1.Reorg]) error {
	for _, m := range batch {
		if m.Tombstone || m.Msg.Chain == "" {
			continue
		}
		blocks := func(bs []*eventsv1.Reorg_Block) []store.Block {
			out := make([]store.Block, 0, len(bs))
			for _, b := range bs {
				if b.GetHash() != "" {
					out = append(out, store.Block{Number: int64(b.Number), Hash: hash(b.Hash)})
				}
			}
			return out
		}
		orphaned := blocks(m.Msg.Orphaned)
		res, err := h.W.RemoveBlocks(ctx, m.Msg.Chain, orphaned, blocks(m.Msg.Canonical))
		if err != nil {
			return err
		}
		h.Log.Info("reorg applied", "chain", m.Msg.Chain, "orphaned_blocks", len(orphaned), "transfers_removed", res.Transfers,
			"swaps_removed", res.Swaps, "transactions_removed", res.Transactions, "transfers_restored", res.RestoredTransfers,
			"swaps_restored", res.RestoredSwaps, "transactions_restored", res.RestoredTransactions)
	}
	return nil
}

func entity(e *eventsv1.Entity) *store.Entity {
	if e == nil || e.Id == "" {
		return nil
	}
	return &store.Entity{ID: e.Id, Name: e.Name, Type: e.Type, Note: e.Note, Service: e.Service, Website: e.Website,
		Twitter: e.Twitter, LinkedIn: e.Linkedin}
}

// Attributions handles a batch of intel.attributions.v1: per key, the last record of the batch
// decides (a tombstone deletes); the store keeps an upsert only when its version is newer.
func (h Handlers) Attributions(ctx context.Context, batch []eventbus.Message[*eventsv1.Attribution]) error {
	type state struct {
		a    *store.Attribution
		dead bool
	}
	last := map[store.AddressKey]state{}
	var order []store.AddressKey
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
		if a, err := address.Normalize(chainType(ct), addr); err == nil {
			addr = a
		}
		k := store.AddressKey{ChainType: ct, Address: addr}
		if _, seen := last[k]; !seen {
			order = append(order, k)
		}
		if m.Tombstone {
			last[k] = state{dead: true}
			continue
		}
		if prev := last[k]; prev.a != nil && prev.a.Version > m.Msg.Version {
			continue
		}
		last[k] = state{a: &store.Attribution{
			ChainType: ct, Address: addr, Entity: entity(m.Msg.Entity), Label: m.Msg.Label, Predicted: entity(m.Msg.PredictedEntity),
			DepositServiceID: m.Msg.DepositServiceId, IsContract: m.Msg.IsContract, Version: m.Msg.Version,
			UpdatedAt: time.UnixMilli(m.Msg.UpdatedAtMs).UTC(),
		}}
	}
	var ups []store.Attribution
	var dels []store.AddressKey
	for _, k := range order {
		if st := last[k]; st.dead {
			dels = append(dels, k)
		} else {
			ups = append(ups, *st.a)
		}
	}
	return h.W.ApplyAttributions(ctx, ups, dels)
}

func chainType(s string) chains.Type { return chains.Type(s) }

// Forgetter drops a caller's cached user-labels answers (app.LabelCache).
type Forgetter interface {
	Forget(user string, keys []string)
}

// UserChanges makes the label cache drop what each change on user.changes.v1 makes stale: the
// caller's entries of the addresses it names, or all the caller's entries when it names none.
// An alert's change (KIND_ALERT) names no address and changes no label: it is skipped, not read
// as "all of the caller's entries". Forgetting twice is forgetting once, so redelivery is
// harmless.
func UserChanges(f Forgetter) eventbus.Handler[*eventsv1.UserChange] {
	return func(ctx context.Context, batch []eventbus.Message[*eventsv1.UserChange]) error {
		for _, m := range batch {
			if m.Tombstone || m.Msg.GetUserId() == "" || m.Msg.GetKind() == eventsv1.UserChange_KIND_ALERT {
				continue
			}
			keys := make([]string, 0, len(m.Msg.GetAddresses()))
			for _, a := range m.Msg.GetAddresses() {
				addr := a.GetAddress()
				if n, err := address.Normalize(chainType(a.GetChainType()), addr); err == nil {
					addr = n
				}
				keys = append(keys, a.GetChainType()+":"+addr)
			}
			f.Forget(m.Msg.GetUserId(), keys)
		}
		return nil
	}
}
