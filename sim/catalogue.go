package sim

import (
	"time"

	"github.com/chainintel/chainintel/libs/chains"
)

// assetSpec is a priced asset of the simulated market.
type assetSpec struct {
	pricingID  string
	name       string
	symbol     string
	price      float64 // starting USD price
	sigma      float64 // volatility per price step (fraction)
	stablecoin bool
	tracks     string // another pricing id whose price this one follows (wrapped coins)
	ticker     string
}

var assets = []assetSpec{
	{pricingID: "bitcoin", name: "Bitcoin", symbol: "BTC", price: 62000, sigma: 0.0015, ticker: "BTCUSD"},
	{pricingID: "ethereum", name: "Ethereum", symbol: "ETH", price: 3100, sigma: 0.002, ticker: "ETHUSD"},
	{pricingID: "solana", name: "Solana", symbol: "SOL", price: 145, sigma: 0.003, ticker: "SOLUSD"},
	{pricingID: "binancecoin", name: "BNB", symbol: "BNB", price: 560, sigma: 0.002, ticker: "BNBUSD"},
	{pricingID: "matic-network", name: "Polygon", symbol: "POL", price: 0.52, sigma: 0.003},
	{pricingID: "avalanche-2", name: "Avalanche", symbol: "AVAX", price: 29, sigma: 0.003},
	{pricingID: "tron", name: "TRON", symbol: "TRX", price: 0.125, sigma: 0.002},
	{pricingID: "dogecoin", name: "Dogecoin", symbol: "DOGE", price: 0.14, sigma: 0.004, ticker: "DOGEUSD"},
	{pricingID: "the-open-network", name: "Toncoin", symbol: "TON", price: 5.6, sigma: 0.003},
	{pricingID: "usd-coin", name: "USD Coin", symbol: "USDC", price: 1, stablecoin: true},
	{pricingID: "tether", name: "Tether", symbol: "USDT", price: 1, stablecoin: true},
	{pricingID: "weth", name: "Wrapped Ether", symbol: "WETH", tracks: "ethereum"},
	{pricingID: "wrapped-bitcoin", name: "Wrapped Bitcoin", symbol: "WBTC", tracks: "bitcoin"},
	{pricingID: "wrapped-solana", name: "Wrapped SOL", symbol: "WSOL", tracks: "solana"},
	{pricingID: "chainlink", name: "Chainlink", symbol: "LINK", price: 14.5, sigma: 0.003},
	{pricingID: "uniswap", name: "Uniswap", symbol: "UNI", price: 8.2, sigma: 0.003},
	{pricingID: "pepe", name: "Pepe", symbol: "PEPE", price: 0.0000098, sigma: 0.006},
	{pricingID: "bonk", name: "Bonk", symbol: "BONK", price: 0.000021, sigma: 0.006},
	{pricingID: "jupiter-exchange-solana", name: "Jupiter", symbol: "JUP", price: 0.82, sigma: 0.004},
}

// tokenSpec is an ERC-20-style token deployed on some chains.
type tokenSpec struct {
	pricingID string
	decimals  int32
	weight    int // how often it moves relative to others
}

// tokensFor lists the non-native tokens of a chain.
func tokensFor(c chains.Chain) []tokenSpec {
	switch c.Type {
	case chains.TypeEVM:
		usdtDec := int32(6)
		if c.Name == "bsc" {
			usdtDec = 18
		}
		ts := []tokenSpec{{"usd-coin", 6, 30}, {"tether", usdtDec, 30}}
		if c.NativePricingID == "ethereum" {
			ts = append(ts, tokenSpec{"weth", 18, 12})
		}
		if c.Name == "ethereum" {
			ts = append(ts, tokenSpec{"wrapped-bitcoin", 8, 5}, tokenSpec{"chainlink", 18, 6},
				tokenSpec{"uniswap", 18, 5}, tokenSpec{"pepe", 18, 6})
		}
		if c.Name == "arbitrum_one" || c.Name == "base" {
			ts = append(ts, tokenSpec{"chainlink", 18, 3})
		}
		return ts
	case chains.TypeSolana:
		return []tokenSpec{{"usd-coin", 6, 30}, {"wrapped-solana", 9, 10}, {"bonk", 5, 8}, {"jupiter-exchange-solana", 6, 6}}
	case chains.TypeTron:
		return []tokenSpec{{"tether", 6, 60}}
	case chains.TypeTON:
		return []tokenSpec{{"tether", 6, 20}}
	}
	return nil
}

