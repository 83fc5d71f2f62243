package httpx_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/gin-gonic/gin"
)

// A service serves the route its path names as sent: it never collapses dot segments or "//",
// never splits a segment at an encoded "/", and never redirects elsewhere, so what the edge
// authorised for a path is what the service answers.
func TestEngineNeverReresolvesPaths(t *testing.T) {
	e := httpx.NewEngine(httpx.EngineOptions{Service: "test"})
	route := func(c *gin.Context) {
		out := gin.H{"route": c.FullPath()}
		for _, p := range c.Params {
			out[p.Key] = p.Value
		}
		c.JSON(http.StatusOK, out)
	}
	for _, p := range []string{"/flow/address/:address", "/transfers/histogram", "/token/balance/:id",
		"/token/balance/:id/:address", "/intelligence/entity/:entity", "/intelligence/entity/:entity/summary"} {
		e.GET(p, route)
	}
	cases := []struct{ path, want string }{
		{"/flow/address/..%2f..%2ftransfers%2fhistogram", `{"address":"../../transfers/histogram","route":"/flow/address/:address"}`},
		{"/flow/address/..%2F..%2Ftransfers%2Fhistogram", `{"address":"../../transfers/histogram","route":"/flow/address/:address"}`},
		{"/flow/address/%2e%2e/%2e%2e/transfers/histogram", `{"error":"no route for /flow/address/../../transfers/histogram"}`},
		{"/flow/address/../../transfers/histogram", `{"error":"no route for /flow/address/../../transfers/histogram"}`},
		{"/flow//address/x", `{"error":"no route for /flow//address/x"}`},
		{"/intelligence/entity/x/summary%2f..", `{"error":"no route for /intelligence/entity/x/summary/.."}`},
		{"/intelligence/entity/x%2fsummary", `{"entity":"x/summary","route":"/intelligence/entity/:entity"}`},
		{"/token/balance/eth%2F0xabc", `{"id":"eth/0xabc","route":"/token/balance/:id"}`},
		{"/token/balance/EQ+a%2Bb%20c", `{"id":"EQ+a+b c","route":"/token/balance/:id"}`},
		{"/transfers/histogram/", `{"error":"no route for /transfers/histogram/"}`},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, c.path, nil))
		if got := w.Body.String(); got != c.want {
			t.Errorf("%s: %d %s, want %s", c.path, w.Code, got, c.want)
		}
	}
}

// A 400 for a body of the wrong shape names the field and the JSON kind, never a Go type.
func TestDecodeJSONNamesNoGoTypes(t *testing.T) {
	type item struct {
		Address string   `json:"address"`
		Chains  []string `json:"chains"`
		Limit   int      `json:"limit"`
	}
	cases := []struct {
		body string
		v    any
		want string
	}{
		{`{"address":1}`, &item{}, `address: must be a string, not a number`},
		{`{"chains":"eth"}`, &item{}, `chains: must be an array of strings, not a string`},
		{`{"limit":1.5}`, &item{}, `limit: must be an integer, not the number 1.5`},
		{`[1]`, &item{}, `request body must be an object, not an array`},
		{`{"x":1}`, &item{}, `request body has an unknown field "x"`},
		{`"a"`, &[]item{}, `request body must be an array of objects, not a string`},
	}
	for _, c := range cases {
		err := httpx.DecodeJSON(strings.NewReader(c.body), c.v)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.body, err, c.want)
		}
	}
}
