package intelligence

import (
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
)

// Input no store accepts (a NUL character, invalid UTF-8), in a path parameter, the query or
// the body, is a 400 naming the parameter on every route, never a 500.
func TestInputClassesOnEveryRoute(t *testing.T) {
	resetDB(t)
	api := newTestAPI(t, nil, nil)
	id := httpx.Identity{KeyID: "k-in", UserID: "u-in", Role: httpx.RoleIndividual, Tier: "api"}
	a := "0x5000000000000000000000000000000000000001"
	type route struct{ method, path, param string } // {p} is where param goes
	routes := []route{
		{"GET", "/intelligence/address/{p}", "address"},
		{"GET", "/intelligence/address/{p}/all", "address"},
		{"GET", "/intelligence/address_enriched/{p}", "address"},
		{"GET", "/intelligence/address_enriched/{p}/all", "address"},
		{"GET", "/intelligence/address_with_extra_enrichment/{p}", "address"},
		{"GET", "/intelligence/address_with_extra_enrichment/{p}/all", "address"},
		{"POST", "/intelligence/address/batch", ""},
		{"GET", "/intelligence/entity/{p}", "entity"},
		{"GET", "/intelligence/entity/{p}/summary", "entity"},
		{"GET", "/intelligence/entity_predictions/{p}", "entity"},
		{"GET", "/intelligence/contract/ethereum/{p}", "address"},
		{"GET", "/intelligence/token/{p}", "id"},
		{"GET", "/intelligence/token/ethereum/{p}", "address"},
		{"GET", "/tag/{p}/params", "id"},
		{"GET", "/tag/{p}/summary", "id"},
		{"GET", "/risk/address/{p}", "address"},
		{"GET", "/risk/address/{p}/paths", "address"},
		{"POST", "/risk/address/batch", ""},
		{"GET", "/risk/entity/{p}", "entity_id"},
	}
	valid := map[string]string{"address": a, "entity": "binance", "entity_id": "binance", "id": "usd-coin", "": ""}
	for _, rt := range routes {
		path := strings.ReplaceAll(rt.path, "{p}", valid[rt.param])
		body := ""
		if rt.method == "POST" {
			body = `{"addresses":["` + a + `"]}`
		}
		type input struct{ name, path, body, want string }
		ins := []input{
			{"query NUL", path + "?chain=a%00", body, `chain: must not contain a NUL character (byte 1)`},
			{"query invalid UTF-8", path + "?chain=%ff", body, `chain: is not valid UTF-8 (byte 0)`},
		}
		if rt.param != "" {
			ins = append(ins,
				input{"path NUL", strings.ReplaceAll(rt.path, "{p}", "%00x"), body, rt.param + `: must not contain a NUL character (byte 0)`},
				input{"path invalid UTF-8", strings.ReplaceAll(rt.path, "{p}", "x%ff"), body, rt.param + `: is not valid UTF-8 (byte 1)`})
		} else {
			ins = append(ins,
				input{"body NUL", path, `{"addresses":["` + a + `","\u0000"]}`, `addresses[1] must not contain a NUL character (\\u0000)`},
				input{"body invalid UTF-8", path, "{\"addresses\":[\"\xc3\x28\"]}", `addresses[0] is not valid UTF-8`},
				input{"body wrong type", path, `{"addresses":"` + a + `"}`, `addresses: must be an array of strings, not a string`},
				input{"body unknown field", path, `{"address":["` + a + `"]}`, `request body has an unknown field \"address\"`})
		}
		for _, in := range ins {
			t.Run(rt.method+" "+rt.path+" "+in.name, func(t *testing.T) {
				status, got := api.do(t, rt.method, in.path, in.body, &id)
				want := `{"error":"` + in.want + `"}`
				if status != 400 || strings.TrimSpace(got) != want {
					t.Fatalf("%s %s: got %d %s, want 400 %s", rt.method, in.path, status, got, want)
				}
			})
		}
	}
}
