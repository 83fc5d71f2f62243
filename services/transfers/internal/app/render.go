package app

import (
	"context"
	"math/big"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"golang.org/x/sync/errgroup"
)

// The API's address and transfer objects are libs/render's, shared with every service that
// answers with them.
type (
	Entity       = render.Entity
	AddressLabel = render.AddressLabel
	AddressInfo  = render.AddressInfo
	Transfer     = render.Transfer
)

// Swap is the API's Swap object.
type Swap struct {
	ID               string      `json:"id"`
	Chain            string      `json:"chain"`
	TransactionHash  string      `json:"transactionHash"`
	BlockHash        string      `json:"blockHash"`
	BlockNumber      int64       `json:"blockNumber"`
	BlockTimestamp   string      `json:"blockTimestamp"`
	ContractAddress  AddressInfo `json:"contractAddress"`
	ContractEntityID string      `json:"contractEntityId,omitempty"`
	Sender           AddressInfo `json:"sender"`
	Receiver         AddressInfo `json:"receiver"`
	Token0           string      `json:"token0"`
	Token0ID         string      `json:"token0Id"`
	Token0Name       string      `json:"token0Name"`
	Token0Symbol     string      `json:"token0Symbol"`
	Token0Decimals   int32       `json:"token0Decimals"`
	UnitValue0       float64     `json:"unitValue0"`
	Token1           string      `json:"token1"`
	Token1ID         string      `json:"token1Id"`
	Token1Name       string      `json:"token1Name"`
	Token1Symbol     string      `json:"token1Symbol"`
	Token1Decimals   int32       `json:"token1Decimals"`
	UnitValue1       float64     `json:"unitValue1"`
	HistoricalUSD    *float64    `json:"historicalUSD,omitempty"`
	Valid            bool        `json:"valid"`
}

// Transaction is the API's transaction object of /tx/{hash}.
type Transaction struct {
	Hash              string       `json:"hash"`
	Chain             string       `json:"chain"`
	BlockNumber       int64        `json:"blockNumber"`
	BlockHash         string       `json:"blockHash"`
	BlockTimestamp    string       `json:"blockTimestamp"`
	From              AddressInfo  `json:"from"`
	To                *AddressInfo `json:"to"`
	ContractCreated   *AddressInfo `json:"contractCreated,omitempty"`
	Nonce             int64        `json:"nonce"`
	Status            string       `json:"status"`
	Value             float64      `json:"value"`
	ValueExact        string       `json:"valueExact"`
	USD               *float64     `json:"usd,omitempty"`
	GasUsed           int64        `json:"gasUsed"`
	GasPrice          float64      `json:"gasPrice"`
	EffectiveGasPrice float64      `json:"effectiveGasPrice"`
	Fee               float64      `json:"fee"`
	FeeUSD            *float64     `json:"feeUsd,omitempty"`
	MethodID          string       `json:"methodId,omitempty"`
	Transfers         []Transfer   `json:"transfers"`
}

// Timestamp renders a time as the API does: RFC 3339, UTC.
func Timestamp(t time.Time) string { return render.Timestamp(t) }

func chainTypeOf(chain string) string { return render.ChainType(chain) }

// book renders the AddressInfo of every address of one response, from one read of the
// attribution model and one (cached) user-labels lookup.
type book struct {
	attrs map[store.AddressKey]store.Attribution
	user  ulclient.Lookup
}

type addrRef struct{ chain, addr string }

