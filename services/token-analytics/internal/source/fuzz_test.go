package source

import (
	"strings"
	"testing"
)

func FuzzParsePriceCSV(f *testing.F) {
	f.Add("snapped_at,price,market_cap,total_volume\n2023-08-26 00:00:00 UTC,1653.42,198709215180.5,7030468153.0\n")
	f.Add("snapped_at,price,market_cap,total_volume\n2023-08-26 05:00:00 UTC,1,0.0,0\n")
	f.Add("snapped_at,price,market_cap,total_volume\n2023-08-26T00:00:00Z,1e308,x,\n")
	f.Add("date,price\n1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ParsePriceCSV(strings.NewReader(in), "x")
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.Price <= 0 || p.Time.IsZero() || (p.MarketCap != nil && *p.MarketCap <= 0) {
				t.Fatalf("%q: accepted %+v", in, p)
			}
		}
	})
}

func FuzzParseTokenList(f *testing.F) {
	f.Add(`{"0x1":{"0xA0b8":{"name":"USDC","symbol":"USDC","coingeckoId":"usd-coin","decimals":6}}}`)
	f.Add(`{"0x2105":{"0x1":{"coingeckoId":"x","decimals":-1}},"cardano-mainnet":{}}`)
	f.Add(`{"0xzz":{}}`)
	f.Fuzz(func(t *testing.T, in string) {
		us, err := ParseTokenList(strings.NewReader(in), nil, nil)
		if err != nil {
			return
		}
		for _, u := range us {
			if u.PricingID == "" || len(u.Deployments) == 0 {
				t.Fatalf("%q: accepted %+v", in, u)
			}
			for _, d := range u.Deployments {
				if d.Decimals < 0 || d.Chain == "" || d.Address != strings.ToLower(d.Address) {
					t.Fatalf("%q: accepted deployment %+v", in, d)
				}
			}
		}
	})
}
