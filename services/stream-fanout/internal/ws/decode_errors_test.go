package ws

import (
	"errors"
	"testing"
)

// TestDecodeErrorsNameTheField: a refused message names the field and the JSON it wants, never a
// Go type (encoding/json's own messages do).
func TestDecodeErrorsNameTheField(t *testing.T) {
	cases := map[string]struct{ code, msg string }{
		`[]`:       {CodeInvalidPayload, `message: want a JSON object {"type", "id", "payload"}, not an array`},
		`null`:     {CodeInvalidPayload, `message: want a JSON object {"type", "id", "payload"}, not null`},
		`not json`: {CodeInvalidPayload, `message: not valid JSON; want a JSON object {"type", "id", "payload"}`},
		`[1,`:      {CodeInvalidPayload, `message: not valid JSON; want a JSON object {"type", "id", "payload"}`},
		`hello`:    {CodeInvalidPayload, `message: not valid JSON; want a JSON object {"type", "id", "payload"}`},
		`{"type":"subscribe","id":{"a":1},"payload":{"filters":{"to":["x"]}}}`: {CodeInvalidPayload, `id: want a string, not an object`},
		`{"type":5,"id":"1","payload":{}}`:                                     {CodeInvalidPayload, `type: want a string, not a number`},
		`{"type":"subscribe","id":"1"`:                                         {CodeInvalidPayload, `message: not valid JSON; want a JSON object {"type", "id", "payload"}`},
		`{"type":"subscribe","id":"1","payload":{"filters":[]}}`:               {CodeInvalidFilter, `filters: want a JSON object (a TransferFilter), not an array`},
		`{"type":"subscribe","id":"1","payload":{"filters":{"to":"x","usdGte":true}}}`: {CodeInvalidFilter,
			`usdGte: want a number or a decimal string, not a boolean`},
		`{"type":"subscribe","id":"1","payload":{"filters":{"to":5}}}`: {CodeInvalidFilter,
			`to: want an array of strings or a comma-separated string, not a number`},
		`{"type":"subscribe","id":"1","payload":{"filters":{"to":"x","bogus":1}}}`: {CodeInvalidFilter,
			`bogus: unknown field; a filter has from, to, base, flow, counterparties, tokens, chains, usdGte, usdLte, valueGte, valueLte`},
	}
	for in, want := range cases {
		_, err := Decode([]byte(in))
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != want.code || pe.Message != want.msg {
			t.Errorf("%s: got %v, want %s: %s", in, err, want.code, want.msg)
		}
	}
}
