package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// GET /intelligence/entity_balance_changes through the edge on the simulator's world: the edge
// routes it to balances, the exchange's balanceUsd is its /balances/entity total (read between
// two equal readings, as balances and prices move), the ranking is ordered, and bad input is
// the service's 400 naming the parameter.
func TestEntityBalanceChangesThroughEdge(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	exchange, _ := simExchange(t)
	type row struct {
		EntityID      string           `json:"entityId"`
		EntityType    string           `json:"entityType"`
		BalanceUSD    float64          `json:"balanceUsd"`
		TokenBalances []map[string]any `json:"tokenBalances"`
	}
	ranking := func(q string) ([]row, error) {
		r := p.Get(t, "/intelligence/entity_balance_changes?orderDir=desc&interval=7d&limit=100&"+q)
		if r.Status != 200 {
			return nil, fmt.Errorf("ranking %s: %d %s", q, r.Status, r.Body)
		}
		var rs []row
		r.JSON(t, &rs)
		return rs, nil
	}
	entityTotal := func() (float64, error) {
		r := p.Get(t, "/balances/entity/"+url.PathEscape(exchange))
		if r.Status != 200 {
			return 0, fmt.Errorf("/balances/entity/%s: %d %s", exchange, r.Status, r.Body)
		}
		var b struct {
			TotalBalance map[string]float64 `json:"totalBalance"`
		}
		r.JSON(t, &b)
		return sumMap(b.TotalBalance), nil
	}
	Eventually(t, 90*time.Second, func() error {
		v, err := entityTotal()
		if err == nil && v == 0 {
			err = fmt.Errorf("%s has no priced balance yet", exchange)
		}
		return err
	})
	var last string
	ok := false
	for try := 0; try < 30 && !ok; try++ {
		before, err := entityTotal()
		if err != nil {
			t.Fatal(err)
		}
		rs, err := ranking("orderBy=balanceUsd&entityIds=" + url.QueryEscape(exchange))
		if err != nil {
			t.Fatal(err)
		}
		after, err := entityTotal()
		if err != nil {
			t.Fatal(err)
		}
		ok = before == after && len(rs) == 1 && rs[0].EntityID == exchange && rs[0].EntityType == "cex" &&
			near(rs[0].BalanceUSD, before) && len(rs[0].TokenBalances) > 0
		last = fmt.Sprintf("entity %v then %v, ranking %+v", before, after, rs)
		if !ok {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatalf("%s: no consistent reading in 30 tries; last: %s", exchange, last)
	}
	rs, err := ranking("orderBy=balanceUsd")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].BalanceUSD > rs[i-1].BalanceUSD {
			t.Fatalf("ranking not descending at %d: %+v", i, rs)
		}
	}
	for path, want := range map[string]string{
		"/intelligence/entity_balance_changes?orderDir=desc&interval=7d&limit=10":                   "orderBy: required (one of balanceUsd, balanceUsdChange, balanceUsdPctChange, balanceUnit, balanceUnitChange, balanceUnitPctChange)",
		"/intelligence/entity_balance_changes?orderBy=balanceUsd&orderDir=desc&interval=7d&limit=0": "limit: must be between 1 and 100, got 0",
	} {
		if r := p.Get(t, path); r.Status != 400 || r.Error() != want {
			t.Errorf("%s: %d %s, want the 400 %q", path, r.Status, r.Body, want)
		}
	}
}