// newBook reads the book of refs. The attributions read beside the page (attributed) are used
// when they hold every address of refs; else they are read now, beside the user labels.
func (a *App) newBook(ctx context.Context, refs []addrRef, attributed *store.Attributed) (*book, error) {
	seen := map[store.AddressKey]bool{}
	var keys []store.AddressKey
	var ul []ulclient.AddressRef
	for _, r := range refs {
		k := store.AddressKey{ChainType: chainTypeOf(r.chain), Address: r.addr}
		if r.addr == "" || seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
		ul = append(ul, ulclient.AddressRef{ChainType: k.ChainType, Address: k.Address})
	}
	// The read model and user-labels are asked side by side.
	var attrs map[store.AddressKey]store.Attribution
	var look ulclient.Lookup
	g, gctx := errgroup.WithContext(ctx)
	if attributed.Covers(keys) {
		attrs = attributed.Attrs
	} else {
		g.Go(func() (err error) {
			attrs, err = a.store.Attributions(gctx, keys)
			return err
		})
	}
	g.Go(func() (err error) {
		look, err = a.labels.Lookup(gctx, ul)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &book{attrs: attrs, user: look}, nil
}

func entityOut(e *store.Entity) *Entity { return render.EntityOf((*render.StoredEntity)(e)) }

func (b *book) info(chain, addr string, contract bool) AddressInfo {
	ct := chainTypeOf(chain)
	var at *render.Attribution
	if a, ok := b.attrs[store.AddressKey{ChainType: ct, Address: addr}]; ok {
		at = &render.Attribution{Entity: entityOut(a.Entity), Label: a.Label, Predicted: entityOut(a.Predicted),
			DepositServiceID: a.DepositServiceID, IsContract: a.IsContract}
	}
	ai := render.Info(chain, ct, addr, contract, at)
	b.user.Apply(&ai, ct)
	return ai
}

func transferType(r store.TransferRow) string { return render.TransferType(int32(r.Type), r.Token) }

func transferRefs(rows []store.TransferRow) []addrRef {
	refs := make([]addrRef, 0, 2*len(rows))
	for _, r := range rows {
		refs = append(refs, addrRef{r.Chain, r.From}, addrRef{r.Chain, r.To})
	}
	return refs
}

func (b *book) transfer(r store.TransferRow) Transfer {
	t := Transfer{
		ID: r.ID, TransactionHash: r.TxHash, BlockHash: r.BlockHash, BlockNumber: r.BlockNumber,
		BlockTimestamp: Timestamp(r.BlockTime), Chain: r.Chain,
		FromAddress: b.info(r.Chain, r.From, r.FromIsContract), ToAddress: b.info(r.Chain, r.To, r.ToIsContract),
		FromIsContract: r.FromIsContract, ToIsContract: r.ToIsContract, TokenID: render.NullString(r.TokenID), TokenName: r.TokenName,
		TokenSymbol: r.TokenSymbol, TokenDecimals: r.TokenDecimals, UnitValue: render.UnitValue(r.Amount, r.TokenDecimals),
		HistoricalUSD: r.USD, Type: transferType(r),
	}
	if r.Token != "" {
		tok := r.Token
		t.TokenAddress = &tok
	}
	return t
}

func (b *book) swap(r store.SwapRow) Swap {
	s := Swap{
		ID: r.ID, Chain: r.Chain, TransactionHash: r.TxHash, BlockHash: r.BlockHash, BlockNumber: r.BlockNumber,
		BlockTimestamp: Timestamp(r.BlockTime), ContractAddress: b.info(r.Chain, r.Contract, true),
		Sender: b.info(r.Chain, r.Sender, false), Receiver: b.info(r.Chain, r.Receiver, false),
		Token0: r.Token0, Token0ID: r.Token0ID, Token0Name: r.Token0Name, Token0Symbol: r.Token0Symbol,
		Token0Decimals: r.Token0Decimals, UnitValue0: render.UnitValue(r.Amount0, r.Token0Decimals),
		Token1: r.Token1, Token1ID: r.Token1ID, Token1Name: r.Token1Name, Token1Symbol: r.Token1Symbol,
		Token1Decimals: r.Token1Decimals, UnitValue1: render.UnitValue(r.Amount1, r.Token1Decimals),
		HistoricalUSD: r.USD, Valid: r.Valid,
	}
	if s.ContractAddress.ServiceEntity != nil {
		s.ContractEntityID = s.ContractAddress.ServiceEntity.ID
	}
	return s
}

func bigFloat(v *big.Int) float64 {
	if v == nil {
		return 0
	}
	f, _ := new(big.Float).SetInt(v).Float64()
	return f
}

func (b *book) transaction(r store.TransactionRow, transfers []store.TransferRow) Transaction {
	dec := int32(18)
	if c, ok := chains.Lookup(r.Chain); ok {
		dec = c.NativeDecimals
	}
	t := Transaction{
		Hash: r.Hash, Chain: r.Chain, BlockNumber: r.BlockNumber, BlockHash: r.BlockHash, BlockTimestamp: Timestamp(r.BlockTime),
		From: b.info(r.Chain, r.From, false), Nonce: r.Nonce, Status: "failed", Value: render.UnitValue(r.Value, dec),
		ValueExact: r.Value.String(), USD: r.ValueUSD, GasUsed: r.GasUsed, GasPrice: bigFloat(r.GasPrice),
		EffectiveGasPrice: bigFloat(r.EffectiveGasPrice), Fee: render.UnitValue(r.Fee, dec), FeeUSD: r.FeeUSD,
		MethodID: r.MethodID, Transfers: make([]Transfer, 0, len(transfers)),
	}
	if r.Success {
		t.Status = "success"
	}
	if r.To != "" {
		to := b.info(r.Chain, r.To, false)
		t.To = &to
	}
	if r.ContractCreated != "" {
		cc := b.info(r.Chain, r.ContractCreated, true)
		t.ContractCreated = &cc
	}
	for _, tr := range transfers {
		t.Transfers = append(t.Transfers, b.transfer(tr))
	}
	return t
}
