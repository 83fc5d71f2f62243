package app

import (
	"context"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// UnenrichedTransfers answers GET /transfers/unenriched: /transfers's page with each address as
// its address and chain only (no attribution or label is read).
func (a *App) UnenrichedTransfers(ctx context.Context, q query.Transfers) (TransferList, error) {
	return a.transferList(ctx, q, false)
}

// TransfersOfTx answers GET /transfers/tx/{hash}: the transfers of the transaction on every
// configured chain it is on (or on chain), of type typ when given, in chain then log order. A
// transaction on none of them is a 404.
func (a *App) TransfersOfTx(ctx context.Context, hash, chain, typ string) ([]Transfer, error) {
	txs, err := a.store.TransactionsByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	var rows []store.TransferRow
	found := false
	for _, t := range txs {
		if !a.chains.Has(t.Chain) || chain != "" && t.Chain != chain {
			continue
		}
		found = true
		var times []time.Time
		for _, o := range txs {
			if o.Chain == t.Chain {
				times = append(times, o.BlockTime)
			}
		}
		trs, err := a.store.TransfersOfTx(ctx, t.Chain, t.Hash, times)
		if err != nil {
			return nil, err
		}
		for _, r := range trs {
			if typ == "" || transferType(r) == typ {
				rows = append(rows, r)
			}
		}
	}
	if !found {
		if chain != "" {
			return nil, notFound("transaction", "transaction %s not found on %s", hash, chain)
		}
		return nil, notFound("transaction", "transaction %s not found on any chain", hash)
	}
	b, err := a.newBook(ctx, transferRefs(rows), nil)
	if err != nil {
		return nil, err
	}
	out := make([]Transfer, 0, len(rows))
	for _, r := range rows {
		out = append(out, b.transfer(r))
	}
	return out, nil
}

// Volume is one exchange's part of a VolumeSnapshot.
type Volume struct {
	ExchangeID   string  `json:"exchangeID"`
	ExchangeName string  `json:"exchangeName"`
	WithdrawnUSD float64 `json:"withdrawnUSD"`
	DepositedUSD float64 `json:"depositedUSD"`
}

// VolumeSnapshot is one day of /volume.
type VolumeSnapshot struct {
	Time    string   `json:"time"`
	Volumes []Volume `json:"volumes"`
}

// Volume answers GET /volume/address|entity/...: per chain and day, the USD the subject
// deposited to and withdrew from each exchange.
func (a *App) Volume(ctx context.Context, subject query.Ref, q query.Volume) (map[string][]VolumeSnapshot, error) {
	set, err := a.subject(ctx, subject)
	if err != nil {
		return nil, err
	}
	addrs := set.Addrs
	if len(set.Entities)+len(set.Types)+len(set.Deposits) > 0 {
		if addrs, err = a.store.SetAddresses(ctx, set); err != nil {
			return nil, err
		}
	}
	vs, err := a.store.ExchangeVolumes(ctx, addrs, a.chainNames(q.Chains))
	if err != nil {
		return nil, err
	}
	out := map[string][]VolumeSnapshot{}
	for _, v := range vs {
		day := Timestamp(v.Day)
		snaps := out[v.Chain]
		if len(snaps) == 0 || snaps[len(snaps)-1].Time != day {
			snaps = append(snaps, VolumeSnapshot{Time: day})
		}
		last := &snaps[len(snaps)-1]
		last.Volumes = append(last.Volumes, Volume{ExchangeID: v.ExchangeID, ExchangeName: v.ExchangeName,
			WithdrawnUSD: v.WithdrawnUSD, DepositedUSD: v.DepositedUSD})
		out[v.Chain] = snaps
	}
	return out, nil
}

// swapFilters resolves the /swaps filters of store/swapfilters.go into f.
func (a *App) swapFilters(ctx context.Context, nc *nameCheck, q query.Swaps, f *store.SwapFilter) error {
	var err error
	if f.Senders.In, f.Senders.NotIn, f.Senders.Only, err = a.resolve(ctx, nc, "senders", q.Senders); err != nil {
		return err
	}
	if f.Receivers.In, f.Receivers.NotIn, f.Receivers.Only, err = a.resolve(ctx, nc, "receivers", q.Receivers); err != nil {
		return err
	}
	if len(q.Counterparties) > 0 {
		if f.Counterparties, _, _, err = a.resolve(ctx, nc, "counterparties", q.Counterparties); err != nil {
			return err
		}
		f.HasCP = true
	}
	f.Protocols = q.Protocols
	f.Value0Gte, f.Value0Lte, f.Value1Gte, f.Value1Lte = q.Value0Gte, q.Value0Lte, q.Value1Gte, q.Value1Lte
	return nil
}
