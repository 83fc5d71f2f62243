// Package app is the token-analytics service's domain: the token registry and prices, flow
// rollups, and the public queries over them (top tokens, top flows, volume, trending, the
// altcoin index, the native token's circulating supply). It knows nothing of HTTP or SQL.
package app

import (
	"errors"
	"math"
	"time"
)

// Typed errors; internal/http maps them to statuses.
var (
	// ErrNotFound is an unknown token (pricing id or deployment).
	ErrNotFound = errors.New("not found")
	// ErrNotConfigured is a route whose configuration is missing (the native token).
	ErrNotConfigured = errors.New("not configured")
)

// Granularity of a stored price point.
type Granularity int16

// Stored granularities (values of eventsv1.PriceGranularity).
const (
	Daily  Granularity = 1
	Hourly Granularity = 2
	Tick   Granularity = 3 // a live quote: it updates the registry's price, it is not stored as history
)

// Deployment is where a token lives: a chain and a contract ("" for the native coin).
type Deployment struct {
	Chain    string `json:"chain"`
	Address  string `json:"address"`
	Decimals int32  `json:"decimals"`
}

// Token is a registry entry.
type Token struct {
	PricingID         string
	Name              string
	Symbol            string
	TVTicker          string
	Stablecoin        bool
	CirculatingSupply *float64
	TotalSupply       *float64
	MarketCap         *float64
	AllTimeHigh       *float64
	AllTimeLow        *float64
	Price             *float64
	PriceTime         time.Time
	Volume24h         *float64
	Deployments       []Deployment
}

// TokenUpdate merges into the registry: empty strings and nil pointers leave a field as it is;
// deployments are added (or replace the one at the same chain and address).
type TokenUpdate struct {
	PricingID         string
	Name              string
	Symbol            string
	TVTicker          string
	Stablecoin        *bool
	Wrapped           *bool // a wrapped or bridged copy of another coin (left out of the altcoin index)
	CirculatingSupply *float64
	TotalSupply       *float64
	MarketCap         *float64
	AllTimeHigh       *float64
	AllTimeLow        *float64
	Volume24h         *float64
	Deployments       []Deployment
}

// PricePoint is a USD price of a pricing id at a time.
type PricePoint struct {
	PricingID   string
	Granularity Granularity
	Time        time.Time
	Price       float64
	MarketCap   *float64
	Volume      *float64
}

// Flow is one transfer as the rollups count it.
type Flow struct {
	Chain, ID, ChainType, BlockHash string
	Time                            time.Time
	Token                           string // contract, "" for the native coin
	From, To                        string
	Value                           float64 // in token units (amount / 10^decimals)
	USD                             float64 // 0 when no price was known
}

// ClassChange changes what an address counts as in CEX/DEX flows: its attribution (SetsEntity)
// or its being a DEX pool (IsPool).
type ClassChange struct {
	ChainType, Address string
	EntityType         string // "" when unattributed
	// DepositService is the id of the entity whose deposit address this is ("" when none): an
	// address without an entity counts as that entity's type.
	DepositService string
	SetsEntity     bool
	IsPool         bool
	Version        int64 // attribution version; 0 applies whatever is stored
	Info           *AddressAttribution
	// Entities are the entity records the attribution carries (its entity and prediction): what
	// a deposit service id resolves to.
	Entities []EntityType
}

// EntityType is an entity's type as of an entity version (0 from publishers that predate them).
type EntityType struct {
	ID, Type string
	Version  int64
}

// AddressAttribution is what top_flow shows of an address.
type AddressAttribution struct {
	Entity           *Entity `json:"entity,omitempty"`
	Label            string  `json:"label,omitempty"`
	PredictedEntity  *Entity `json:"predictedEntity,omitempty"`
	DepositServiceID string  `json:"depositServiceID,omitempty"`
	Contract         bool    `json:"contract,omitempty"`
}

// ReserveBalance is an exact balance observation of a non-circulating address.
type ReserveBalance struct {
	Chain, Address, Token string
	BlockNumber           uint64
	BlockHash             string
	Balance               string // base 10, smallest unit
}

// HourFlows are a pricing id's flows summed over a window, with the number of transfers counted
// in it.
type HourFlows struct {
	Volume, CexIn, CexOut, DexIn, DexOut float64
	Transfers                            int64
}

// Add is f plus g, field by field.
func (f HourFlows) Add(g HourFlows) HourFlows {
	return HourFlows{Volume: f.Volume + g.Volume, CexIn: f.CexIn + g.CexIn, CexOut: f.CexOut + g.CexOut,
		DexIn: f.DexIn + g.DexIn, DexOut: f.DexOut + g.DexOut, Transfers: f.Transfers + g.Transfers}
}

// settled is f with its residues read as zero (Settle): every figure when no transfer counts in
// the window, else each one at most ResidueTolerance of ref.
func (f HourFlows) settled(ref float64) HourFlows {
	if f.Transfers == 0 {
		return HourFlows{}
	}
	return HourFlows{Volume: Settle(f.Volume, ref), CexIn: Settle(f.CexIn, ref), CexOut: Settle(f.CexOut, ref),
		DexIn: Settle(f.DexIn, ref), DexOut: Settle(f.DexOut, ref), Transfers: f.Transfers}
}

// ResidueTolerance is the relative tolerance under which a rollup amount reads as zero. The
// rollups are float8 sums kept by adding and subtracting each change (batches, settling,
// reorgs, class changes), so a sum whose transfers were all undone, or one whose exact value is 0
// (a deposit address's receipts less its sweeps), can hold a residue of the order of 1e-16 of the
// amounts that went through it instead of 0. Read against the volume of the amounts it belongs
// to (docs/token-analytics.md, "Limits"), such a residue is 0; a real amount that small against
// its volume is lost with it.
const ResidueTolerance = 1e-12

// Settle is x, or 0 when |x| is at most ResidueTolerance of ref (a volume x is part of).
func Settle(x, ref float64) float64 {
	if math.Abs(x) <= ResidueTolerance*math.Abs(ref) {
		return 0
	}
	return x
}

// ChainFlows are a token's flows on one chain over a /token/top request's windows.
type ChainFlows struct {
	Chain             string
	Current, Previous HourFlows
}

// TokenParts is a token's TokenWindows (Current and Previous summed over every part) with its
// flows kept per chain, so that a request narrowed to some chains sums only theirs.
type TokenParts struct {
	TokenWindows
	Parts []ChainFlows // ordered by chain
}

// TokenWindows is one token's figures for /token/top: the current window and the mean of the
// reference windows before it, with the prices at the end and at the start of the current one.
type TokenWindows struct {
	PricingID  string
	Symbol     string
	MarketCap  *float64
	Price      *float64
	PrevPrice  *float64
	Current    HourFlows
	Previous   HourFlows
	Stablecoin bool
}

// AddressFlow is one address's flows of a token over a window.
type AddressFlow struct {
	Chain                            string
	Address                          string
	InUSD, InValue, OutUSD, OutValue float64
	Attribution                      *AddressAttribution
}

// VolumeBucket is a token's volume over one bucket, with the number of transfers counted in it.
type VolumeBucket struct {
	Time       time.Time
	USD, Value float64
	Transfers  int64
}

// AltcoinChange is a token's price now and 90 days ago.
type AltcoinChange struct {
	PricingID   string
	Now, Before float64
}
