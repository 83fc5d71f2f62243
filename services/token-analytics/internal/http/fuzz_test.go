package http

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
)

// checkParse fails unless err is nil or a parameter error (a 400, never a 500 or a panic).
func checkParse(t *testing.T, raw string, err error) {
	var pe *params.Error
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("%q: %T %v is not a parameter error", raw, err, err)
	}
}

func FuzzParseTop(f *testing.F) {
	for _, s := range []string{"timeframe=24h", "timeframe=7d&orderByAgg=netflowVolumeRatioCex&orderByDesc=false&orderByPercent=true",
		"timeframe=1h&numReferencePeriods=auto&minVolume=1e3&maxVolume=1e9&tokenIds=a,b&chains=ethereum,base&from=10&size=5",
		"timeframe=6h&numReferencePeriods=30&minMarketCap=NaN", "timeframe=12h&size=101&chains=mars", "%zz"} {
		f.Add(s)
	}
	set, _ := chains.NewSet(nil)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		tq, err := ParseTop(q, set)
		checkParse(t, raw, err)
		if err == nil && (tq.Size < 1 || tq.Size > MaxTopSize || tq.From < 0 || tq.Timeframe <= 0 || tq.ReferencePeriods < 0) {
			t.Fatalf("%q: out-of-range query accepted: %+v", raw, tq)
		}
	})
}

func FuzzParseTopFlowAndVolume(f *testing.F) {
	for _, s := range []string{"timeLast=24h", "timeLast=7d&limit=100&chains=ethereum", "granularity=1h&timeLast=30d",
		"granularity=7d&timeLast=365d", "granularity=1d&timeLast=1h", "timeLast=-1d", "granularity=1h&timeLast=99999999999999999d"} {
		f.Add(s)
	}
	set, _ := chains.NewSet(nil)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		tf, err := ParseTopFlow(q, set)
		checkParse(t, raw, err)
		if err == nil && (tf.Window <= 0 || tf.Window > MaxWindow || tf.Limit < 1 || tf.Limit > MaxTopFlowLimit) {
			t.Fatalf("%q: top_flow accepted %+v", raw, tf)
		}
		v, err := ParseVolume(q)
		checkParse(t, raw, err)
		if err == nil && (v.Window < v.Granularity || v.Window > MaxWindow || int(v.Window/v.Granularity) > 24*365) {
			t.Fatalf("%q: volume accepted %+v", raw, v)
		}
	})
}

func FuzzPricingID(f *testing.F) {
	for _, s := range []string{"ethereum", "usd-coin", "", "a b", "\x00", "x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		checkParse(t, id, PricingID(id))
	})
}

func FuzzParsePriceChangeAndHistory(f *testing.F) {
	for _, s := range []string{"pastTime=2024-01-01T00:00:00Z", "pastTime=1700000000000", "pastTime=2026-01-10T14:30:00%2B02:00",
		"pastTime=-1", "pastTime=99999999999999999999", "pastTime=1&pastTime=2", "pastTime=", "daily=true", "daily=0", "daily=yes", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		past, err := ParsePriceChange(q, now)
		checkParse(t, raw, err)
		if err == nil && (past.After(now) || past.Before(time.Unix(0, 0))) {
			t.Fatalf("%q: pastTime %s accepted", raw, past)
		}
		_, err = ParseHistory(q)
		checkParse(t, raw, err)
	})
}