// poolSpec is a DEX pool between two of a chain's tokens.
type poolSpec struct{ a, b, protocol string }

func poolsFor(c chains.Chain) []poolSpec {
	switch c.Type {
	case chains.TypeEVM:
		if c.NativePricingID == "ethereum" {
			ps := []poolSpec{{"weth", "usd-coin", "uniswap_v3"}, {"weth", "tether", "uniswap_v2"}, {"usd-coin", "tether", "uniswap_v3"}}
			if c.Name == "ethereum" {
				ps = append(ps, poolSpec{"wrapped-bitcoin", "weth", "uniswap_v3"}, poolSpec{"chainlink", "weth", "uniswap_v3"},
					poolSpec{"uniswap", "weth", "uniswap_v2"}, poolSpec{"pepe", "weth", "uniswap_v2"})
			}
			return ps
		}
		return []poolSpec{{"usd-coin", "tether", "uniswap_v2"}}
	case chains.TypeSolana:
		return []poolSpec{{"wrapped-solana", "usd-coin", "uniswap_v2"}, {"bonk", "wrapped-solana", "uniswap_v2"},
			{"jupiter-exchange-solana", "usd-coin", "uniswap_v2"}}
	}
	return nil
}

// chainTiming is how a chain's blocks advance.
type chainTiming struct {
	interval time.Duration
	first    uint64    // block height at the world's start
	gasPrice [2]uint64 // range of the gas price in the smallest unit
}

var timings = map[string]chainTiming{
	"ethereum":     {12 * time.Second, 21_500_000, [2]uint64{4e9, 40e9}},
	"polygon":      {2 * time.Second, 66_000_000, [2]uint64{30e9, 120e9}},
	"bsc":          {3 * time.Second, 45_000_000, [2]uint64{1e9, 3e9}},
	"optimism":     {2 * time.Second, 130_000_000, [2]uint64{1e6, 5e7}},
	"avalanche":    {2 * time.Second, 55_000_000, [2]uint64{25e9, 40e9}},
	"arbitrum_one": {250 * time.Millisecond, 290_000_000, [2]uint64{1e7, 2e8}},
	"base":         {2 * time.Second, 24_000_000, [2]uint64{1e6, 5e7}},
	"bitcoin":      {10 * time.Minute, 875_000, [2]uint64{2, 40}},
	"tron":         {3 * time.Second, 68_000_000, [2]uint64{0, 0}},
	"solana":       {400 * time.Millisecond, 310_000_000, [2]uint64{0, 0}},
	"dogecoin":     {time.Minute, 5_500_000, [2]uint64{0, 0}},
	"ton":          {5 * time.Second, 45_000_000, [2]uint64{0, 0}},
}

var exchangeNames = []struct{ id, name, website string }{
	{"binance-sim", "Binance (simulated)", "https://binance.example"},
	{"coinbase-sim", "Coinbase (simulated)", "https://coinbase.example"},
	{"kraken-sim", "Kraken (simulated)", "https://kraken.example"},
	{"okx-sim", "OKX (simulated)", "https://okx.example"},
	{"bybit-sim", "Bybit (simulated)", "https://bybit.example"},
	{"kucoin-sim", "KuCoin (simulated)", "https://kucoin.example"},
}

var fundNames = []struct{ id, name string }{
	{"atlas-capital-sim", "Atlas Capital (simulated)"},
	{"meridian-fund-sim", "Meridian Fund (simulated)"},
	{"northstar-ventures-sim", "Northstar Ventures (simulated)"},
	{"blue-harbor-sim", "Blue Harbor Trading (simulated)"},
	{"granite-partners-sim", "Granite Partners (simulated)"},
}

// DefaultChains are simulated when Config.Chains is empty: three EVM chains, Solana, TRON and
// Bitcoin, so every address style and both account and UTXO transfer ids appear.
var DefaultChains = []string{"ethereum", "base", "arbitrum_one", "solana", "tron", "bitcoin"}
