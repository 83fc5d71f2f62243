package http

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// Limits of the public parameters.
const (
	MaxTopSize       = 1000
	DefaultTopSize   = 50
	MaxTopFrom       = 10000
	MaxTopFlowLimit  = 100
	DefaultTopFlow   = 50
	MaxWindow        = 365 * 24 * time.Hour
	MaxHourlyWindow  = 30 * 24 * time.Hour
	MaxPricingIDByte = 200
)

// Granularities are /token/volume's granularity values.
var Granularities = map[string]time.Duration{"1h": time.Hour, "2h": 2 * time.Hour, "4h": 4 * time.Hour,
	"6h": 6 * time.Hour, "12h": 12 * time.Hour, "1d": 24 * time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

// chainList parses and checks a chains parameter against the deployment's chains.
func chainList(q url.Values, set *chains.Set) ([]string, error) {
	cs, err := params.Chains(q, "chains", set)
	if err != nil || cs == nil {
		return nil, err
	}
	return chains.Names(cs), nil
}

func optFloat(q url.Values, name string) (*float64, error) {
	v, ok, err := params.Float(q, name)
	if err != nil || !ok {
		return nil, err
	}
	if v < 0 {
		return nil, params.Errorf(name, "must not be negative, got %v", v)
	}
	return &v, nil
}

// ParseTop checks /token/top's parameters.
func ParseTop(q url.Values, set *chains.Set) (app.TopQuery, error) {
	var t app.TopQuery
	tf, err := params.One(q, "timeframe")
	if err != nil {
		return t, err
	}
	if tf == "" {
		return t, params.Errorf("timeframe", "is required: one of 1h, 6h, 12h, 24h, 7d")
	}
	var ok bool
	if t.Timeframe, ok = app.Timeframes[tf]; !ok {
		return t, params.Errorf("timeframe", "must be one of 1h, 6h, 12h, 24h, 7d, got %q", params.Trunc(tf))
	}
	if t.OrderBy, err = params.Enum(q, "orderByAgg", "volume", app.OrderByAggs...); err != nil {
		return t, err
	}
	if t.Desc, err = params.Bool(q, "orderByDesc", true); err != nil {
		return t, err
	}
	if t.Percent, err = params.Bool(q, "orderByPercent", false); err != nil {
		return t, err
	}
	if t.From, err = params.Int(q, "from", 0, 0, MaxTopFrom); err != nil {
		return t, err
	}
	if t.Size, err = params.Int(q, "size", DefaultTopSize, 1, MaxTopSize); err != nil {
		return t, err
	}
	if t.Chains, err = chainList(q, set); err != nil {
		return t, err
	}
	if t.TokenIDs, err = params.List(q, "tokenIds"); err != nil {
		return t, err
	}
	if t.ReferencePeriods, err = referencePeriods(q); err != nil {
		return t, err
	}
	return t, bounds(q, &t)
}

// referencePeriods is numReferencePeriods: 1 by default, 0 for auto.
func referencePeriods(q url.Values) (int, error) {
	s, err := params.One(q, "numReferencePeriods")
	if err != nil || s == "auto" {
		return 0, err
	}
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > app.MaxReferencePeriods {
		return 0, params.Errorf("numReferencePeriods", "must be auto or an integer from 1 to %d, got %q", app.MaxReferencePeriods, params.Trunc(s))
	}
	return n, nil
}

func bounds(q url.Values, t *app.TopQuery) error {
	var err error
	for _, b := range []struct {
		name string
		dst  **float64
	}{{"minVolume", &t.MinVolume}, {"maxVolume", &t.MaxVolume}, {"minMarketCap", &t.MinMarketCap}, {"maxMarketCap", &t.MaxMarketCap}} {
		if *b.dst, err = optFloat(q, b.name); err != nil {
			return err
		}
	}
	if t.MinVolume != nil && t.MaxVolume != nil && *t.MinVolume > *t.MaxVolume {
		return params.Errorf("minVolume", "must not exceed maxVolume")
	}
	if t.MinMarketCap != nil && t.MaxMarketCap != nil && *t.MinMarketCap > *t.MaxMarketCap {
		return params.Errorf("minMarketCap", "must not exceed maxMarketCap")
	}
	return nil
}

// TopFlowQuery is a checked /token/top_flow request.
type TopFlowQuery struct {
	Window time.Duration
	Limit  int
	Chains []string
}

// ParseTopFlow checks /token/top_flow's parameters.
func ParseTopFlow(q url.Values, set *chains.Set) (TopFlowQuery, error) {
	var t TopFlowQuery
	s, err := params.One(q, "timeLast")
	if err != nil {
		return t, err
	}
	if s == "" {
		return t, params.Errorf("timeLast", "is required, such as 24h or 7d")
	}
	if t.Window, err = window(q, s); err != nil {
		return t, err
	}
	if t.Limit, err = params.Int(q, "limit", DefaultTopFlow, 1, MaxTopFlowLimit); err != nil {
		return t, err
	}
	t.Chains, err = chainList(q, set)
	return t, err
}

// window reads timeLast (at most MaxWindow); timeGte or timeLte beside it is a 400, as on
// /transfers (API.md, Conventions): the routes take no bounds, and ignoring one the caller
// combined with timeLast would answer another window than asked.
func window(q url.Values, s string) (time.Duration, error) {
	if err := params.LastAlone(q); err != nil {
		return 0, err
	}
	d, err := params.DurationAtMost(s, MaxWindow, "365d")
	if err != nil {
		return 0, params.Errorf("timeLast", "%v", err)
	}
	return d, nil
}

// VolumeQuery is a checked /token/volume request.
type VolumeQuery struct {
	Granularity time.Duration
	Window      time.Duration
}

// ParseVolume checks /token/volume's parameters: granularity (1h, 2h, 4h, 6h, 12h, 1d, 7d) is
// required; timeLast defaults to 7d for hourly buckets and 90d for larger ones, must hold at
// least one bucket, and 1h over more than 30 days is refused.
func ParseVolume(q url.Values) (VolumeQuery, error) {
	var v VolumeQuery
	g, err := params.One(q, "granularity")
	if err != nil {
		return v, err
	}
	if g == "" {
		return v, params.Errorf("granularity", "is required: one of 1h, 2h, 4h, 6h, 12h, 1d, 7d")
	}
	var ok bool
	if v.Granularity, ok = Granularities[g]; !ok {
		return v, params.Errorf("granularity", "must be one of 1h, 2h, 4h, 6h, 12h, 1d, 7d, got %q", params.Trunc(g))
	}
	s, err := params.One(q, "timeLast")
	if err != nil {
		return v, err
	}
	switch {
	case s != "":
		if v.Window, err = window(q, s); err != nil {
			return v, err
		}
	case v.Granularity < 24*time.Hour:
		v.Window = 7 * 24 * time.Hour
	default:
		v.Window = 90 * 24 * time.Hour
	}
	if v.Window < v.Granularity {
		return v, params.Errorf("timeLast", "must be at least the granularity %s", g)
	}
	if v.Granularity == time.Hour && v.Window > MaxHourlyWindow {
		return v, params.Errorf("granularity", "1h is allowed over at most 30 days; use 1d")
	}
	return v, nil
}

// PricingID checks a pricing id path segment.
func PricingID(id string) error {
	if id == "" || len(id) > MaxPricingIDByte || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return params.Errorf("id", "must be a pricing id such as ethereum")
	}
	return nil
}

// ParseHistory checks /token/price/history's daily parameter (true or 1: daily points over the
// whole stored history; false, 0 or absent: the finest points of the recent window).
func ParseHistory(q url.Values) (daily bool, err error) {
	return params.Bool(q, "daily", false)
}

// ParsePriceChange checks /token/price_change's pastTime: required, Unix milliseconds or RFC
// 3339 as every time parameter (libs/params Time), and not after now.
func ParsePriceChange(q url.Values, now time.Time) (time.Time, error) {
	s, err := params.One(q, "pastTime")
	if err != nil {
		return time.Time{}, err
	}
	if s == "" {
		return time.Time{}, params.Errorf("pastTime", "is required: Unix milliseconds or RFC 3339, such as 2024-01-01T00:00:00Z")
	}
	t, err := params.Time(s)
	if err != nil {
		return time.Time{}, params.Errorf("pastTime", "%v", err)
	}
	if t.After(now) {
		return time.Time{}, params.Errorf("pastTime", "%s is in the future", t.Format(time.RFC3339Nano))
	}
	return t, nil
}
