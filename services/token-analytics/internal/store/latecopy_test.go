package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestLateCopyWaitsOutsideTheChainLock holds a close's build of ethereum's hours before the
// clock's: a batch with a late copy of an hour being built (and a copy of base, whose close lock
// is free) must wait for the build without holding the chains' writer locks, so a batch of the
// clock's hour of both chains started after it commits while the build is still held; a
// redelivery of stored copies of the hours being built waits too. Once the build commits, the
// late batch adds its copy itself and the redelivery changes nothing: the transfers, rollups,
// flow_address_hours and top_flow equal those of the same batches applied one after the other
// and every hour closed once from scratch.
func TestLateCopyWaitsOutsideTheChainLock(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	stored := hourlyFlows("ethereum", clockHour.Add(-2*time.Hour), clockHour.Add(time.Hour), 9)
	late := []app.Flow{
		{Chain: "ethereum", ID: "0xlate_0", ChainType: "evm", BlockHash: "0xblate", Time: clockHour.Add(-90 * time.Minute),
			Token: "0xt", From: "0xu2", To: "0xhot", Value: 1, USD: 11},
		{Chain: "base", ID: "0xbase_0", ChainType: "evm", BlockHash: "0xbbase", Time: clockHour.Add(-90 * time.Minute),
			Token: "0xt", From: "0xu2", To: "0xu3", Value: 2, USD: 5},
	}
	current := []app.Flow{
		{Chain: "ethereum", ID: "0xcur_0", ChainType: "evm", BlockHash: "0xbcur", Time: clockHour.Add(20 * time.Minute),
			Token: "0xt", From: "0xu1", To: "0xhot", Value: 1, USD: 7},
		{Chain: "base", ID: "0xbcur_0", ChainType: "evm", BlockHash: "0xbbcur", Time: clockHour.Add(20 * time.Minute),
			Token: "0xt", From: "0xu3", To: "0xu1", Value: 1, USD: 3},
	}
	redelivered := append(append([]app.Flow{}, stored[:3]...), stored[len(stored)-1])

	if err := st.ApplyFlows(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if due, _, err := st.announceClose(ctx, "ethereum", closeClock, false); err != nil || !due {
		t.Fatalf("announcing the close: due %v, %v", due, err)
	}
	build := holdCloseLock(t, pool, "ethereum")
	finished, lateDone := finishesOrWaits(t, pool, func() error { return st.ApplyFlows(ctx, late) })
	if finished {
		t.Fatal("a late copy of an hour being built did not wait for the build")
	}
	if finished, _ := finishesOrWaitsBeside(t, pool, 1, func() error { return st.ApplyFlows(ctx, current) }); !finished {
		t.Fatal("a batch of the clock's hour waited behind the batch waiting for the build")
	}
	finished, redeliveryDone := finishesOrWaitsBeside(t, pool, 1, func() error { return st.ApplyFlows(ctx, redelivered) })
	if finished {
		t.Fatal("a redelivery of copies of the hours being built did not wait for the build")
	}
	if c := buildHours(t, build, [2]time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), clockHour}); c.Transfers != 18 {
		t.Fatalf("the build closed %d transfers, want the 18 stored before it", c.Transfers)
	}
	for _, ch := range []<-chan error{lateDone, redeliveryDone} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CloseHours(ctx); err != nil { // base's hours
		t.Fatal(err)
	}
	got := flowStateOf(t, pool, st, clockHour)
	if !strings.Contains(got.addressHours, "0xhot") || got.top == "" {
		t.Fatalf("nothing closed or no top_flow: %+v", got)
	}

	emptyFlows(t, pool)
	for _, b := range [][]app.Flow{stored, current, late} {
		if err := st.ApplyFlows(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	if want := flowStateOf(t, pool, st, clockHour); got != want {
		t.Fatalf("after the build, the late copy and the redelivery:\n%+v\nwant (applied in turn, closed once):\n%+v", got, want)
	}
}

// flowState is every table a transfer batch and a close write (flow_address_hours without rows
// of zeros), and top_flow of the tests' token on both chains, as text.
type flowState struct{ flows, hours, days, addressHours, marks, top string }

func flowStateOf(t *testing.T, pool *pgxpool.Pool, st *Store, clockHour time.Time) flowState {
	t.Helper()
	ctx := context.Background()
	var s flowState
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT string_agg(f::text, E'\n' ORDER BY f::text) FROM market.flows f),
		(SELECT string_agg(h::text, E'\n' ORDER BY h::text) FROM market.flow_hours h),
		(SELECT string_agg(d::text, E'\n' ORDER BY d::text) FROM market.flow_days d),
		(SELECT string_agg(a::text, E'\n' ORDER BY a::text) FROM market.flow_address_hours a
			WHERE (a.in_usd, a.in_value, a.out_usd, a.out_value) <> (0, 0, 0, 0)),
		(SELECT string_agg(m::text, E'\n' ORDER BY m::text) FROM market.flow_marks m)`).Scan(
		&s.flows, &s.hours, &s.days, &s.addressHours, &s.marks); err != nil {
		t.Fatal(err)
	}
	top, err := st.TopFlows(ctx, []app.Deployment{{Chain: "ethereum", Address: "0xt"}, {Chain: "base", Address: "0xt"}},
		clockHour.Add(-24*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range top {
		s.top += fmt.Sprintf("%s %s %v %v %v %v\n", f.Chain, f.Address, f.InUSD, f.InValue, f.OutUSD, f.OutValue)
	}
	return s
}
