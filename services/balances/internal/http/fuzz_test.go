package http

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/params"
)

// Every parser of user input either accepts within its bounds or refuses with a parameter
// error; it never panics and never accepts out of bounds.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"", "chains=ethereum,base&cheap=true", "time=1772928000000", "time=2026-03-09T15:00:00Z&chains=x",
		"pricingId=usd-coin", "limit=100&offset=900&groupByEntity=1", "limit=-1", "offset=99999999999999999999",
		"entityID=binance", "address=0x1&entityID=x", "pricingID=solana&limit=10000", "cheap=perhaps&cheap=true", "%zz"} {
		f.Add(s, "So11111111111111111111111111111111111111112,a,,b")
	}
	f.Fuzz(func(t *testing.T, raw, path string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check := func(err error) {
			if err != nil && !params.IsParamError(err) {
				t.Fatalf("%q: %v is not a parameter error", raw, err)
			}
		}
		_, err = ParseChains(q)
		check(err)
		_, err = ParseEntityBalances(q)
		check(err)
		_, err = ParsePortfolio(q, time.Unix(0, 0))
		check(err)
		ts, err := ParseTimeSeries(q)
		check(err)
		if err == nil && (ts.PricingID == "" || len(ts.PricingID) > MaxPathValue) {
			t.Fatalf("%q: pricingId %q accepted", raw, ts.PricingID)
		}
		h, err := ParseHolders(q)
		check(err)
		if err == nil && (h.Limit < 1 || h.Limit > MaxHoldersLimit || h.Offset < 0 || h.Offset+h.Limit > MaxHoldersWindow) {
			t.Fatalf("%q: holders page %+v accepted", raw, h)
		}
		tb, err := ParseTokenBalance(q)
		check(err)
		if err == nil && (tb.EntityID == "") == (tb.Address == "") {
			t.Fatalf("%q: token balance subject %+v accepted", raw, tb)
		}
		s, err := ParseSubaccounts("addresses", path, q)
		check(err)
		if err == nil {
			if len(s.Items) == 0 || len(s.Items) > MaxPathList || s.Limit < 1 || s.Limit > MaxSubLimit || s.PricingID == "" {
				t.Fatalf("%q %q: subaccounts %+v accepted", raw, path, s)
			}
			for _, it := range s.Items {
				if it == "" || strings.Contains(it, ",") || len(it) > MaxPathValue {
					t.Fatalf("%q: item %q accepted", path, it)
				}
			}
		}
		if v, err := pathValue("entity", path); err == nil && (v == "" || len(v) > MaxPathValue) {
			t.Fatalf("%q accepted as a path value", path)
		}
	})
}

// The ranking's parser accepts only a complete request within its bounds, or refuses with a
// parameter error.
func FuzzParseEntityBalanceChanges(f *testing.F) {
	for _, s := range []string{"", "orderBy=balanceUsd&orderDir=desc&interval=7d&limit=10",
		"orderBy=balanceUnit&orderDir=asc&interval=30d&limit=100&pricingIds=ethereum&offset=10000",
		"orderBy=balanceUsdPctChange&orderDir=asc&interval=14d&limit=1&balanceMin=-5&balanceMax=9223372036854775807",
		"orderBy=balanceUsd&orderDir=desc&interval=7d&limit=0", "orderBy=x&orderDir=y&interval=1d&limit=101",
		"orderBy=balanceUsd&orderDir=desc&interval=7d&limit=5&entityTags=a,b&negatedEntityTags=c&entityIds=&chains=ethereum",
		"orderBy=balanceUsd&orderBy=balanceUsd&orderDir=desc&interval=7d&limit=5", "balanceMin=99999999999999999999"} {
		f.Add(s)
	}
	orders := map[string]bool{}
	for _, o := range rankingOrders {
		orders[o] = true
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		rq, err := ParseEntityBalanceChanges(q)
		if err != nil {
			if !params.IsParamError(err) {
				t.Fatalf("%q: %v is not a parameter error", raw, err)
			}
			return
		}
		switch {
		case !orders[rq.OrderBy], rq.Days != 7 && rq.Days != 14 && rq.Days != 30,
			rq.Limit < 1 || rq.Limit > MaxRankingLimit, rq.Offset < 0 || rq.Offset > MaxRankingOffset,
			rq.BalanceMin != nil && rq.BalanceMax != nil && *rq.BalanceMin > *rq.BalanceMax,
			strings.HasPrefix(rq.OrderBy, "balanceUnit") && len(rq.PricingIDs) != 1:
			t.Fatalf("%q: %+v accepted", raw, rq)
		}
	})
}
