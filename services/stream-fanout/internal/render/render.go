// Package render builds the API's Transfer object from a chain.transfers.v1 record and the
// attribution read model, with the same fields and rules as GET /transfers, so a streamed
// transfer and the same transfer read from /transfers are equal.
package render

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	apirender "github.com/chainintel/chainintel/libs/render"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// The API's objects and what the read model knows of an address are libs/render's, so a
// streamed transfer is built by the same rules as one read from /transfers.
type (
	Entity       = apirender.Entity
	AddressLabel = apirender.AddressLabel
	AddressInfo  = apirender.AddressInfo
	Transfer     = apirender.Transfer
	Attr         = apirender.Attribution
)

// AttrFrom converts an attribution record.
func AttrFrom(a *eventsv1.Attribution) *Attr {
	return &Attr{Entity: entity(a.GetEntity()), Label: a.GetLabel(), Predicted: entity(a.GetPredictedEntity()),
		DepositServiceID: a.GetDepositServiceId(), IsContract: a.GetIsContract(), Version: a.GetVersion()}
}

func entity(e *eventsv1.Entity) *Entity {
	if e == nil || e.GetId() == "" {
		return nil
	}
	return apirender.EntityOf(&apirender.StoredEntity{ID: e.GetId(), Name: e.GetName(), Type: e.GetType(), Note: e.GetNote(),
		Service: e.GetService(), Website: e.GetWebsite(), Twitter: e.GetTwitter(), LinkedIn: e.GetLinkedin()})
}

// ChainType is the chain type of chain ("" when unknown).
func ChainType(chain string) string { return apirender.ChainType(chain) }

// Transfer renders t with the attributions of its two addresses (nil when unknown).
func TransferOf(t *eventsv1.Transfer, from, to *Attr) Transfer {
	ct := ChainType(t.GetChain())
	out := Transfer{
		ID: t.GetId(), TransactionHash: t.GetTransactionHash(), BlockHash: t.GetBlockHash(), BlockNumber: int64(t.GetBlockNumber()),
		BlockTimestamp: apirender.Timestamp(time.UnixMilli(t.GetBlockTimeMs())), Chain: t.GetChain(),
		FromAddress:    apirender.Info(t.GetChain(), ct, t.GetFrom(), t.GetFromIsContract(), from),
		ToAddress:      apirender.Info(t.GetChain(), ct, t.GetTo(), t.GetToIsContract(), to),
		FromIsContract: t.GetFromIsContract(), ToIsContract: t.GetToIsContract(), TokenID: apirender.NullString(t.GetTokenId()),
		TokenName: t.GetTokenName(), TokenSymbol: t.GetTokenSymbol(), TokenDecimals: t.GetTokenDecimals(),
		UnitValue: UnitValue(t.GetAmount(), t.GetTokenDecimals()), Type: apirender.TransferType(int32(t.GetType()), t.GetTokenAddress()),
	}
	if t.HistoricalUsd != nil {
		if v := t.GetHistoricalUsd(); !math.IsNaN(v) && !math.IsInf(v, 0) {
			out.HistoricalUSD = &v
		}
	}
	if a := t.GetTokenAddress(); a != "" {
		out.TokenAddress = &a
	}
	return out
}

// UnitValue is amount (base 10, smallest unit) in whole units, as /transfers computes it.
func UnitValue(amount string, decimals int32) float64 {
	a, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		return 0
	}
	return apirender.UnitValue(a, decimals)
}

// JSON encodes t.
func JSON(t *Transfer) []byte {
	b, _ := json.Marshal(t) // a Transfer of strings, numbers and finite floats always encodes
	return b
}

// Normalize puts m's addresses and hashes in the canonical forms /transfers stores them in, so
// filters match and the rendered Transfer is the same. It refuses a record /transfers would skip.
func Normalize(m *eventsv1.Transfer) error {
	if m.Id == "" || m.Chain == "" || m.TransactionHash == "" || m.BlockTimeMs <= 0 {
		return fmt.Errorf("transfer %q lacks id, chain, hash or block time", m.Id)
	}
	if m.Amount != "" {
		if v, ok := new(big.Int).SetString(m.Amount, 10); !ok || v.Sign() < 0 {
			return fmt.Errorf("transfer %s: amount %q is not a non-negative base-10 integer", m.Id, m.Amount)
		}
	}
	txh := hash(m.TransactionHash)
	if strings.HasPrefix(m.Id, m.TransactionHash) {
		m.Id = txh + m.Id[len(m.TransactionHash):]
	}
	m.TransactionHash, m.BlockHash = txh, hash(m.BlockHash)
	m.From, m.To, m.TokenAddress = norm(m.Chain, m.From), norm(m.Chain, m.To), norm(m.Chain, m.TokenAddress)
	return nil
}

// NormalizeAddress is addr in its canonical form for chainType, or as given when invalid.
func NormalizeAddress(chainType, addr string) string {
	if a, err := address.Normalize(chains.Type(chainType), addr); err == nil {
		return a
	}
	return addr
}

func norm(chain, addr string) string { return address.Canonical(chain, addr) }

func hash(h string) string { return address.CanonicalHash(h) }

// AddrKey names an address on a chain type.
type AddrKey struct{ ChainType, Address string }
