package http

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// reorg delivers a chain.reorgs.v1 record of ethereum to the consumer.
func (e *env) reorg(orphaned, canonical []string) {
	e.t.Helper()
	r := &eventsv1.Reorg{Chain: "ethereum"}
	for _, h := range orphaned {
		r.Orphaned = append(r.Orphaned, &eventsv1.Reorg_Block{Hash: h})
	}
	for _, h := range canonical {
		r.Canonical = append(r.Canonical, &eventsv1.Reorg_Block{Hash: h})
	}
	if err := e.ev.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Msg: r}}); err != nil {
		e.t.Fatal(err)
	}
}

// countedBlocks is the block of the counted copy of each natural id; an id counted twice fails.
func countedBlocks(t *testing.T) map[string]string {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), `SELECT id, block FROM market.flows WHERE counted ORDER BY id, block`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var id, block string
		if err := rows.Scan(&id, &block); err != nil {
			t.Fatal(err)
		}
		if prev, ok := got[id]; ok {
			t.Fatalf("%s counted in %s and %s", id, prev, block)
		}
		got[id] = block
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// rollupsMatchCounted fails unless flow_hours, flow_days and the per-address flows equal their
// recomputation from the counted rows of market.flows and the current address classes (rows
// whose sums are all zero count as absent); the per-address flows are what top_flow reads:
// flow_address_hours for each chain's closed hours (before its rolled_until, and no row from
// it on) and the counted rows of market.flows for the open ones. It checks, then closes every hour before each chain's newest delivered one and checks again, so the
// steps after run on closed hours too.
func rollupsMatchCounted(t *testing.T, step string) {
	t.Helper()
	rollupsMatch(t, step)
	// The clock is in the hour of the newest transfers (now - 2h), which stays open.
	clock := now.Add(-110 * time.Minute)
	closed, err := store.New(pgtest.Pool(t), store.Retention(0, func() time.Time { return clock })).CloseHours(context.Background())
	if err != nil {
		t.Fatalf("%s: close hours: %v", step, err)
	}
	rollupsMatch(t, fmt.Sprintf("%s, then %d rows of closed hours built", step, closed.Rows))
}

