// Package testworld builds the small known world the transfers service's tests query: three
// entities (two exchanges with hot wallets and deposit addresses, a DEX pool, a fund), two
// customers, two tokens and native coins, transfers and swaps on two chains. It is test support
// only: the events it returns go through the real consumers' handlers.
package testworld

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	"google.golang.org/protobuf/proto"
)

// Addresses of the world.
const (
	H1   = "0x1000000000000000000000000000000000000001" // binance hot wallet
	D1   = "0x1000000000000000000000000000000000000002" // binance deposit
	D2   = "0x1000000000000000000000000000000000000003" // binance deposit, idle
	H2   = "0x2000000000000000000000000000000000000001" // coinbase hot wallet
	D3   = "0x2000000000000000000000000000000000000002" // coinbase deposit
	P    = "0x3000000000000000000000000000000000000001" // uniswap pool (contract)
	F    = "0x4000000000000000000000000000000000000001" // a16z fund
	U1   = "0x5000000000000000000000000000000000000001" // customer
	U2   = "0x5000000000000000000000000000000000000002" // customer
	USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
	WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
)

// D0 is the world's first day.
var D0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Now is the clock the tests parse relative times against.
var Now = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)

// TxHash is the hash of the world's n-th transaction.
func TxHash(n int) string { return fmt.Sprintf("0x%064x", n) }

type transfer struct {
	name     string
	tx, log  int
	chain    string
	from, to string
	token    string // "" native
	units    string // decimal amount in token units
	usd      float64
	noUSD    bool
	at       time.Duration
}

var transfers = []transfer{
	{"t1", 1, 1, "ethereum", U1, D1, USDC, "1000", 1000, false, 10 * time.Hour},
	{"t2", 2, 1, "ethereum", D1, H1, USDC, "1000", 1000, false, 12 * time.Hour},
	{"t3", 3, -1, "ethereum", H1, U2, "", "2", 4000, false, 33 * time.Hour},
	{"t4", 4, 3, "base", U2, D3, USDC, "500", 500, false, 39 * time.Hour},
	{"t5", 5, 2, "base", D3, H2, USDC, "500", 500, false, 49 * time.Hour},
	{"t6", 6, -1, "ethereum", H1, H2, "", "10", 20000, false, 53 * time.Hour},
	{"t7", 7, 1, "ethereum", F, P, WETH, "5", 10000, false, 80 * time.Hour},
	{"t8", 7, 2, "ethereum", P, F, USDC, "9900", 9900, false, 80 * time.Hour},
	{"t9", 9, -1, "base", U1, U2, "", "0.1", 0, true, 98 * time.Hour},
	{"t10", 10, -1, "ethereum", U1, U1, "", "1", 2000, false, 99 * time.Hour},
}

// ID returns the transfer id of a named transfer ("t1".."t10").
func ID(name string) string {
	for _, t := range transfers {
		if t.name == name {
			return id(t)
		}
	}
	panic("no transfer " + name)
}

// IDs maps names to ids.
func IDs(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ID(n)
	}
	return out
}

func id(t transfer) string {
	if t.log < 0 {
		return TxHash(t.tx) + "_ext"
	}
	return fmt.Sprintf("%s_%d", TxHash(t.tx), t.log)
}

// Units turns a decimal string into the smallest unit with decimals.
func Units(s string, decimals int) string {
	whole, frac, _ := strings.Cut(s, ".")
	frac += strings.Repeat("0", decimals-len(frac))
	v, _ := new(big.Int).SetString(whole+frac, 10)
	return v.String()
}

func tokenMeta(chain, token string) (addr, id, name, symbol string, dec int32) {
	switch token {
	case USDC:
		return USDC, "usd-coin", "USD Coin", "USDC", 6
	case WETH:
		return WETH, "weth", "Wrapped Ether", "WETH", 18
	}
	return "", "ethereum", "Ether", "ETH", 18
}

// Transfers returns the world's transfer events.
func Transfers() []*eventsv1.Transfer {
	var out []*eventsv1.Transfer
	for _, t := range transfers {
		addr, tid, name, sym, dec := tokenMeta(t.chain, t.token)
		typ := eventsv1.TransferType_TRANSFER_TYPE_TOKEN
		if addr == "" {
			typ = eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL
		}
		m := &eventsv1.Transfer{
			Id: id(t), Chain: t.chain, TransactionHash: TxHash(t.tx), BlockHash: BlockHash(t.chain, t.tx),
			BlockNumber: uint64(100 + t.tx), BlockTimeMs: D0.Add(t.at).UnixMilli(), From: t.from, To: t.to,
			TokenAddress: addr, TokenId: tid, TokenName: name, TokenSymbol: sym, TokenDecimals: dec,
			Amount: Units(t.units, int(dec)), Type: typ, ToIsContract: t.to == P, FromIsContract: t.from == P,
			LogIndex: uint32(max(t.log, 0)),
		}
		if !t.noUSD {
			u := t.usd
			m.HistoricalUsd = &u
		}
		out = append(out, m)
	}
	return out
}

// BlockHash is the hash of the block holding the world's tx n on chain.
func BlockHash(chain string, n int) string {
	return fmt.Sprintf("0x%062x%02x", n, len(chain))
}

