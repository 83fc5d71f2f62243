package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// topFlowByChainName is top_flow grouped by the chain's name and the address with the class
// joined on min(chain_type) per group: the reference the statement grouping by the chain's rank
// must equal row for row. The sums are equal up to the order in which each statement's plan adds
// an address's legs (floating point), so they are compared to 1e-12 of their size.
const topFlowByChainName = `WITH deps AS (
    SELECT d.chain, d.token, greatest($3::timestamptz, coalesce(k.rolled_until, '-infinity')) AS open_from
    FROM unnest($1::text[], $2::text[]) AS d(chain, token)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
), legs AS (
    SELECT a.chain, a.address, a.chain_type, a.in_usd, a.in_value, a.out_usd, a.out_value
    FROM deps
    JOIN market.flow_address_hours a ON a.chain = deps.chain AND a.token = deps.token AND a.hour >= $3
        AND a.hour < deps.open_from
    UNION ALL
    SELECT f.chain, l.address, f.chain_type, l.in_usd, l.in_value, l.out_usd, l.out_value
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token AND f.hour >= deps.open_from AND f.counted
    CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
), agg AS (
    SELECT chain, address, min(chain_type) AS chain_type, sum(in_usd) AS in_usd, sum(in_value) AS in_value,
           sum(out_usd) AS out_usd, sum(out_value) AS out_value
    FROM legs
    GROUP BY chain, address
    ORDER BY sum(in_usd) + sum(out_usd) DESC, chain, address
    LIMIT $4
)
SELECT g.chain, g.address, g.in_usd, g.in_value, g.out_usd, g.out_value, c.info IS NOT NULL
FROM agg g
LEFT JOIN market.address_classes c ON c.chain_type = g.chain_type AND c.address = g.address
ORDER BY g.in_usd + g.out_usd DESC, g.chain, g.address`

// TestTopFlowsAcrossChainsEqualsGroupingByChainName: a token on two chains whose addresses
// appear on both, over closed and open hours, with fractional amounts and a labelled address,
// gives the reference's rows (chain, address, the four sums exactly, an attribution or none) for
// a page and for every address.
func TestTopFlowsAcrossChainsEqualsGroupingByChainName(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	fs := append(hourlyFlows("ethereum", clockHour.Add(-30*time.Hour), clockHour.Add(time.Hour), 40),
		hourlyFlows("base", clockHour.Add(-10*time.Hour), clockHour.Add(time.Hour), 25)...)
	for i := range fs {
		fs[i].USD += float64(i%11) / 7
		fs[i].Value += float64(i%13) / 3
	}
	if err := st.ApplyFlows(ctx, fs); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyClasses(ctx, []app.ClassChange{{ChainType: "evm", Address: "0xhot", EntityType: "cex", SetsEntity: true, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	deps := []app.Deployment{{Chain: "ethereum", Address: "0xt"}, {Chain: "base", Address: "0xt"}}
	from := clockHour.Add(-24 * time.Hour)
	for _, limit := range []int{5, 100} {
		got, err := st.TopFlows(ctx, deps, from, limit)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pool.Query(ctx, topFlowByChainName, []string{"ethereum", "base"}, []string{"0xt", "0xt"}, from, limit)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for ; rows.Next(); n++ {
			var w app.AddressFlow
			var info bool
			if err := rows.Scan(&w.Chain, &w.Address, &w.InUSD, &w.InValue, &w.OutUSD, &w.OutValue, &info); err != nil {
				t.Fatal(err)
			}
			if n >= len(got) {
				t.Fatalf("limit %d: top_flow gave %d rows, the reference more", limit, len(got))
			}
			g := got[n]
			if g.Chain != w.Chain || g.Address != w.Address || !near(g.InUSD, w.InUSD) || !near(g.InValue, w.InValue) ||
				!near(g.OutUSD, w.OutUSD) || !near(g.OutValue, w.OutValue) || (g.Attribution != nil) != info {
				t.Fatalf("limit %d: row %d is %+v (attribution %v), want %+v (attribution %v)", limit, n, g, g.Attribution != nil, w, info)
			}
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		rows.Close()
		if n != len(got) || n == 0 {
			t.Fatalf("limit %d: top_flow gave %d rows, the reference %d", limit, len(got), n)
		}
	}
}

// near is a == b up to the rounding of adding the same numbers in another order.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}
