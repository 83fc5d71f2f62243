package ws

import (
	"errors"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// FuzzDecode: any client message decodes to a request or a protocol error with a known code,
// never a panic, and every accepted subscribe either parses as a filter or is refused with
// a filter error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"subscribe","id":"1","payload":{"filters":{"to":["binance"],"chains":["ethereum"]}}}`,
		`{"type":"subscribe","id":"1","payload":{"filters":{"from":"0x28c6c06298d514db089934071355e5743bf21d60,!type:cex","usdGte":"1000"}}}`,
		`{"type":"subscribe","id":"1","payload":{"filters":{"base":"binance","flow":"in","counterparties":["coinbase"],"usdGte":10000000}}}`,
		`{"type":"subscribe","id":"1","payload":{"filters":{"tokens":["tether","0xdac17f958d2ee523a2206206994597c13d831ec7"],"usdLte":5}}}`,
		`{"type":"unsubscribe","id":"2","payload":{"filterId":"abc"}}`,
		`{"type":"reconnect","id":"3","payload":{"sessionId":"6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"}}`,
		`{"type":"subscribe","id":"1","payload":{"filters":{"to":["deposit:binance"]}}} trailing`,
		`{"type":"x"}`, `[]`, `null`, ``, `{"type":"subscribe","id":"1","payload":{"filters":null}}`,
	} {
		f.Add([]byte(s))
	}
	codes := map[string]bool{CodeInvalidPayload: true, CodeInvalidFilter: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := Decode(b)
		var pe *ProtocolError
		if err != nil {
			if !errors.As(err, &pe) || !codes[pe.Code] || pe.Message == "" {
				t.Fatalf("error %v is not a protocol error with a decode code", err)
			}
			return
		}
		switch req.Type {
		case TypeSubscribe:
			if _, err := filter.Parse(req.Filters, filter.Options{}); err != nil {
				var fe *filter.Error
				if !errors.As(err, &fe) || fe.Field == "" {
					t.Fatalf("filter error %v names no field", err)
				}
			}
		case TypeUnsubscribe:
			if req.FilterID == "" {
				t.Fatal("unsubscribe without a filter id accepted")
			}
		case TypeReconnect:
			if req.SessionID == "" {
				t.Fatal("reconnect without a session id accepted")
			}
		default:
			t.Fatalf("type %q accepted", req.Type)
		}
		if req.ID == "" || len(req.ID) > MaxMessageID {
			t.Fatalf("id %q accepted", req.ID)
		}
	})
}
