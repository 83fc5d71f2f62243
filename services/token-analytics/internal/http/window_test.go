package http

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// TestTopFlowCountsExactlyTimeLast: top_flow counts the transfers from exactly now - timeLast
// on (the clock at 12:30), not from the start of that hour: the window's first, partial hour is
// read from the transfers themselves, open and closed alike, by top_flow.sql and from the kept
// sums (their window starts at the first whole hour; the partial hour is the request's own). Each
// transfer's USD is a distinct power of two, so each sum names the transfers in it.
func TestTopFlowCountsExactlyTimeLast(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	at := func(day, hour, minute int) time.Time { return time.Date(2026, 1, day, hour, minute, 0, 0, time.UTC) }
	for i, when := range []time.Time{
		at(10, 12, 29),                                 // the last minute
		at(10, 11, 31), at(10, 11, 30), at(10, 11, 29), // after, at and before now - 1h
		at(9, 12, 31), at(9, 12, 29), // after and before now - 24h
		at(9, 11, 0), // in the hour before now - 24h's
	} {
		usd := float64(int(1) << i)
		e.send(transfer{id: fmt.Sprintf("0xx%d_1", i), from: user1, to: user2, token: alpha, usd: usd, units: usd, at: when})
	}
	flows := func(v int) string {
		return fmt.Sprintf(`[{"address":{"address":%q,"chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":0,"inValue":0,"outUSD":%d,"outValue":%d},
			{"address":{"address":%q,"chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":%d,"inValue":%d,"outUSD":0,"outValue":0}]`,
			user1, v, v, user2, v, v)
	}
	want := map[string]string{
		"timeLast=1m": flows(1), "timeLast=30m": flows(1), "timeLast=1h": flows(1 + 2 + 4), "timeLast=90m": flows(15),
		"timeLast=24h": flows(31), "timeLast=1438m": flows(15), "timeLast=1439m": flows(31), "timeLast=1441m": flows(63), "timeLast=25h": flows(63),
		"timeLast=26h": flows(127), "timeLast=1s": `[]`,
	}
	check := func(h http.Handler) {
		t.Helper()
		for q, body := range want {
			w := &env{t: t, h: h}
			w.expect("/token/top_flow/alpha?"+q, 200, body)
			w.expect("/token/top_flow/ethereum/"+alpha+"?"+q, 200, body)
		}
	}
	check(e.h) // every hour open

	// The hours before the clock's closed (flow_address_hours), then answered by top_flow.sql
	// and from kept sums alike.
	ctx := context.Background()
	pool := pgtest.Pool(t)
	clock := func() time.Time { return now }
	if _, err := store.New(pool, store.Retention(0, clock)).CloseAllHours(ctx); err != nil {
		t.Fatal(err)
	}
	set, _ := chains.NewSet(nil)
	router := func(st *store.Store) http.Handler {
		r := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
		Register(r, app.New(st, app.Options{Now: clock}), set)
		return r
	}
	check(router(store.New(pool, store.Retention(0, clock), store.KeepTopFlows(0, 0))))
	kept := store.New(pool, store.Retention(0, clock), store.KeepTopFlows(1, 1<<20), store.TopFlowRebuildInterval(0))
	kh := router(kept)
	check(kh) // no sums kept yet: top_flow.sql
	if _, err := kept.RefreshTopFlows(ctx); err != nil {
		t.Fatal(err)
	}
	before := kept.KeptTopFlowAnswers()
	check(kh)
	if kept.KeptTopFlowAnswers() == before {
		t.Error("no answer came from kept sums")
	}
}

// TestTimeLastWithBoundsAndLimits: timeLast beside timeGte or timeLte is a 400 on top_flow and
// volume, worded as /transfers words it; a timeLast that is not positive or over the routes'
// 365d states that limit; a chains filter leaving out the path's contract answers [] (the
// token exists), not a 404.
func TestTimeLastWithBoundsAndLimits(t *testing.T) {
	e := knownWorld(t)
	for _, path := range []string{
		"/token/top_flow/alpha?timeLast=1h&timeGte=1", "/token/top_flow/alpha?timeLast=1h&timeLte=1",
		"/token/top_flow/ethereum/" + alpha + "?timeLast=1h&timeGte=1&timeLte=2",
		"/token/volume/alpha?granularity=1h&timeLast=1d&timeGte=1", "/token/volume/alpha?granularity=1d&timeLast=7d&timeLte=1",
	} {
		e.expect(path, 400, `{"error":"timeLast: cannot be combined with timeGte or timeLte"}`)
	}
	for _, q := range []string{"0h", "-1h", "400d", "53w", "8761h"} {
		want := fmt.Sprintf(`{"error":"timeLast: duration \"%s\" must be positive and at most 365d"}`, q)
		e.expect("/token/top_flow/usd-coin?timeLast="+q, 400, want)
		e.expect("/token/volume/alpha?granularity=1d&timeLast="+q, 400, want)
	}
	e.expect("/token/top_flow/ethereum/"+alpha+"?timeLast=1h&chains=base", 200, `[]`)
	e.expect("/token/top_flow/ethereum/"+alpha+"?timeLast=24h&chains=base,ethereum&limit=1", 200, `[
		{"address":{"address":"`+user1+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155}]`)
	e.expect("/token/top_flow/ethereum/0x00000000000000000000000000000000000000ff?timeLast=1h&chains=base", 404,
		`{"error":"token ethereum/0x00000000000000000000000000000000000000ff: not found"}`)
}
