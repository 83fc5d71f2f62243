package filter

import (
	"errors"
	"testing"
)

// TestDecodeErrorsNameTheField: every refusal names the field and what it wants, and no Go type.
func TestDecodeErrorsNameTheField(t *testing.T) {
	cases := map[string]string{
		`[]`:                                  `filters: want a JSON object (a TransferFilter), not an array`,
		``:                                    `filters: want a JSON object (a TransferFilter), not nothing`,
		`{"to":["binance"]`:                   `filters: not valid JSON`,
		`{"to":["binance"]} {}`:               `filters: trailing data after the JSON object`,
		`{"to":["binance"],"usdGte":true}`:    `usdGte: want a number or a decimal string, not a boolean`,
		`{"to":["binance"],"valueLte":"abc"}`: `valueLte: must be a number or a decimal string, got "abc"`,
		`{"to":["binance"],"usdGte":"NaN"}`:   `usdGte: must be a number or a decimal string, got "NaN"`,
		`{"to":["binance"],"usdGte":1e999}`:   `usdGte: must be a finite number, got 1e999`,
		`{"to":["binance"],"usdLte":-1e999}`:  `usdLte: must be a finite number, got -1e999`,
		`{"to":["binance"],"usdGte":"1e400"}`: `usdGte: must be a finite number, got "1e400"`,
		`{"to":["binance"],"valueGte":"Inf"}`: `valueGte: must be a finite number, got "Inf"`,
		`{"to":5}`:                            `to: want an array of strings or a comma-separated string, not a number`,
		`{"from":[1,2]}`:                      `from: want an array of strings or a comma-separated string, not an array holding something other than strings`,
		`{"flow":{"a":1},"to":"x"}`:           `flow: want a string (in, out, self or all), not an object`,
		`{"to":"x","bogus":1}`:                `bogus: unknown field; a filter has from, to, base, flow, counterparties, tokens, chains, usdGte, usdLte, valueGte, valueLte`,
	}
	for in, want := range cases {
		_, err := Decode([]byte(in))
		var fe *Error
		if !errors.As(err, &fe) || err.Error() != want {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
	r, err := Decode([]byte(`{"to":"binance,okx","usdGte":"5","flow":"all","usdLte":null}`))
	if err != nil || len(r.To) != 2 || r.USDGte == nil || *r.USDGte != 5 || r.Flow != "all" || r.USDLte != nil {
		t.Fatalf("decode: %+v %v", r, err)
	}
}

// FuzzDecode: any input is decoded or refused with an error naming its field.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"to":["binance"]}`, `[]`, `{"usdGte":true}`, `{"to":5}`, `{"bogus":1}`, `{"flow":"in","base":"x"}`,
		`{"usdGte":1e999}`, `{"usdLte":"1e400"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		r, err := Decode([]byte(js))
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Field == "" || fe.Rule == "" {
				t.Fatalf("error %v names no field", err)
			}
			return
		}
		if _, err := Parse(r, Options{}); err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("parse error %v names no field", err)
			}
		}
	})
}
