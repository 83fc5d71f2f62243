package query

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
)

var now = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)

func parser(t testing.TB) Parser {
	cs, err := chains.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	return Parser{Chains: cs, Now: func() time.Time { return now }}
}

func TestParseRef(t *testing.T) {
	cases := []struct {
		in         string
		neg, pre   bool
		kind       Kind
		value      string
		negate     bool
		addrs      string
		wantErrSub string
	}{
		{in: "binance", kind: KindEntity, value: "binance"},
		{in: "0x28C6c06298d514Db089934071355E5743bf21d60", kind: KindAddress, addrs: "0x28c6c06298d514db089934071355e5743bf21d60"},
		{in: "0x28C6c06298d514Db089934071355E5743bf21d61", wantErrSub: "checksum"},
		{in: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", kind: KindAddress, addrs: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{in: "8F0E2C55-1111-4222-8333-944455556666", kind: KindUserEntity, value: "8f0e2c55-1111-4222-8333-944455556666"},
		{in: "type:cex", pre: true, kind: KindType, value: "cex"},
		{in: "!type:cex", neg: true, pre: true, kind: KindType, value: "cex", negate: true},
		{in: "deposit:binance", pre: true, kind: KindDeposit, value: "binance"},
		{in: "type:cex", wantErrSub: "only allowed in from and to"},
		{in: "!binance", wantErrSub: "only allowed in from and to"},
		{in: "type:", pre: true, wantErrSub: "not an entity type"},
		{in: "deposit:Bad Id", pre: true, wantErrSub: "does not name an entity id"},
		{in: "Hello World", wantErrSub: `"Hello World" is not an address or an entity id (entity ids are lower case: letters, digits, '.', '_' and '-')`},
		{in: "Binance-sim", wantErrSub: `is not an address or an entity id (entity ids are lower case: letters, digits, '.', '_' and '-'); did you mean "binance-sim"?`},
		{in: "Binance-sim", pre: true, wantErrSub: `is not an address, an entity id, type:<entityType> or deposit:<entityId> (entity ids`},
		{in: "0x12", wantErrSub: "invalid evm address"},
	}
	for _, c := range cases {
		r, err := ParseRef("from", c.in, c.neg, c.pre)
		if c.wantErrSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSub) || !strings.HasPrefix(err.Error(), "from: ") {
				t.Errorf("%q: error %v, want one containing %q", c.in, err, c.wantErrSub)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.Kind != c.kind || r.Negate != c.negate || (c.value != "" && r.Value != c.value) || (c.addrs != "" && strings.Join(r.Addresses, ",") != c.addrs) {
			t.Errorf("%q: got %+v", c.in, r)
		}
	}
}

func TestTransfersDefaultsAndWindow(t *testing.T) {
	p := parser(t)
	q, err := p.Transfers(url.Values{})
	if err != nil || q.Flow != "all" || q.SortKey != "time" || q.SortDir != "desc" || q.Limit != 50 || q.Offset != 0 || !q.Window.IsZero() {
		t.Fatalf("defaults: %+v %v", q, err)
	}
	q, err = p.Transfers(url.Values{"timeLast": {"7d"}, "chains": {"base", "ethereum"}, "tokens": {"usd-coin,0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Window.From.Equal(now.Add(-7*24*time.Hour)) || !q.Window.To.Equal(now) {
		t.Errorf("window %+v", q.Window)
	}
	if strings.Join(chains.Names(q.Chains), ",") != "base,ethereum" {
		t.Errorf("chains %v", chains.Names(q.Chains))
	}
	if q.Tokens[0].PricingID != "usd-coin" || q.Tokens[1].Address != "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" {
		t.Errorf("tokens %+v", q.Tokens)
	}
	h, err := p.Histogram(url.Values{"granularity": {"1h"}, "timeGte": {"2026-01-01T00:00:00Z"}, "timeLte": {"2026-01-31T00:00:00Z"}})
	if err != nil || h.Granularity != "1h" {
		t.Fatalf("30-day hourly histogram refused: %v", err)
	}
	if _, err := p.Histogram(url.Values{"granularity": {"1h"}, "timeGte": {"2026-01-01T00:00:00Z"}, "timeLte": {"2026-01-31T00:00:01Z"}}); err == nil {
		t.Fatal("hourly histogram over 30 days accepted")
	}
}

// seeds for the fuzz targets: valid and broken queries of every route.
var seeds = []string{
	"", "base=binance&flow=in", "base=0x28c6c06298d514db089934071355e5743bf21d60,coinbase&flow=all&sortKey=usd&sortDir=asc",
	"from=!type:cex&to=deposit:binance&tokens=usd-coin,0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
	"timeLast=7d", "timeGte=1700000000000&timeLte=2026-01-01T00:00:00Z", "timeLast=1h&timeGte=1",
	"valueGte=1e3&valueLte=NaN", "usdGte=-1&usdLte=1e308", "limit=1000&offset=9000", "limit=0", "offset=-1",
	"chains=ethereum,,base&chains=bitcoin", "base=!x", "base=type:cex", "from=type:&to=deposit:",
	"counterparties=binance", "granularity=1h&timeLast=30d", "granularity=1h", "flow=either",
	"base=%00", "base=" + strings.Repeat("a", 200), "tokens=" + strings.Repeat("x,", 1200),
	// an address no requested chain takes (an AddressChainError, a 404, still a parameter error)
	"chains=bitcoin&base=0x5000000000000000000000000000000000000001", "chains=bitcoin,solana&from=!0x5000000000000000000000000000000000000001",
	"chains=ethereum&senders=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "from=deposit:nope&to=type:nope&tokens=nope,0x9999999999999999999999999999999999999999",
}

func fuzzParse(t *testing.T, raw string, parse func(url.Values) error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return
	}
	if err := parse(q); err != nil {
		var pe *params.Error
		if !errors.As(err, &pe) || pe.Param == "" || pe.Rule == "" {
			t.Fatalf("%q: error %v is not a parameter error", raw, err)
		}
	}
}

func FuzzTransfers(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	p := parser(f)
	f.Fuzz(func(t *testing.T, raw string) {
		fuzzParse(t, raw, func(q url.Values) error {
			tq, err := p.Transfers(q)
			if err != nil {
				return err
			}
			if tq.Limit < 1 || tq.Limit > 1000 || tq.Offset < 0 || tq.Offset+tq.Limit > MaxWindow {
				t.Fatalf("%q: paging out of bounds: %d %d", raw, tq.Limit, tq.Offset)
			}
			if tq.USDGte != nil && tq.USDLte != nil && *tq.USDGte > *tq.USDLte {
				t.Fatalf("%q: inverted usd range accepted", raw)
			}
			for _, r := range append(append(tq.Base, tq.From...), tq.To...) {
				if r.Kind == KindAddress && len(r.Addresses) == 0 {
					t.Fatalf("%q: address without canonical form", raw)
				}
			}
			return nil
		})
	})
}

func FuzzHistogram(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	p := parser(f)
	f.Fuzz(func(t *testing.T, raw string) {
		fuzzParse(t, raw, func(q url.Values) error {
			h, err := p.Histogram(q)
			if err == nil && h.Granularity == "1h" && (h.Window.From.IsZero() || now.Sub(h.Window.From) > MaxHourlyRange && h.Window.To.IsZero()) {
				t.Fatalf("%q: unbounded hourly histogram accepted", raw)
			}
			return err
		})
		fuzzParse(t, raw, func(q url.Values) error { _, err := p.SimpleHistogram(q); return err })
	})
}

func FuzzSwapsCounterpartiesFlow(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	p := parser(f)
	f.Fuzz(func(t *testing.T, raw string) {
		fuzzParse(t, raw, func(q url.Values) error { _, err := p.Swaps(q); return err })
		fuzzParse(t, raw, func(q url.Values) error { _, err := p.Counterparties(q); return err })
		fuzzParse(t, raw, func(q url.Values) error { _, err := p.Flow(q); return err })
	})
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{"binance", "0x28c6c06298d514db089934071355e5743bf21d60", "8f0e2c55-1111-4222-8333-944455556666",
		"0xABCDEF", "", "bad hash!", strings.Repeat("f", 130)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if r, ok := PathAddress(v); ok && len(r.Addresses) == 0 {
			t.Fatalf("%q: address without canonical form", v)
		}
		if r, ok := PathEntity(v); ok && !IsEntityID(r.Value) {
			t.Fatalf("%q: entity %q is not an entity id", v, r.Value)
		}
		if h, err := TxHash(v); err == nil && (h == "" || len(h) > 128) {
			t.Fatalf("%q: hash %q accepted", v, h)
		}
	})
}

// An address no requested chain takes is an AddressChainError (a 404) naming the parameter, for
// every address parameter and for a path's address (FitsChains); a wrong format stays a 400.
func TestAddressOffTheRequestedChains(t *testing.T) {
	p := parser(t)
	const evm = "0x5000000000000000000000000000000000000001"
	for _, name := range []string{"base", "from", "to", "counterparties"} {
		q, _ := url.ParseQuery("chains=bitcoin&base=binance&" + name + "=" + evm)
		_, err := p.Transfers(q)
		var ac *AddressChainError
		if !errors.As(err, &ac) || ac.Err.Param != name {
			t.Fatalf("%s: got %v, want an AddressChainError naming it", name, err)
		}
	}
	q, _ := url.ParseQuery("chains=bitcoin&base=0x12")
	if _, err := p.Transfers(q); errors.As(err, new(*AddressChainError)) {
		t.Fatalf("a malformed address is a 400, got %v", err)
	}
	r, _ := PathAddress(evm)
	cs, _ := p.chains(url.Values{"chains": {"bitcoin"}})
	if err := p.FitsChains("address", r, cs); err == nil || err.Error() != `address: address "`+evm+`" is not valid on the requested chains (bitcoin)` {
		t.Fatalf("path address: %v", err)
	}
	if err := p.FitsChains("address", r, nil); err != nil {
		t.Fatalf("no chains requested, every chain configured: %v", err)
	}
	// None requested: the configured chains, as balances checks its address routes.
	btc, _ := chains.NewSet([]string{"bitcoin", "dogecoin"})
	onBTC := Parser{Chains: btc}
	want := `address: address "` + evm + `" is not valid on the configured chains (bitcoin, dogecoin)`
	if err := onBTC.FitsChains("address", r, nil); !errors.As(err, new(*AddressChainError)) || err.Error() != want {
		t.Fatalf("no chains requested, bitcoin and dogecoin configured: %v", err)
	}
	q, _ = url.ParseQuery("from=" + evm)
	if _, err := onBTC.Transfers(q); !errors.As(err, new(*AddressChainError)) || err.Error() != strings.Replace(want, "address:", "from:", 1) {
		t.Fatalf("filter, no chains requested, bitcoin and dogecoin configured: %v", err)
	}
}
