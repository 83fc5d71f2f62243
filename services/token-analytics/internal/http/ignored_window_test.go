package http

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// A time parameter a route does not take is ignored (docs/contracts.md "Query parameters"), so it
// can never widen what the route reads: /networks/history/{chain} takes only the chain (its
// shape lists no time parameter) and answers its fixed year whatever timeLast says, 99999d
// included; /token/volume takes granularity and timeLast only, so timeGte/timeLte spanning all
// of time leave the default window (7d for hourly buckets, 90d for larger), never an unbounded
// read. Each answer is the whole body of the same route without the ignored parameters.
func TestIgnoredTimeParametersNeverWidenTheWindow(t *testing.T) {
	e := knownWorld(t)
	day := now.UTC().Truncate(24 * time.Hour)
	e.prices(
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-400 * 24 * time.Hour), Price: 1},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 3100.5},
	)
	e.send(transfer{id: "0xold_1", from: user1, to: user2, token: alpha, usd: 7, units: 7, at: now.Add(-200 * 24 * time.Hour)})

	history := `[{"time":"` + day.Add(-24*time.Hour).Format(time.RFC3339) + `","usd":3100.5,"volume24h":0,"marketCap":0}]`
	for _, q := range []string{"", "?timeLast=99999d", "?timeLast=1d", "?timeGte=0&timeLte=253402300799999"} {
		e.expect("/networks/history/ethereum"+q, 200, history)
	}

	all := "&timeGte=0&timeLte=253402300799999"
	for _, c := range []struct {
		granularity string
		buckets     int
	}{{"1h", 7*24 + 1}, {"1d", 90 + 1}, {"7d", 14}} {
		base := "/token/volume/alpha?granularity=" + c.granularity
		code, want := e.get(base)
		if code != 200 {
			t.Fatalf("%s: %d %s", base, code, want)
		}
		var buckets []map[string]any
		if err := json.Unmarshal([]byte(want), &buckets); err != nil {
			t.Fatal(err)
		}
		if len(buckets) != c.buckets {
			t.Errorf("%s: %d buckets, want the default window's %d", base, len(buckets), c.buckets)
		}
		e.expect(base+all, 200, want)
	}
}