// Transactions returns the world's transaction events (one per distinct tx).
func Transactions() []*eventsv1.Transaction {
	seen := map[int]bool{}
	var out []*eventsv1.Transaction
	for _, t := range transfers {
		if seen[t.tx] {
			continue
		}
		seen[t.tx] = true
		usd := t.usd
		fee := 0.5
		m := &eventsv1.Transaction{
			Chain: t.chain, Hash: TxHash(t.tx), BlockNumber: uint64(100 + t.tx), BlockHash: BlockHash(t.chain, t.tx),
			BlockTimeMs: D0.Add(t.at).UnixMilli(), From: t.from, To: t.to, Nonce: uint64(t.tx), Success: true,
			Value: "0", GasUsed: 21000, GasPrice: "20000000000", EffectiveGasPrice: "20000000000", Fee: "420000000000000",
			FeeUsd: &fee, MethodId: "0xa9059cbb",
		}
		if t.token == "" {
			m.Value = Units(t.units, 18)
			m.MethodId = ""
			if !t.noUSD {
				m.ValueUsd = &usd
			}
		} else {
			zero := 0.0
			m.ValueUsd = &zero
		}
		out = append(out, m)
	}
	return out
}

// Swaps returns the world's swaps.
func Swaps() []*eventsv1.Swap {
	u1, u2 := 1000.0, 250.0
	return []*eventsv1.Swap{
		{Id: TxHash(20) + "_4", Chain: "ethereum", TransactionHash: TxHash(20), BlockHash: BlockHash("ethereum", 20),
			BlockNumber: 120, BlockTimeMs: D0.Add(75 * time.Hour).UnixMilli(), ContractAddress: P, Sender: U1, Receiver: U1,
			Token0: USDC, Token0Id: "usd-coin", Token0Name: "USD Coin", Token0Symbol: "USDC", Token0Decimals: 6, Amount0: "1000000000",
			Token1: WETH, Token1Id: "weth", Token1Name: "Wrapped Ether", Token1Symbol: "WETH", Token1Decimals: 18,
			Amount1: "-500000000000000000", HistoricalUsd: &u1, Valid: true, Protocol: "uniswap_v3", LogIndex: 4},
		{Id: TxHash(21) + "_7", Chain: "base", TransactionHash: TxHash(21), BlockHash: BlockHash("base", 21),
			BlockNumber: 121, BlockTimeMs: D0.Add(76 * time.Hour).UnixMilli(), ContractAddress: P, Sender: U2, Receiver: U1,
			Token0: USDC, Token0Id: "usd-coin", Token0Name: "USD Coin", Token0Symbol: "USDC", Token0Decimals: 6, Amount0: "-250000000",
			Token1: WETH, Token1Id: "weth", Token1Name: "Wrapped Ether", Token1Symbol: "WETH", Token1Decimals: 18,
			Amount1: "125000000000000000", HistoricalUsd: &u2, Valid: true, Protocol: "uniswap_v2", LogIndex: 7},
	}
}

// Attribution builds one attribution.
func Attribution(addr string, ent *eventsv1.Entity, label, deposit string, contract bool, version int64) *eventsv1.Attribution {
	return &eventsv1.Attribution{ChainType: "evm", Address: addr, Entity: ent, Label: label, DepositServiceId: deposit,
		IsContract: contract, Version: version, UpdatedAtMs: D0.UnixMilli()}
}

// Entities of the world.
var (
	Binance  = &eventsv1.Entity{Id: "binance", Name: "Binance", Type: "cex", Website: "https://binance.com"}
	Coinbase = &eventsv1.Entity{Id: "coinbase", Name: "Coinbase", Type: "cex"}
	Uniswap  = &eventsv1.Entity{Id: "uniswap", Name: "Uniswap", Type: "dex"}
	A16z     = &eventsv1.Entity{Id: "a16z", Name: "a16z", Type: "fund", Service: "a16z-crypto"}
)

// Attributions returns the world's attributions.
func Attributions() []*eventsv1.Attribution {
	return []*eventsv1.Attribution{
		Attribution(H1, Binance, "Hot Wallet 1", "", false, 1),
		Attribution(D1, Binance, "Deposit", "binance", false, 1),
		Attribution(D2, Binance, "Deposit", "binance", false, 1),
		Attribution(H2, Coinbase, "Hot Wallet", "", false, 1),
		Attribution(D3, Coinbase, "Deposit", "coinbase", false, 1),
		Attribution(P, Uniswap, "USDC/WETH Pool", "", true, 1),
		Attribution(F, A16z, "", "", false, 1),
		{ChainType: "evm", Address: U2, PredictedEntity: Coinbase, Version: 1},
	}
}

// Msgs wraps payloads as consumed messages, keyed like the producers key them.
func Msgs[M proto.Message](ms []M) []eventbus.Message[M] {
	out := make([]eventbus.Message[M], len(ms))
	for i, m := range ms {
		out[i] = eventbus.Message[M]{Msg: m, Offset: int64(i)}
		if a, ok := any(m).(*eventsv1.Attribution); ok {
			out[i].Key = eventsv1.AttributionKey(a.ChainType, a.Address)
		}
	}
	return out
}

// Load writes the whole world through the consumers' handlers.
func Load(ctx context.Context, h events.Handlers) error {
	if err := h.Attributions(ctx, Msgs(Attributions())); err != nil {
		return err
	}
	if err := h.Transactions(ctx, Msgs(Transactions())); err != nil {
		return err
	}
	if err := h.Transfers(ctx, Msgs(Transfers())); err != nil {
		return err
	}
	return h.Swaps(ctx, Msgs(Swaps()))
}
