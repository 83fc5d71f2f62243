package http

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// Every public route answers the same, whole body and status, before and after pruning the
// observations (a redelivered copy, a void observation of an orphaned block and one superseded
// before the horizon go), and after a second pass.
func TestPruningChangesNoAnswer(t *testing.T) {
	ctx := context.Background()
	ev := newEnv(t)
	if _, err := ev.st.WriteObservations(ctx, []store.Observation{
		ob("ethereum", a1, usdc, 210, at(9, 2), "500000000"), // redelivered
		ob("ethereum", a2, "", 120, at(9, 0), "4000000000000000000"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.st.ApplyReorg(ctx, "ethereum", 0, []string{"0xh120"}, nil); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		fill("/balances/address/@A1"), fill("/balances/address/@A2"), fill("/balances/address/@A3"),
		"/balances/entity/binance", "/balances/entity/binance?cheap=true", "/balances/entity/" + userEnt,
		fill("/history/address/@A1"), fill("/history/address/@A2"), "/history/entity/binance", "/history/entity/" + userEnt,
		fill("/portfolio/address/@A1?time=2026-03-08T23:59:59Z"), fill("/portfolio/address/@A1"), "/portfolio/entity/binance?time=2026-03-09T12:00:00Z",
		"/portfolio/entity/" + userEnt + "?time=2026-03-10T00:00:00Z",
		fill("/portfolio/timeSeries/address/@A1?pricingId=ethereum"), "/portfolio/timeSeries/entity/binance?pricingId=ethereum",
		"/token/holders/ethereum?groupByEntity=true", fill("/token/holders/ethereum/@BIGT"), fill("/token/holders/ethereum/@USDC"),
		"/token/balance/ethereum?entityID=binance", fill("/token/balance/ethereum/@USDC?address=@A1"),
		fill("/balances/solana/subaccounts/address/@SOLOWN?pricingID=solana"), "/balances/solana/subaccounts/entity/binance?pricingID=solana",
	}
	answers := func() []string {
		var out []string
		for _, p := range paths {
			code, body := ev.get(t, p)
			b, _ := json.Marshal(body)
			out = append(out, fmt.Sprintf("%s %d %s", p, code, b))
		}
		return out
	}
	before := answers()
	res, err := ev.st.PrunePass(ctx, time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	// a1's block 100 (superseded by 200 before the horizon, 2026-03-10T00:00), the copy of
	// block 210 and a2's void block 120.
	if res.Pruned != 3 {
		t.Fatalf("pruned %d, want 3", res.Pruned)
	}
	if after := answers(); !reflect.DeepEqual(after, before) {
		for i := range after {
			if after[i] != before[i] {
				t.Errorf("after pruning:\n%s\nbefore:\n%s", after[i], before[i])
			}
		}
	}
	if res, err := ev.st.PrunePass(ctx, time.Hour, 1); err != nil || res.Pruned != 0 {
		t.Fatalf("second pass pruned %d (%v)", res.Pruned, err)
	}
}