func rollupsMatch(t *testing.T, step string) {
	t.Helper()
	checks := map[string]string{
		"flow_hours": `
			WITH c AS (
				SELECT f.*, market.address_class(tc.attributed_type, tc.deposit_type, tc.is_pool) AS to_class,
				       market.address_class(fc.attributed_type, fc.deposit_type, fc.is_pool) AS from_class
				FROM market.flows f
				LEFT JOIN market.address_classes tc ON tc.chain_type = f.chain_type AND tc.address = f.to_addr
				LEFT JOIN market.address_classes fc ON fc.chain_type = f.chain_type AND fc.address = f.from_addr
				WHERE f.counted
			), want AS (
				SELECT chain, token, hour, count(*) AS transfers, sum(usd) AS usd, sum(value) AS value,
				       coalesce(sum(usd) FILTER (WHERE to_class IN ('cex', 'cex_deposit')), 0) - coalesce(sum(usd) FILTER (WHERE from_class = 'cex_deposit'), 0) AS cex_in,
				       coalesce(sum(usd) FILTER (WHERE from_class = 'cex'), 0) AS cex_out
				FROM c GROUP BY 1, 2, 3
			), got AS (
				SELECT chain, token, hour, transfers, volume_usd AS usd, volume_value AS value, cex_in_usd AS cex_in, cex_out_usd AS cex_out
				FROM market.flow_hours WHERE transfers <> 0 OR volume_usd <> 0 OR volume_value <> 0 OR cex_in_usd <> 0 OR cex_out_usd <> 0
			)
			SELECT count(*) FROM want w FULL JOIN got g USING (chain, token, hour)
			WHERE w.transfers IS DISTINCT FROM g.transfers OR round(w.usd::numeric, 6) IS DISTINCT FROM round(g.usd::numeric, 6)
			   OR round(w.value::numeric, 6) IS DISTINCT FROM round(g.value::numeric, 6)
			   OR round(w.cex_in::numeric, 6) IS DISTINCT FROM round(g.cex_in::numeric, 6)
			   OR round(w.cex_out::numeric, 6) IS DISTINCT FROM round(g.cex_out::numeric, 6)`,
		"flow_days": `
			WITH want AS (
				SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS day, count(*) AS transfers, sum(usd) AS usd
				FROM market.flows WHERE counted GROUP BY 1, 2, 3
			), got AS (
				SELECT chain, token, day, transfers, volume_usd AS usd FROM market.flow_days WHERE transfers <> 0 OR volume_usd <> 0
			)
			SELECT count(*) FROM want w FULL JOIN got g USING (chain, token, day)
			WHERE w.transfers IS DISTINCT FROM g.transfers OR round(w.usd::numeric, 6) IS DISTINCT FROM round(g.usd::numeric, 6)`,
		"flow_address_hours": `
			WITH legs AS (
				SELECT chain, token, hour, to_addr AS address, usd AS in_usd, value AS in_value, 0::float8 AS out_usd, 0::float8 AS out_value
				FROM market.flows WHERE counted
				UNION ALL
				SELECT chain, token, hour, from_addr, 0, 0, usd, value FROM market.flows WHERE counted
			), want AS (
				SELECT chain, token, hour, address, sum(in_usd) AS in_usd, sum(in_value) AS in_value, sum(out_usd) AS out_usd, sum(out_value) AS out_value
				FROM legs GROUP BY 1, 2, 3, 4
			), open_legs AS (
				SELECT f.chain, f.token, f.hour, l.*
				FROM market.flows f
				JOIN market.flow_marks m ON m.chain = f.chain AND f.hour >= m.rolled_until
				CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
					AS l(address, in_usd, in_value, out_usd, out_value)
				WHERE f.counted
			), got AS (
				SELECT chain, token, hour, address, sum(in_usd) AS in_usd, sum(in_value) AS in_value, sum(out_usd) AS out_usd, sum(out_value) AS out_value
				FROM (SELECT chain, token, hour, address, in_usd, in_value, out_usd, out_value FROM market.flow_address_hours
				      UNION ALL SELECT * FROM open_legs) r
				GROUP BY 1, 2, 3, 4
				HAVING sum(in_usd) <> 0 OR sum(in_value) <> 0 OR sum(out_usd) <> 0 OR sum(out_value) <> 0
			)
			SELECT count(*) FROM want w FULL JOIN got g USING (chain, token, hour, address)
			WHERE round(w.in_usd::numeric, 6) IS DISTINCT FROM round(g.in_usd::numeric, 6)
			   OR round(w.in_value::numeric, 6) IS DISTINCT FROM round(g.in_value::numeric, 6)
			   OR round(w.out_usd::numeric, 6) IS DISTINCT FROM round(g.out_usd::numeric, 6)
			   OR round(w.out_value::numeric, 6) IS DISTINCT FROM round(g.out_value::numeric, 6)`,
		"flow_address_hours (open hours)": `
			SELECT count(*) FROM market.flow_address_hours a
			WHERE NOT EXISTS (SELECT 1 FROM market.flow_marks m WHERE m.chain = a.chain AND a.hour < m.rolled_until)`,
		"flow_marks (chains with counted transfers)": `
			SELECT count(DISTINCT chain) FROM market.flows f WHERE counted AND NOT EXISTS (SELECT 1 FROM market.flow_marks m WHERE m.chain = f.chain)`,
	}
	for table, q := range checks {
		var bad int
		if err := pgtest.Pool(t).QueryRow(context.Background(), q).Scan(&bad); err != nil {
			t.Fatalf("%s: %s: %v", step, table, err)
		}
		if bad != 0 {
			t.Fatalf("%s: %d rows of %s differ from the counted transfers", step, bad, table)
		}
	}
}

