package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// The /swaps filters of the public operations list: senders, receivers, counterparties,
// protocols, each token's amount range, flow=self; and their errors.
func TestSwapParameters(t *testing.T) {
	e := world(t)
	list := func(path string) string {
		r := e.get(t, &bob, path)
		var out struct {
			Swaps []struct {
				ID string `json:"id"`
			} `json:"swaps"`
			Count int `json:"count"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &out) != nil {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		s := ""
		for _, x := range out.Swaps {
			s += x.ID[len(x.ID)-2:] + " "
		}
		return s + fmt.Sprintf("(%d)", out.Count)
	}
	// _4: U1 -> U1 on ethereum, +1000 USDC / -0.5 WETH, uniswap_v3; _7: U2 -> U1 on base,
	// -250 USDC / +0.125 WETH, uniswap_v2.
	for path, want := range map[string]string{
		"/swaps?senders=" + tw.U2:                               "_7 (1)",
		"/swaps?senders=!" + tw.U2:                              "_4 (1)",
		"/swaps?receivers=" + tw.U1:                             "_7 _4 (2)",
		"/swaps?receivers=" + tw.U2:                             "(0)",
		"/swaps?senders=binance":                                "(0)",
		"/swaps?base=" + tw.U1 + "&counterparties=" + tw.U2:     "_7 (1)",
		"/swaps?base=" + tw.U2 + "&counterparties=" + tw.F:      "(0)",
		"/swaps?protocols=uniswap_v3":                           "_4 (1)",
		"/swaps?protocols=uniswap_v2,uniswap_v3":                "_7 _4 (2)",
		"/swaps?value0Gte=0":                                    "_4 (1)",
		"/swaps?value0Lte=-250":                                 "_7 (1)",
		"/swaps?value1Gte=0.1&value1Lte=0.125":                  "_7 (1)",
		"/swaps?value1Lte=-0.5":                                 "_4 (1)",
		"/swaps?base=" + tw.U1 + "&flow=self":                   "_4 (1)",
		"/swaps?senders=" + tw.U1 + "&protocols=uniswap_v2":     "(0)",
		"/swaps?receivers=" + tw.U1 + "&value0Gte=-300&limit=1": "_7 (2)",
		// sortKey=value: |unitValue0|, _4 1000 and _7 250 (time puts _7 first).
		"/swaps?sortKey=value":                                "_4 _7 (2)",
		"/swaps?sortKey=value&sortDir=asc":                    "_7 _4 (2)",
		"/swaps?sortKey=value&limit=1&offset=1":               "_7 (2)",
		"/swaps?base=" + tw.U1 + "&sortKey=value&sortDir=asc": "_7 _4 (2)",
		"/swaps?base=" + tw.U1 + "&flow=in&sortKey=value":     "_4 (1)",
		"/swaps?sortKey=value&timeGte=" + tw.D0.Add(75*time.Hour).Format(time.RFC3339) + "&timeLte=" + tw.D0.Add(77*time.Hour).Format(time.RFC3339): "_4 _7 (2)",
	} {
		if got := list(path); got != want {
			t.Errorf("%s: got %s, want %s", path, got, want)
		}
	}
	for path, want := range map[string]string{
		"/swaps?counterparties=" + tw.U2:          "counterparties: selects swaps between base and these; give base too",
		"/swaps?protocols=Uniswap%20V3":           `protocols: "Uniswap V3" is not a protocol id such as uniswap-v3`,
		"/swaps?value0Gte=1&value0Lte=0":          "value0Gte: must not be greater than value0Lte",
		"/swaps?value1Lte=lots":                   `value1Lte: must be a number, got "lots"`,
		"/swaps?senders=type:nope!":               `senders: type:"nope!" is not an entity type such as type:cex`,
		"/swaps?base=" + tw.U1 + "&flow=sideways": `flow: must be one of in, out, self, all, got "sideways"`,
	} {
		b, _ := json.Marshal(map[string]string{"error": want})
		sameJSON(t, e.get(t, &bob, path), http.StatusBadRequest, string(b))
	}
}

// /transfers/histogram/simple takes every /transfers filter and answers as the daily
// /transfers/histogram does.
func TestSimpleHistogramFilters(t *testing.T) {
	e := world(t)
	// Its parameters (API.md): base, chains, flow and the window, answered as the API-tier route
	// answers them at 1d.
	for _, q := range []string{"", "base=binance", "base=binance&flow=in&timeLast=30d", "base=binance&flow=out&chains=ethereum",
		"chains=ethereum", "timeGte=2026-01-02T00:00:00Z&timeLte=2026-01-05T00:00:00Z"} {
		want := e.get(t, nil, "/transfers/histogram?granularity=1d&"+q)
		sameJSON(t, e.get(t, nil, "/transfers/histogram/simple?"+q), http.StatusOK, string(want.body))
	}
	// The other /transfers filters are the API tier's (/transfers/histogram): this public, keyless
	// route ignores them like any parameter it does not take, so they change nothing, and
	// granularity neither (daily buckets).
	all := e.get(t, nil, "/transfers/histogram/simple")
	base := e.get(t, nil, "/transfers/histogram/simple?base=binance")
	for _, q := range []string{"from=" + tw.U1, "to=type:cex", "tokens=usd-coin&usdGte=600", "valueGte=2&valueLte=10",
		"usdLte=1", "from=!" + tw.U1, "granularity=1h"} {
		sameJSON(t, e.get(t, nil, "/transfers/histogram/simple?"+q), http.StatusOK, string(all.body))
		if filtered := e.get(t, nil, "/transfers/histogram?granularity=1d&"+q); string(filtered.body) == string(all.body) {
			t.Errorf("%s: the filtered histogram equals the unfiltered one; the world does not tell them apart", q)
		}
	}
	sameJSON(t, e.get(t, nil, "/transfers/histogram/simple?base=binance&counterparties="+tw.U2), http.StatusOK, string(base.body))
}
