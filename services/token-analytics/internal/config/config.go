// Package config is the token-analytics service's configuration, read from TOKENANALYTICS_*
// environment variables.
package config

import (
	"math/big"
	"net/url"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// Prefix of every token-analytics environment variable.
const Prefix = "TOKENANALYTICS_"

// Config is the token-analytics service's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`

	// TokenLists are token lists (the format of brave-coingecko.json: hex chain id → contract →
	// {name, symbol, coingeckoId, decimals}) imported into the registry at start.
	TokenLists []string `env:"TOKEN_LISTS" envSeparator:","`
	// PriceCSVs are daily price histories imported at start, each "<pricingId>=<path>" of a
	// snapped_at,price,market_cap,total_volume CSV.
	PriceCSVs []string `env:"PRICE_CSVS" envSeparator:","`
	// WrappedCategories are the price API's categories whose coins are wrapped or bridged
	// copies of another coin (left out of the altcoin index); "none" reads no category and
	// clears nothing (an unset or empty variable takes the default).
	WrappedCategories []string `env:"WRAPPED_CATEGORIES" envSeparator:"," envDefault:"wrapped-tokens"`
	// Stablecoins are the pricing ids flagged as stablecoins (left out of the altcoin index).
	Stablecoins []string `env:"STABLECOINS" envSeparator:"," envDefault:"tether,usd-coin,dai,true-usd,first-digital-usd,ethena-usde,paypal-usd,binance-usd,frax,usdd,gemini-dollar,pax-dollar,agora-dollar,usds,bridged-usdc-polygon-pos-bridge,bridged-usdt"`

	// PriceAPIURL is the base URL of a CoinGecko-compatible API (".../api/v3"); empty: no polling.
	PriceAPIURL       string        `env:"PRICE_API_URL"`
	PriceAPIKey       string        `env:"PRICE_API_KEY" secret:"true"`
	PriceAPIKeyHeader string        `env:"PRICE_API_KEY_HEADER" envDefault:"x-cg-pro-api-key"`
	PricePollInterval time.Duration `env:"PRICE_POLL_INTERVAL" envDefault:"5m"`
	// PriceRequestsPerMinute keeps the poller within the API's rate limit.
	PriceRequestsPerMinute float64 `env:"PRICE_REQUESTS_PER_MINUTE" envDefault:"30"`
	// PriceHistory is how far back a pricing id's hourly history starts when none is stored.
	PriceHistory time.Duration `env:"PRICE_HISTORY" envDefault:"2160h"`
	// PriceMaxIDs bounds the pricing ids polled (the largest by market cap).
	PriceMaxIDs int `env:"PRICE_MAX_IDS" envDefault:"250"`
	// PriceRepublishInterval is how often the registry and the recent prices are published
	// again (they are at every start too), so a consumer reading the topics from their start
	// finds them after the broker lost them (retention, an in-memory broker's restart); shorter
	// than market.prices.v1's retention. A replica skips a run another did within it; 0: only
	// at start.
	PriceRepublishInterval time.Duration `env:"PRICE_REPUBLISH_INTERVAL" envDefault:"24h"`

	// TopRefresh is how often the unfiltered /token/top figures are recomputed into memory
	// (answers up to twice this old); 0 computes every request from the store.
	TopRefresh time.Duration `env:"TOP_REFRESH" envDefault:"5m"`

	// FlowRetention is how long transfer copies and flow rollups are kept (from the UTC day of
	// now - FlowRetention on; older transfers are not counted): 0 keeps everything, otherwise at
	// least app.MinFlowRetention, what the routes reach. FlowPruneInterval is how often older
	// rows are deleted.
	FlowRetention     time.Duration `env:"FLOW_RETENTION" envDefault:"9600h"`
	FlowPruneInterval time.Duration `env:"FLOW_PRUNE_INTERVAL" envDefault:"1h"`
	// FlowCloseInterval is how often the hours no transfer is expected in any more are closed:
	// their per-address rollup built from the stored transfers (store.CloseHours). It is also
	// how often at most top_flow's kept sums of a set and window are read again
	// (store.TopFlowRebuildInterval).
	FlowCloseInterval time.Duration `env:"FLOW_CLOSE_INTERVAL" envDefault:"1m"`

	// TopFlowKeep is how many addresses of top_flow's kept closed-hour sums (store.KeepTopFlows:
	// deployment sets and windows asked for in the last hour whose closed hours hold at least
	// store.DefaultTopFlowMinAddresses addresses) a replica holds at most, about 160 bytes each;
	// 0 (or less) keeps none (every request runs top_flow.sql).
	TopFlowKeep int `env:"TOP_FLOW_KEEP" envDefault:"1000000"`

	// UserLabelsURL is the user-labels service's base URL, asked for the caller's own labels and
	// entities of top_flow's addresses; empty: none are added.
	UserLabelsURL string `env:"USER_LABELS_URL" envDefault:"http://user-labels:8080" envEmpty:"off"`

	// The operator's own token for /native/circulating: chain, contract ("" for the chain's
	// native coin), decimals, exact total supply (smallest unit) and non-circulating addresses.
	NativeChain       string   `env:"NATIVE_CHAIN"`
	NativeToken       string   `env:"NATIVE_TOKEN"`
	NativeDecimals    int32    `env:"NATIVE_DECIMALS" envDefault:"18"`
	NativeTotalSupply string   `env:"NATIVE_TOTAL_SUPPLY"`
	NativeReserves    []string `env:"NATIVE_RESERVES" envSeparator:","`

	// The tokens the operator's exchange lists, by pricing id, for
	// /token/service_exchange_tokens: spot markets and perpetual futures (empty: none).
	ExchangeSpotTokens []string `env:"EXCHANGE_SPOT_TOKENS" envSeparator:","`
	ExchangePerpTokens []string `env:"EXCHANGE_PERP_TOKENS" envSeparator:","`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("TOKENANALYTICS_CHAINS: %v", err)
	}
	for _, e := range c.PriceCSVs {
		if id, path, ok := strings.Cut(e, "="); !ok || id == "" || path == "" {
			p.Addf("TOKENANALYTICS_PRICE_CSVS: %q is not <pricingId>=<path>", e)
		}
	}
	if c.PriceAPIURL != "" {
		if u, err := url.Parse(c.PriceAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			p.Addf("TOKENANALYTICS_PRICE_API_URL: %q is not an http(s) URL", c.PriceAPIURL)
		}
	}
	if c.PricePollInterval <= 0 || c.PriceRequestsPerMinute <= 0 || c.PriceHistory <= 0 || c.PriceMaxIDs <= 0 {
		p.Addf("TOKENANALYTICS_PRICE_POLL_INTERVAL, _REQUESTS_PER_MINUTE, _HISTORY and _MAX_IDS must be positive")
	}
	if c.FlowRetention != 0 && c.FlowRetention < app.MinFlowRetention {
		p.Addf("TOKENANALYTICS_FLOW_RETENTION: must be 0 (keep everything) or at least %s (what the routes reach), got %s",
			app.MinFlowRetention, c.FlowRetention)
	}
	if c.FlowPruneInterval <= 0 {
		p.Addf("TOKENANALYTICS_FLOW_PRUNE_INTERVAL: must be positive")
	}
	if c.FlowCloseInterval <= 0 {
		p.Addf("TOKENANALYTICS_FLOW_CLOSE_INTERVAL: must be positive")
	}
	checkExchangeTokens(&p, "TOKENANALYTICS_EXCHANGE_SPOT_TOKENS", c.ExchangeSpotTokens)
	checkExchangeTokens(&p, "TOKENANALYTICS_EXCHANGE_PERP_TOKENS", c.ExchangePerpTokens)
	if c.NativeChain != "" {
		if _, ok := chains.Lookup(c.NativeChain); !ok {
			p.Addf("TOKENANALYTICS_NATIVE_CHAIN: unknown chain %q", c.NativeChain)
		}
		if v, ok := new(big.Int).SetString(c.NativeTotalSupply, 10); !ok || v.Sign() < 0 {
			p.Addf("TOKENANALYTICS_NATIVE_TOTAL_SUPPLY: %q is not a non-negative integer (smallest unit)", c.NativeTotalSupply)
		}
		if c.NativeDecimals < 0 || c.NativeDecimals > 36 {
			p.Addf("TOKENANALYTICS_NATIVE_DECIMALS: must be 0..36")
		}
	}
	return p.Err()
}

// checkExchangeTokens refuses a list of the operator's exchange tokens that is not pricing ids
// or names more than app.MaxExchangeTokens of them.
func checkExchangeTokens(p *config.Problems, name string, ids []string) {
	if len(ids) > app.MaxExchangeTokens {
		p.Addf("%s: at most %d pricing ids, got %d", name, app.MaxExchangeTokens, len(ids))
	}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || len(id) > 200 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
			p.Addf("%s: %q is not a pricing id such as bitcoin", name, id)
		}
	}
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
