package http

import (
	"strings"
	"testing"
)

// Input no store accepts (a NUL character, invalid UTF-8), in a path parameter, the query or
// the body, is a 400 naming the parameter on every route; nothing is stored with U+FFFD in
// place of the caller's bytes.
func TestInputClassesOnEveryRoute(t *testing.T) {
	ev := newEnv(t)
	a := evmAddr(3)
	id := "8f0e2c55-1111-4222-8333-944455556666"
	label := `{"name":"n","note":"","address":"` + a + `","chainType":"evm"}`
	entity := `{"name":"e","note":"","addresses":{"evm":["` + a + `"]}}`
	alert := `{"name":"n","enabled":true,"base":["` + a + `"],"alertMethodId":1}`
	type route struct{ method, path, param, body string } // {p} is where param goes
	routes := []route{
		{"GET", "/user/labels", "", ""},
		{"POST", "/user/labels", "", "[" + label + "]"},
		{"DELETE", "/user/labels", "", ""},
		{"PUT", "/user/labels/{p}", "label", label},
		{"DELETE", "/user/labels/{p}", "label", ""},
		{"GET", "/user/entities", "", ""},
		{"POST", "/user/entities", "", entity},
		{"GET", "/user/entities/{p}", "id", ""},
		{"PUT", "/user/entities/{p}", "id", entity},
		{"DELETE", "/user/entities/{p}", "id", ""},
		{"PUT", "/user/entities/only_add/{p}", "id", `{"addresses":{"evm":["` + a + `"]}}`},
		{"POST", "/internal/lookup", "", `{"addresses":[{"chainType":"evm","address":"` + a + `"}]}`},
		{"GET", "/internal/entities/{p}", "id", ""},
		{"POST", "/internal/entities", "", `{"ids":["` + id + `"]}`},
		{"POST", "/internal/additions", "", `{"ids":["binance"]}`},
		{"GET", "/internal/shared/entities/{p}", "id", ""},
		{"GET", "/internal/additions/{p}", "id", ""},
		{"GET", "/user/alerts", "", ""},
		{"POST", "/user/alerts", "", alert},
		{"GET", "/user/alerts/{p}", "id", ""},
		{"PUT", "/user/alerts/{p}", "id", alert},
		{"DELETE", "/user/alerts/{p}", "id", ""},
		{"GET", "/user/alert_methods", "", ""},
		{"POST", "/user/alert_methods", "", `{"url":"https://a.example.com"}`},
		{"DELETE", "/user/alert_methods/{p}", "id", ""},
		{"GET", "/internal/alerts", "", ""},
		{"GET", "/internal/alerts/{p}", "id", ""},
	}
	valid := map[string]string{"label": a + ":evm", "id": id, "": ""}
	type input struct{ name, path, body, want string }
	for _, rt := range routes {
		path := strings.ReplaceAll(rt.path, "{p}", valid[rt.param])
		ins := []input{
			{"query NUL", path + "?labels=a%00", rt.body, `labels: must not contain a NUL character (byte 1)`},
			{"query invalid UTF-8", path + "?includeAddresses=%ff", rt.body, `includeAddresses: is not valid UTF-8 (byte 0)`},
		}
		if rt.param != "" {
			ins = append(ins,
				input{"path NUL", strings.ReplaceAll(rt.path, "{p}", "x%00"), rt.body, rt.param + `: must not contain a NUL character (byte 1)`},
				input{"path invalid UTF-8", strings.ReplaceAll(rt.path, "{p}", "%ff"), rt.body, rt.param + `: is not valid UTF-8 (byte 0)`})
		}
		switch rt.path {
		case "/user/labels":
			if rt.method == "POST" {
				ins = append(ins,
					input{"body NUL", path, `[{"name":"a\u0000b","note":"","address":"` + a + `","chainType":"evm"}]`, `body[0].name must not contain a NUL character (\\u0000)`},
					input{"body invalid UTF-8", path, "[" + label + `,{"name":"n","note":"` + "\xff" + `","address":"` + a + `","chainType":"evm"}]`, `body[1].note is not valid UTF-8`})
			}
		case "/user/alerts", "/user/alerts/{p}":
			if rt.method == "POST" || rt.method == "PUT" {
				path := strings.ReplaceAll(rt.path, "{p}", "1") // an alert id's form
				ins = append(ins,
					input{"body NUL", path, `{"name":"\u0000","enabled":true,"base":null,"alertMethodId":1}`, `name must not contain a NUL character (\\u0000)`},
					input{"body invalid UTF-8", path, "{\"name\":\"x\",\"enabled\":true,\"base\":[\"\xff\"],\"alertMethodId\":1}", `base[0] is not valid UTF-8`})
			}
		case "/user/entities", "/user/entities/{p}":
			if rt.method != "GET" && rt.method != "DELETE" {
				ins = append(ins,
					input{"body NUL", path, `{"name":"\u0000","addresses":{}}`, `name must not contain a NUL character (\\u0000)`},
					input{"body invalid UTF-8", path, "{\"name\":\"x\",\"addresses\":{\"evm\":[\"\xff\"]}}", `addresses.evm[0] is not valid UTF-8`})
			}
		}
		for _, in := range ins {
			t.Run(rt.method+" "+rt.path+" "+in.name, func(t *testing.T) {
				var body any
				if in.body != "" {
					body = in.body
				}
				r := ev.do(t, newUser(), rt.method, in.path, body)
				want := `{"error":"` + in.want + `"}`
				if r.Status != 400 || strings.TrimSpace(r.Body) != want {
					t.Fatalf("%s %s: got %d %s, want 400 %s", rt.method, in.path, r.Status, r.Body, want)
				}
			})
		}
	}
}
