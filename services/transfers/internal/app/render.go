package app

import (
	"context"
	"math/big"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/chainintel/chainintel/services/transfers/internal/units"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"golang.org/x/sync/errgroup"
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
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func chainTypeOf(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return ""
}

// book renders the AddressInfo of every address of one response, from one read of the
// attribution model and one (cached) user-labels lookup.
type book struct {
	attrs  map[store.AddressKey]store.Attribution
	labels map[string]ulclient.Label
	ents   map[string][]ulclient.EntityRef
}

type addrRef struct{ chain, addr string }

func (a *App) newBook(ctx context.Context, refs []addrRef) (*book, error) {
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
	g.Go(func() (err error) {
		attrs, err = a.store.Attributions(gctx, keys)
		return err
	})
	g.Go(func() (err error) {
		look, err = a.labels.Lookup(gctx, ul)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &book{attrs: attrs, labels: look.Labels, ents: look.Entities}, nil
}

// prefetch reads a book for the addresses a page's transfers are among while the page is read
// (store.Page.Prefetch), so the attributions and user labels are not read after it. Its zero
// value has started nothing. The store calls start at most once, on the goroutine that reads
// the page, before it returns.
type prefetch struct {
	done chan struct{}             // nil: nothing started
	keys map[store.AddressKey]bool // every address asked for
	b    *book
	err  error
}

// start reads the book of addresses (chains[i], addrs[i]) in the background.
func (p *prefetch) start(ctx context.Context, a *App, chains, addrs []string) {
	if p.done != nil {
		return
	}
	p.done = make(chan struct{})
	refs := make([]addrRef, len(addrs))
	p.keys = make(map[store.AddressKey]bool, len(addrs))
	for i := range addrs {
		refs[i] = addrRef{chains[i], addrs[i]}
		p.keys[store.AddressKey{ChainType: chainTypeOf(chains[i]), Address: addrs[i]}] = true
	}
	go func() {
		defer close(p.done)
		p.b, p.err = a.newBook(ctx, refs)
	}()
}

// wait waits for a read started, if any.
func (p *prefetch) wait() {
	if p.done != nil {
		<-p.done
	}
}

// book is the book of refs: the prefetched one when it holds every address of refs, else one
// read now.
func (p *prefetch) book(ctx context.Context, a *App, refs []addrRef) (*book, error) {
	if p.done != nil {
		<-p.done
		covered := p.err == nil
		for _, r := range refs {
			if covered && r.addr != "" && !p.keys[store.AddressKey{ChainType: chainTypeOf(r.chain), Address: r.addr}] {
				covered = false
			}
		}
		if covered {
			return p.b, nil
		}
	}
	return a.newBook(ctx, refs)
}

func entityOut(e *store.Entity) *Entity {
	if e == nil {
		return nil
	}
	out := &Entity{ID: e.ID, Name: e.Name, Note: e.Note, Type: e.Type, Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn}
	if e.Service != "" {
		s := e.Service
		out.Service = &s
	}
	return out
}

func (b *book) info(chain, addr string, contract bool) AddressInfo {
	ct := chainTypeOf(chain)
	ai := AddressInfo{Address: addr, Chain: chain, Contract: contract}
	if at, ok := b.attrs[store.AddressKey{ChainType: ct, Address: addr}]; ok {
		ai.ServiceEntity = entityOut(at.Entity)
		if at.Label != "" {
			ai.ServiceLabel = &AddressLabel{Name: at.Label, Address: addr, ChainType: ct}
		}
		ai.PredictedEntity = entityOut(at.Predicted)
		ai.DepositServiceID = at.DepositServiceID
		ai.Contract = ai.Contract || at.IsContract
	}
	key := ct + ":" + addr
	if l, ok := b.labels[key]; ok {
		ai.UserLabel = &AddressLabel{Name: l.Name, Address: addr, ChainType: ct}
	}
	if es := b.ents[key]; len(es) > 0 {
		ai.UserEntity = &Entity{ID: es[0].ID, Name: es[0].Name, Note: es[0].Note, Type: "user"}
		ai.IsUserAddress = true
	}
	return ai
}

func transferType(r store.TransferRow) string {
	switch r.Type {
	case 1:
		return "external"
	case 2:
		return "internal"
	case 3:
		return "token"
	}
	if r.Token != "" {
		return "token"
	}
	return "external"
}

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
		FromIsContract: r.FromIsContract, ToIsContract: r.ToIsContract, TokenID: r.TokenID, TokenName: r.TokenName,
		TokenSymbol: r.TokenSymbol, TokenDecimals: r.TokenDecimals, UnitValue: units.Value(r.Amount, r.TokenDecimals),
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
		Token0Decimals: r.Token0Decimals, UnitValue0: units.Value(r.Amount0, r.Token0Decimals),
		Token1: r.Token1, Token1ID: r.Token1ID, Token1Name: r.Token1Name, Token1Symbol: r.Token1Symbol,
		Token1Decimals: r.Token1Decimals, UnitValue1: units.Value(r.Amount1, r.Token1Decimals),
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
		From: b.info(r.Chain, r.From, false), Nonce: r.Nonce, Status: "failed", Value: units.Value(r.Value, dec),
		ValueExact: r.Value.String(), USD: r.ValueUSD, GasUsed: r.GasUsed, GasPrice: bigFloat(r.GasPrice),
		EffectiveGasPrice: bigFloat(r.EffectiveGasPrice), Fee: units.Value(r.Fee, dec), FeeUSD: r.FeeUSD,
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
