// Package render builds the API's Transfer object from a chain.transfers.v1 record and the
// attribution read model, with the same fields and rules as GET /transfers, so a streamed
// transfer and the same transfer read from /transfers are equal.
package render

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// Entity is the API's Entity object.
type Entity struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Note     string  `json:"note"`
	Type     string  `json:"type"`
	Service  *string `json:"service"`
	Website  string  `json:"website,omitempty"`
	Twitter  string  `json:"twitter,omitempty"`
	LinkedIn string  `json:"linkedin,omitempty"`
}

// AddressLabel is the API's AddressLabel object.
type AddressLabel struct {
	Name      string `json:"name"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// AddressInfo is the API's AddressInfo object.
type AddressInfo struct {
	Address          string        `json:"address"`
	Chain            string        `json:"chain"`
	ServiceEntity    *Entity       `json:"serviceEntity,omitempty"`
	ServiceLabel     *AddressLabel `json:"serviceLabel,omitempty"`
	PredictedEntity  *Entity       `json:"predictedEntity,omitempty"`
	UserEntity       *Entity       `json:"userEntity,omitempty"`
	UserLabel        *AddressLabel `json:"userLabel,omitempty"`
	DepositServiceID string        `json:"depositServiceID,omitempty"`
	Contract         bool          `json:"contract"`
	IsUserAddress    bool          `json:"isUserAddress"`
}

// Transfer is the API's Transfer object.
type Transfer struct {
	ID              string      `json:"id"`
	TransactionHash string      `json:"transactionHash"`
	BlockHash       string      `json:"blockHash"`
	BlockNumber     int64       `json:"blockNumber"`
	BlockTimestamp  string      `json:"blockTimestamp"`
	Chain           string      `json:"chain"`
	FromAddress     AddressInfo `json:"fromAddress"`
	ToAddress       AddressInfo `json:"toAddress"`
	FromIsContract  bool        `json:"fromIsContract"`
	ToIsContract    bool        `json:"toIsContract"`
	TokenAddress    *string     `json:"tokenAddress,omitempty"`
	TokenID         string      `json:"tokenId"`
	TokenName       string      `json:"tokenName"`
	TokenSymbol     string      `json:"tokenSymbol"`
	TokenDecimals   int32       `json:"tokenDecimals"`
	UnitValue       float64     `json:"unitValue"`
	HistoricalUSD   *float64    `json:"historicalUSD,omitempty"`
	Type            string      `json:"type"`
}

// Attr is what the read model knows of one address.
type Attr struct {
	Entity           *Entity
	Label            string
	Predicted        *Entity
	DepositServiceID string
	IsContract       bool
	Version          int64
}

// AttrFrom converts an attribution record.
func AttrFrom(a *eventsv1.Attribution) *Attr {
	return &Attr{Entity: entity(a.GetEntity()), Label: a.GetLabel(), Predicted: entity(a.GetPredictedEntity()),
		DepositServiceID: a.GetDepositServiceId(), IsContract: a.GetIsContract(), Version: a.GetVersion()}
}

func entity(e *eventsv1.Entity) *Entity {
	if e == nil || e.GetId() == "" {
		return nil
	}
	out := &Entity{ID: e.GetId(), Name: e.GetName(), Note: e.GetNote(), Type: e.GetType(), Website: e.GetWebsite(),
		Twitter: e.GetTwitter(), LinkedIn: e.GetLinkedin()}
	if s := e.GetService(); s != "" {
		out.Service = &s
	}
	return out
}

// ChainType is the chain type of chain ("" when unknown).
func ChainType(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return ""
}

// Info renders an address's AddressInfo without the caller's own labels.
func Info(chain, chainType, addr string, contract bool, at *Attr) AddressInfo {
	ai := AddressInfo{Address: addr, Chain: chain, Contract: contract}
	if at != nil {
		ai.ServiceEntity = at.Entity
		if at.Label != "" {
			ai.ServiceLabel = &AddressLabel{Name: at.Label, Address: addr, ChainType: chainType}
		}
		ai.PredictedEntity = at.Predicted
		ai.DepositServiceID = at.DepositServiceID
		ai.Contract = ai.Contract || at.IsContract
	}
	return ai
}

// Transfer renders t with the attributions of its two addresses (nil when unknown).
func TransferOf(t *eventsv1.Transfer, from, to *Attr) Transfer {
	ct := ChainType(t.GetChain())
	out := Transfer{
		ID: t.GetId(), TransactionHash: t.GetTransactionHash(), BlockHash: t.GetBlockHash(), BlockNumber: int64(t.GetBlockNumber()),
		BlockTimestamp: time.UnixMilli(t.GetBlockTimeMs()).UTC().Format(time.RFC3339Nano), Chain: t.GetChain(),
		FromAddress:    Info(t.GetChain(), ct, t.GetFrom(), t.GetFromIsContract(), from),
		ToAddress:      Info(t.GetChain(), ct, t.GetTo(), t.GetToIsContract(), to),
		FromIsContract: t.GetFromIsContract(), ToIsContract: t.GetToIsContract(), TokenID: t.GetTokenId(),
		TokenName: t.GetTokenName(), TokenSymbol: t.GetTokenSymbol(), TokenDecimals: t.GetTokenDecimals(),
		UnitValue: UnitValue(t.GetAmount(), t.GetTokenDecimals()), Type: transferType(t),
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

func transferType(t *eventsv1.Transfer) string {
	switch t.GetType() {
	case eventsv1.TransferType(1):
		return "external"
	case eventsv1.TransferType(2):
		return "internal"
	case eventsv1.TransferType(3):
		return "token"
	}
	if t.GetTokenAddress() != "" {
		return "token"
	}
	return "external"
}

// UnitValue is amount (base 10, smallest unit) in whole units, as /transfers computes it.
func UnitValue(amount string, decimals int32) float64 {
	a, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		return 0
	}
	s := new(big.Int).Abs(a).String()
	d := max(int(decimals), 0)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	f, err := strconv.ParseFloat(s[:len(s)-d]+"."+s[len(s)-d:], 64)
	if err != nil || math.IsInf(f, 0) {
		f = math.MaxFloat64
	}
	if a.Sign() < 0 {
		f = -f
	}
	return f
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

func norm(chain, addr string) string {
	if addr == "" {
		return ""
	}
	if a, err := address.NormalizeForChain(chain, addr); err == nil {
		return a
	}
	if strings.HasPrefix(addr, "0x") || strings.HasPrefix(addr, "0X") {
		return strings.ToLower(addr)
	}
	return addr
}

func hash(h string) string {
	if strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X") {
		return strings.ToLower(h)
	}
	return h
}

// AddrKey names an address on a chain type.
type AddrKey struct{ ChainType, Address string }
