package params

import (
	"reflect"
	"testing"
)

func TestParseReference(t *testing.T) {
	const evm = "0x28C6c06298d514Db089934071355E5743bf21d60"
	cases := []struct {
		v                  string
		negation, prefixes bool
		want               Reference
		err                string
	}{
		{v: evm, want: Reference{Kind: RefAddress, Value: evm, Addresses: []string{"0x28c6c06298d514db089934071355e5743bf21d60"}}},
		{v: "binance", want: Reference{Kind: RefEntity, Value: "binance"}},
		{v: "8F0C4A34-1111-4222-8333-444455556666", want: Reference{Kind: RefUserEntity, Value: "8f0c4a34-1111-4222-8333-444455556666"}},
		{v: "!binance", negation: true, want: Reference{Kind: RefEntity, Value: "binance", Negate: true}},
		{v: "type:cex", prefixes: true, want: Reference{Kind: RefType, Value: "cex"}},
		{v: "deposit:binance", prefixes: true, want: Reference{Kind: RefDeposit, Value: "binance"}},
		{v: "!binance", err: "f: a leading ! (exclusion) is only allowed in from and to"},
		{v: "type:cex", err: "f: type: references are only allowed in from and to"},
		{v: "type:CEX", prefixes: true, err: `f: type:"CEX" is not an entity type such as type:cex`},
		{v: "deposit:", prefixes: true, err: `f: deposit:"" does not name an entity id such as deposit:binance`},
		{v: "0x12", err: `f: invalid evm address "0x12": want 0x followed by 40 hex digits`},
		{v: "Binance", err: `f: "Binance" is not an address or an entity id (entity ids are lower case: letters, digits, '.', '_' and '-'); did you mean "binance"?`},
	}
	for _, c := range cases {
		got, err := ParseReference("f", c.v, c.negation, c.prefixes)
		if c.err != "" {
			if err == nil || err.Error() != c.err || !IsParamError(err) {
				t.Errorf("%q: error %v, want %s", c.v, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v %v, want %+v", c.v, got, err, c.want)
		}
	}
}

func TestParseToken(t *testing.T) {
	for _, c := range []struct{ v, addr, id, err string }{
		{v: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", addr: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"},
		{v: "usd-coin", id: "usd-coin"},
		{v: "0x1", err: `tokens: invalid evm address "0x1": want 0x followed by 40 hex digits`},
		{v: "USDC", err: `tokens: "USDC" is neither a token contract address nor a pricing id`},
	} {
		a, id, err := ParseToken("tokens", c.v)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %s", c.v, err, c.err)
			}
			continue
		}
		if err != nil || a != c.addr || id != c.id {
			t.Errorf("%q: %q %q %v", c.v, a, id, err)
		}
	}
}
