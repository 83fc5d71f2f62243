package http_test

import (
	"strings"
	"testing"

	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// Input no store accepts (a NUL character, invalid UTF-8) and time bounds outside what is
// stored are a 400 naming the parameter on every route, never a 500 and never read as "no
// bound".
func TestInputClassesOnEveryRoute(t *testing.T) {
	e := world(t)
	type route struct {
		method, path string // path holds {p} where a path parameter goes, "" when none
		param        string // the path parameter's name
		window       bool   // takes timeGte/timeLte
	}
	routes := []route{
		{"GET", "/transfers", "", true},
		{"GET", "/transfers/histogram", "", true},
		{"GET", "/transfers/histogram/simple", "", true},
		{"GET", "/swaps", "", true},
		{"GET", "/tx/{p}", "hash", false},
		{"GET", "/counterparties/address/{p}", "address", true},
		{"GET", "/counterparties/entity/{p}", "entity", true},
		{"GET", "/flow/address/{p}", "address", true},
		{"GET", "/flow/entity/{p}", "entity", true},
		{"POST", "/internal/activity", "", false},
	}
	valid := map[string]string{"hash": tw.TxHash(1), "address": tw.U1, "entity": "binance"}
	type input struct {
		name, path, body, want string
	}
	for _, rt := range routes {
		path := strings.ReplaceAll(rt.path, "{p}", valid[rt.param])
		body := ""
		if rt.method == "POST" {
			body = `{"addresses":[{"chainType":"evm","address":"` + tw.U1 + `"}]}`
		}
		ins := []input{
			{"query NUL", path + "?base=a%00b", body, `base: must not contain a NUL character (byte 1)`},
			{"query invalid UTF-8", path + "?base=a%ffb", body, `base: is not valid UTF-8 (byte 1)`},
			{"query name NUL", path + "?a%00=1", body, `query parameter name: must not contain a NUL character (byte 1)`},
		}
		if rt.param != "" {
			ins = append(ins,
				input{"path NUL", strings.ReplaceAll(rt.path, "{p}", "x%00"), body, rt.param + `: must not contain a NUL character (byte 1)`},
				input{"path invalid UTF-8", strings.ReplaceAll(rt.path, "{p}", "x%C3%28"), body, rt.param + `: is not valid UTF-8 (byte 1)`})
		}
		if rt.window {
			ins = append(ins,
				input{"year 1 RFC 3339", path + "?timeGte=0001-01-01T00:00:00Z", body,
					`timeGte: time \"0001-01-01T00:00:00Z\" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)`},
				input{"year 1 milliseconds", path + "?timeGte=-62135596800000", body,
					`timeGte: time -62135596800000 is out of range (0 to 253402300799999 Unix milliseconds)`},
				input{"before 1970", path + "?timeLte=1969-12-31T23:59:59Z", body,
					`timeLte: time \"1969-12-31T23:59:59Z\" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)`})
		}
		if rt.method == "POST" {
			ins = append(ins,
				input{"body NUL", path, `{"addresses":[{"chainType":"evm","address":"a\u0000"}]}`,
					`addresses[0].address must not contain a NUL character (\\u0000)`},
				input{"body invalid UTF-8", path, "{\"addresses\":[{\"chainType\":\"ev\xffm\",\"address\":\"a\"}]}",
					`addresses[0].chainType is not valid UTF-8`})
		}
		for _, in := range ins {
			t.Run(rt.method+" "+rt.path+" "+in.name, func(t *testing.T) {
				w := serve(e.router, &alice, rt.method, in.path, in.body)
				want := `{"error":"` + in.want + `"}`
				if w.Code != 400 || strings.TrimSpace(w.Body.String()) != want {
					t.Fatalf("%s %s: got %d %s, want 400 %s", rt.method, in.path, w.Code, w.Body, want)
				}
			})
		}
	}
}
