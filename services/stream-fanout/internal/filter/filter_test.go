package filter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func parse(t *testing.T, js string) (Spec, error) {
	t.Helper()
	var r Raw
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return Spec{}, err
	}
	return Parse(r, Options{})
}

func TestParse(t *testing.T) {
	ok := []string{
		`{"to":["binance"]}`,
		`{"from":"type:cex","to":"deposit:binance"}`,
		`{"base":"0x28C6c06298d514Db089934071355E5743bf21d60","flow":"out"}`,
		`{"tokens":["tether"]}`,
		`{"usdGte":10000000}`,
		`{"usdGte":"10000000.5","chains":["ethereum","bitcoin"]}`,
		`{"from":["6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"]}`,
	}
	for _, js := range ok {
		if _, err := parse(t, js); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
	bad := map[string]string{
		`{"chains":["ethereum"]}`:                   "filters: give at least one",
		`{"usdGte":9999999}`:                        "filters: give at least one",
		`{"from":["!binance"]}`:                     "filters: give at least one",
		`{"from":["0x12"]}`:                         "from:",
		`{"to":["Not An Id"]}`:                      "to:",
		`{"base":"!binance"}`:                       "base: a leading !",
		`{"base":"type:cex"}`:                       "base: type: references",
		`{"to":["binance"],"chains":["mars"]}`:      "chains:",
		`{"to":["binance"],"flow":"in"}`:            "flow: is relative to base",
		`{"base":"binance","flow":"sideways"}`:      "flow: must be one of",
		`{"to":["binance"],"usdGte":-1}`:            "usdGte: must not be negative",
		`{"to":["binance"],"usdGte":5,"usdLte":1}`:  "usdGte: is greater than usdLte",
		`{"tokens":["0xzz"]}`:                       "tokens:",
		`{"counterparties":["binance"],"to":["x"]}`: "counterparties:",
	}
	for js, want := range bad {
		_, err := parse(t, js)
		var fe *Error
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want an error starting %q", js, err, want)
		}
	}
}

func TestNormalisedAddresses(t *testing.T) {
	s, err := parse(t, `{"from":["0x28C6c06298d514Db089934071355E5743bf21d60"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.From[0].Addresses; len(got) != 1 || got[0] != "0x28c6c06298d514db089934071355e5743bf21d60" {
		t.Fatalf("addresses %v", got)
	}
}

// FuzzParse: any filter JSON is accepted or refused with an error naming its field, and so is
// the check of the names it uses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"to":["binance"]}`, `{"from":"type:cex,!0x28c6c06298d514db089934071355e5743bf21d60"}`,
		`{"base":["binance"],"flow":"in","counterparties":"coinbase"}`, `{"usdGte":"1e7"}`, `{"tokens":"tether,0xdac17f958d2ee523a2206206994597c13d831ec7"}`,
		`{"from":"type:zzz"}`, `{"to":"deposit:ghost,!type:bridge"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		var r Raw
		if json.Unmarshal([]byte(js), &r) != nil {
			return
		}
		s, err := Parse(r, Options{})
		if err == nil {
			if !s.Selective() && (s.USDGte == nil || *s.USDGte < MinUSDAlone) {
				t.Fatalf("unselective filter accepted: %s", js)
			}
			err = checkNames(s, knownSet{entities: []string{"binance"}, types: []string{"bridge"}})
		}
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Field == "" || fe.Rule == "" {
				t.Fatalf("error %v names no field", err)
			}
		}
	})
}
