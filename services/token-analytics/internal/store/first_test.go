package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// TestFirstBatchSummedPerKey sends one batch of first-seen transfers that share (token, hour,
// address) keys, a self-transfer, a transfer out of and into an exchange and one in an orphaned
// block: the rollups, summed in Go per key, must hold exactly what the transfers add; the
// orphaned copy is stored uncounted; redelivering the batch changes nothing; the block made
// canonical again counts its copy.
func TestFirstBatchSummedPerKey(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.flows, market.orphaned_blocks, market.flow_hours,
		market.flow_days, market.flow_address_hours, market.address_classes, market.flow_marks`); err != nil {
		t.Fatal(err)
	}
	// Every hour of the chain is closed, so the batch adds its per-address sums to
	// flow_address_hours itself, as a late transfer of a closed hour does.
	if _, err := pool.Exec(ctx, `INSERT INTO market.flow_marks (chain, rolled_until) VALUES ('ethereum', 'infinity')`); err != nil {
		t.Fatal(err)
	}
	st := New(pool)
	h := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	if err := st.ApplyClasses(ctx, []app.ClassChange{{ChainType: "evm", Address: "0xcex", EntityType: "cex", SetsEntity: true, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyReorg(ctx, "ethereum", []string{"0xorphan"}, nil); err != nil {
		t.Fatal(err)
	}
	tr := func(id, block, token, from, to string, at time.Time, usd, value float64) app.Flow {
		return app.Flow{Chain: "ethereum", ID: id, ChainType: "evm", BlockHash: block, Time: at, Token: token,
			From: from, To: to, Value: value, USD: usd}
	}
	batch := []app.Flow{
		tr("0x1_0", "0xb1", "0xa", "0xu1", "0xcex", h.Add(5*time.Minute), 10, 1),
		tr("0x1_1", "0xb1", "0xa", "0xu1", "0xcex", h.Add(5*time.Minute), 5, 2),
		tr("0x2_0", "0xb2", "0xa", "0xu2", "0xu2", h.Add(50*time.Minute), 7, 3),
		tr("0x3_0", "0xorphan", "0xa", "0xu1", "0xu2", h.Add(70*time.Minute), 100, 100),
		tr("0x4_0", "0xb2", "0xb", "0xcex", "0xu1", h.Add(50*time.Minute), 3, 4),
	}
	state := func() string {
		var s string
		err := pool.QueryRow(ctx, `SELECT concat_ws(' | ',
			(SELECT string_agg(concat_ws(',', token, to_char(hour, 'HH24'), transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd), ';' ORDER BY token, hour) FROM market.flow_hours),
			(SELECT string_agg(concat_ws(',', token, transfers, volume_usd, cex_in_usd, cex_out_usd), ';' ORDER BY token, day) FROM market.flow_days),
			(SELECT string_agg(concat_ws(',', token, to_char(hour, 'HH24'), address, in_usd, in_value, out_usd, out_value), ';' ORDER BY token, hour, address) FROM market.flow_address_hours),
			(SELECT string_agg(concat_ws(',', id, counted), ';' ORDER BY id) FROM market.flows))`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := "0xa,12,3,22,6,15,0;0xb,12,1,3,4,0,3 | 0xa,3,22,15,0;0xb,1,3,0,3 | " +
		"0xa,12,0xcex,15,3,0,0;0xa,12,0xu1,0,0,15,3;0xa,12,0xu2,7,3,7,3;0xb,12,0xcex,0,0,3,4;0xb,12,0xu1,3,4,0,0 | " +
		"0x1_0,t;0x1_1,t;0x2_0,t;0x3_0,f;0x4_0,t"
	for i := range 2 {
		if err := st.ApplyFlows(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if got := state(); got != want {
			t.Fatalf("delivery %d:\n got %s\nwant %s", i+1, got, want)
		}
	}
	if err := st.ApplyReorg(ctx, "ethereum", nil, []string{"0xorphan"}); err != nil {
		t.Fatal(err)
	}
	want = "0xa,12,3,22,6,15,0;0xa,13,1,100,100,0,0;0xb,12,1,3,4,0,3 | 0xa,4,122,15,0;0xb,1,3,0,3 | " +
		"0xa,12,0xcex,15,3,0,0;0xa,12,0xu1,0,0,15,3;0xa,12,0xu2,7,3,7,3;0xa,13,0xu1,0,0,100,100;0xa,13,0xu2,100,100,0,0;0xb,12,0xcex,0,0,3,4;0xb,12,0xu1,3,4,0,0 | " +
		"0x1_0,t;0x1_1,t;0x2_0,t;0x3_0,t;0x4_0,t"
	if got := state(); got != want {
		t.Fatalf("after the block is canonical again:\n got %s\nwant %s", got, want)
	}
}
