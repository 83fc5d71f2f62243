package http

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// Flows older than the retention horizon are pruned from every table, what the routes can ask
// for (365 days, 7-day buckets) is unchanged, and a pruned transfer redelivered is not counted
// again.
func TestFlowRetention(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "alpha", Symbol: "ALP", Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	ctx := context.Background()
	clock := now.Add(-30 * 24 * time.Hour) // the oldest transfers arrive while still within retention
	st := store.New(e.store.Pool(), store.Retention(app.MinFlowRetention, func() time.Time { return clock }))
	horizon := now.Add(-app.MinFlowRetention).UTC().Truncate(24 * time.Hour)
	var fs []app.Flow
	for i, at := range []time.Time{horizon.Add(-49 * time.Hour), horizon.Add(-time.Hour), horizon, now.Add(-364 * 24 * time.Hour), now.Add(-time.Hour)} {
		fs = append(fs, app.Flow{Chain: "ethereum", ID: fmt.Sprintf("0xret%d_1", i), ChainType: "evm", BlockHash: "0xb1", Time: at,
			Token: alpha, From: user1, To: []string{user2, cex}[i%2], Value: float64(i + 1), USD: float64(10 * (i + 1))})
	}
	if err := st.ApplyFlows(ctx, fs); err != nil {
		t.Fatal(err)
	}
	// The hours before the clock's are closed (in flow_address_hours); the newest transfer's hour
	// stays open (read from market.flows).
	if c, err := st.CloseHours(ctx); err != nil || c.Transfers != 4 {
		t.Fatalf("closed %+v, %v; want the 4 transfers before the clock's hour", c, err)
	}
	routes := []string{"/token/top_flow/alpha?timeLast=365d&limit=100", "/token/volume/alpha?granularity=7d&timeLast=365d",
		"/token/volume/alpha?granularity=1d&timeLast=365d", "/token/volume/alpha?granularity=12h&timeLast=365d",
		"/token/top?timeframe=7d&numReferencePeriods=30"}
	bodies := func() []string {
		var out []string
		for _, r := range routes {
			code, body := e.get(r)
			if code != 200 {
				t.Fatalf("%s: %d %s", r, code, body)
			}
			out = append(out, body)
		}
		return out
	}
	rows := func(before bool) string {
		op := ">="
		if before {
			op = "<"
		}
		var c [4]int64
		err := e.store.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM market.flows WHERE hour `+op+` $1),
			(SELECT count(*) FROM market.flow_address_hours WHERE hour `+op+` $1),
			(SELECT count(*) FROM market.flow_hours WHERE hour `+op+` $1),
			(SELECT count(*) FROM market.flow_days WHERE day `+op+` $1)`, horizon).Scan(&c[0], &c[1], &c[2], &c[3])
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(c)
	}
	if got := rows(true); got != "[2 4 2 2]" {
		t.Fatalf("before pruning, rows older than the horizon (copies, address-hours, hours, days): %s", got)
	}
	newer, want := rows(false), bodies()
	clock = now
	n, err := st.PruneFlows(ctx)
	if err != nil || n != (store.PruneCounts{Copies: 2, AddressHours: 4, Hours: 2, Days: 2}) {
		t.Fatalf("pruned %+v, %v", n, err)
	}
	if got := rows(true); got != "[0 0 0 0]" {
		t.Fatalf("after pruning, rows older than the horizon: %s", got)
	}
	if got := rows(false); got != newer {
		t.Fatalf("rows within retention changed by pruning: %s, was %s", got, newer)
	}
	for i, b := range bodies() {
		sameJSON(t, routes[i], b, want[i])
	}
	// Every transfer again: the pruned ones are older than the horizon and dropped, the others
	// counted already.
	if err := st.ApplyFlows(ctx, fs); err != nil {
		t.Fatal(err)
	}
	if got := rows(true); got != "[0 0 0 0]" {
		t.Fatalf("after redelivery, rows older than the horizon: %s", got)
	}
	if got := rows(false); got != newer {
		t.Fatalf("redelivery changed the rows within retention: %s, was %s", got, newer)
	}
	for i, b := range bodies() {
		sameJSON(t, routes[i], b, want[i])
	}
	if n, err := st.PruneFlows(ctx); err != nil || n != (store.PruneCounts{}) {
		t.Fatalf("second pruning: %+v, %v", n, err)
	}
	// The routes saw the transfers within their windows (the comparison is not of empty answers).
	if code, body := e.get(routes[0]); code != 200 || body == "[]" {
		t.Fatalf("top_flow over 365 days: %d %s", code, body)
	}
}
