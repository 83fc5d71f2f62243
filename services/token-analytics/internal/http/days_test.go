package http

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// TestFlowDaysFollowHours checks that market.flow_days stays the per-day sum of
// market.flow_hours through transfers, a relabel, a reorg and its undoing, and that /token/top
// over 7d (read from whole days and edge hours) counts every transfer in its window once.
func TestFlowDaysFollowHours(t *testing.T) {
	e := knownWorld(t)
	pool := pgtest.Pool(t)
	consistent := func(step string) {
		t.Helper()
		var bad int
		err := pool.QueryRow(context.Background(), `
			SELECT count(*) FROM (
				SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS day,
				       sum(transfers) AS transfers, sum(volume_usd) AS volume_usd, sum(cex_in_usd) AS cex_in_usd,
				       sum(cex_out_usd) AS cex_out_usd, sum(dex_in_usd) AS dex_in_usd, sum(dex_out_usd) AS dex_out_usd
				FROM market.flow_hours GROUP BY 1, 2, 3) h
			FULL JOIN market.flow_days d USING (chain, token, day)
			WHERE h.transfers IS DISTINCT FROM d.transfers OR h.volume_usd IS DISTINCT FROM d.volume_usd
			   OR h.cex_in_usd IS DISTINCT FROM d.cex_in_usd OR h.cex_out_usd IS DISTINCT FROM d.cex_out_usd
			   OR h.dex_in_usd IS DISTINCT FROM d.dex_in_usd OR h.dex_out_usd IS DISTINCT FROM d.dex_out_usd`).Scan(&bad)
		if err != nil || bad != 0 {
			t.Fatalf("%s: %d day rows differ from their hours (%v)", step, bad, err)
		}
	}
	consistent("known world")
	// Transfers over the current week (3, 50 and 150 hours ago) and the week before (200 hours).
	for i, ago := range []time.Duration{3, 50, 150, 200} {
		e.send(transfer{id: fmt.Sprintf("0xd%d_1", i), from: user1, to: cex, token: alpha, usd: 1000, units: 1,
			at: now.Add(-ago * time.Hour), block: fmt.Sprintf("0xd%d", i)})
	}
	consistent("transfers")
	_, body := e.get("/token/top?timeframe=7d&tokenIds=alpha&numReferencePeriods=1")
	if !strings.Contains(body, `"current":{"price":2,"volume":3195,"inflowCexVolume":3100,`) ||
		!strings.Contains(body, `"previous":{"price":0,"volume":1000,"inflowCexVolume":1000,`) {
		t.Fatalf("7d: %s", body)
	}
	e.attribute(2, cex, "fund")
	consistent("relabel")
	if err := e.store.ApplyReorg(context.Background(), "ethereum", []string{"0xd1", "0xd3"}, nil); err != nil {
		t.Fatal(err)
	}
	consistent("reorg")
	_, body = e.get("/token/top?timeframe=7d&tokenIds=alpha&numReferencePeriods=1")
	if !strings.Contains(body, `"current":{"price":2,"volume":2195,"inflowCexVolume":0,`) ||
		!strings.Contains(body, `"previous":{"price":0,"volume":0,`) {
		t.Fatalf("7d after reorg and relabel: %s", body)
	}
	if err := e.store.ApplyReorg(context.Background(), "ethereum", nil, []string{"0xd1", "0xd3"}); err != nil {
		t.Fatal(err)
	}
	e.attribute(3, cex, "cex")
	consistent("canonical again")
	_, body = e.get("/token/top?timeframe=7d&tokenIds=alpha&numReferencePeriods=1")
	if !strings.Contains(body, `"current":{"price":2,"volume":3195,"inflowCexVolume":3100,`) {
		t.Fatalf("7d canonical again: %s", body)
	}
}