// TestReorgMovesTransfer checks that a transfer a reorg moves to another block (same natural
// id, another block and hour) is counted exactly once, in the canonical block, whether the reorg
// or the new copy arrives first, through redelivery of every message and a reorg back, and that
// every rollup follows it.
func TestReorgMovesTransfer(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.attribute(1, cex, "cex")
	h1, h2 := now.Add(-30*time.Hour), now.Add(-2*time.Hour) // different hours and days
	// A moves from 0xa1 to 0xa2 with the reorg first; B from 0xb1 to 0xb2 with the new copy first.
	// C stays in 0xc1 throughout.
	a1 := transfer{id: "0xaa_1", from: user1, to: cex, token: alpha, usd: 100, units: 4, at: h1, block: "0xa1"}
	a2 := a1
	a2.block, a2.at = "0xa2", h2
	b1 := transfer{id: "0xbb_2", from: cex, to: user2, token: alpha, usd: 30, units: 3, at: h1, block: "0xb1"}
	b2 := b1
	b2.block, b2.at = "0xb2", h2
	c1 := transfer{id: "0xcc_0", from: user1, to: user2, token: alpha, usd: 7, units: 1, at: h1, block: "0xc1"}
	step := func(name string, want map[string]string) {
		t.Helper()
		got := countedBlocks(t)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: counted %v, want %v", name, got, want)
		}
		rollupsMatchCounted(t, name)
	}

	e.send(a1, b1, c1)
	step("first blocks", map[string]string{"0xaa_1": "0xa1", "0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	e.reorg([]string{"0xa1"}, []string{"0xa2"})
	step("reorg before the new copy", map[string]string{"0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	e.send(a2)
	step("new copy after the reorg", map[string]string{"0xaa_1": "0xa2", "0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	e.send(b2)
	step("new copy before the reorg", map[string]string{"0xaa_1": "0xa2", "0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	e.reorg([]string{"0xb1"}, []string{"0xb2"})
	moved := map[string]string{"0xaa_1": "0xa2", "0xbb_2": "0xb2", "0xcc_0": "0xc1"}
	step("reorg after the new copy", moved)

	// Every message again, in its order and in one batch.
	e.send(a1, b1, c1)
	e.reorg([]string{"0xa1"}, []string{"0xa2"})
	e.send(a2, b2)
	e.reorg([]string{"0xb1"}, []string{"0xb2"})
	e.send(a1, a2, b1, b2, c1)
	step("redelivery", moved)

	// The original blocks canonical again, twice.
	for i := 0; i < 2; i++ {
		e.reorg([]string{"0xa2", "0xb2"}, []string{"0xa1", "0xb1"})
		step("reorg back", map[string]string{"0xaa_1": "0xa1", "0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	}
	e.send(a2, b2)
	step("new copies redelivered after the reorg back", map[string]string{"0xaa_1": "0xa1", "0xbb_2": "0xb1", "0xcc_0": "0xc1"})
	// And forward again.
	e.reorg([]string{"0xa1", "0xb1"}, []string{"0xa2", "0xb2"})
	step("forward again", moved)
}

// TestReserveBalanceMovedByReorg checks that a reserve balance observed at one height in two
// blocks counts from the block not orphaned, whether the reorg or the new block's observation
// arrives first, through redelivery and a reorg back.
func TestReserveBalanceMovedByReorg(t *testing.T) {
	tok, r := "0x00000000000000000000000000000000000000f0", "0x00000000000000000000000000000000000000a1"
	e := newEnv(t, app.Native{Chain: "ethereum", Token: tok, Decimals: 18, TotalSupply: "1000000000000000000000000", Reserves: []string{r}})
	obs := func(bal, block string) {
		t.Helper()
		m := eventbus.Message[*eventsv1.BalanceObservation]{Msg: &eventsv1.BalanceObservation{Chain: "ethereum", Address: r,
			TokenAddress: tok, Balance: bal, BlockNumber: 2, BlockHash: block}}
		if err := e.ev.Balances(context.Background(), []eventbus.Message[*eventsv1.BalanceObservation]{m}); err != nil {
			t.Fatal(err)
		}
	}
	const old, moved = "100000000000000000000000", "300000000000000000000000" // 100,000 and 300,000
	for _, reorgFirst := range []bool{true, false} {
		a, b := fmt.Sprintf("0xa%v", reorgFirst), fmt.Sprintf("0xb%v", reorgFirst)
		obs(old, a)
		e.expect("/native/circulating", 200, `{"amount":900000}`)
		if reorgFirst {
			e.reorg([]string{a}, []string{b})
			e.expect("/native/circulating", 200, `{"amount":1000000}`)
			obs(moved, b)
		} else {
			obs(moved, b)
			e.reorg([]string{a}, []string{b})
		}
		e.expect("/native/circulating", 200, `{"amount":700000}`)
		obs(old, a)
		obs(moved, b)
		e.reorg([]string{a}, []string{b})
		e.expect("/native/circulating", 200, `{"amount":700000}`)
		e.reorg([]string{b}, []string{a})
		e.expect("/native/circulating", 200, `{"amount":900000}`)
		if _, err := pgtest.Pool(t).Exec(context.Background(), `TRUNCATE market.reserve_balances, market.orphaned_blocks`); err != nil {
			t.Fatal(err)
		}
	}
}
