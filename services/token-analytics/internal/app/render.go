package app

import (
	"time"

	"github.com/chainintel/chainintel/libs/render"
)

// The API's address objects are libs/render's, shared with every service that answers with
// them (the caller's own labels are added with user-labels' Lookup.Apply).
type (
	Entity       = render.Entity
	AddressLabel = render.AddressLabel
	AddressInfo  = render.AddressInfo
)

// Interval is one window of a /token/top row. Price is set on every current window (unpriced
// tokens are left out); on a previous window it is 0 when no price was in force at its end (the
// public shape requires a number).
type Interval struct {
	Price            float64 `json:"price"`
	Volume           float64 `json:"volume"`
	InflowCexVolume  float64 `json:"inflowCexVolume"`
	OutflowCexVolume float64 `json:"outflowCexVolume"`
	InflowDexVolume  float64 `json:"inflowDexVolume"`
	OutflowDexVolume float64 `json:"outflowDexVolume"`
	Netflow          float64 `json:"netflow"`
}

// TopTokenRef identifies a /token/top row's token.
type TopTokenRef struct {
	ID        string   `json:"id"`
	Symbol    string   `json:"symbol"`
	MarketCap *float64 `json:"marketCap"`
}

// TopToken is a /token/top row.
type TopToken struct {
	Token    TopTokenRef `json:"token"`
	Current  Interval    `json:"current"`
	Previous Interval    `json:"previous"`
}

// TopResult is the /token/top answer.
type TopResult struct {
	Tokens []TopToken `json:"tokens"`
	Total  int        `json:"total"`
}

// TopFlow is a /token/top_flow row.
type TopFlow struct {
	Address  AddressInfo `json:"address"`
	InUSD    float64     `json:"inUSD"`
	InValue  float64     `json:"inValue"`
	OutUSD   float64     `json:"outUSD"`
	OutValue float64     `json:"outValue"`
}

// VolumePoint is a /token/volume row.
type VolumePoint struct {
	Time     time.Time `json:"time"`
	InUSD    float64   `json:"inUSD"`
	InValue  float64   `json:"inValue"`
	OutUSD   float64   `json:"outUSD"`
	OutValue float64   `json:"outValue"`
}

// TrendingToken is a /token/trending row. Price, AllTimeHigh and AllTimeLow are set on every row
// served (unpriced tokens are not trending); Price24hAgo and Volume24h are null in the list when
// the service has no price 24 h ago or no 24 h volume (its shape allows null), and 0 on the
// single token's route (TrendingToken: its shape requires numbers).
type TrendingToken struct {
	Name              string   `json:"name"`
	Symbol            string   `json:"symbol"`
	PricingID         string   `json:"pricingID"`
	Price             *float64 `json:"price"`
	Price24hAgo       *float64 `json:"price24hAgo"`
	Volume24h         *float64 `json:"volume24h"`
	AllTimeHigh       *float64 `json:"allTimeHigh"`
	AllTimeLow        *float64 `json:"allTimeLow"`
	CirculatingSupply *float64 `json:"circulatingSupply,omitempty"`
	TotalSupply       *float64 `json:"totalSupply,omitempty"`
}

// TokenIdentifier names a token as it was asked for.
type TokenIdentifier struct {
	PricingID string `json:"pricingID"`
	Chain     string `json:"chain,omitempty"`
	Address   string `json:"address,omitempty"`
}

// TokenMarket is the market data /intelligence/token shows.
type TokenMarket struct {
	Identifier  TokenIdentifier `json:"identifier"`
	Name        string          `json:"name"`
	Symbol      string          `json:"symbol"`
	Price       *float64        `json:"price,omitempty"`
	Price24hAgo *float64        `json:"price24hAgo,omitempty"`
	Deployments []Deployment    `json:"deployments"`
}
