package e2e

import (
	"fmt"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/sim"
)

func sumMap(m map[string]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// On the simulator's live world, through the edge: an exchange's /balances/entity total equals
// the sum of its addresses' /balances/address totals, and its intelligence summary's balanceUsd
// is the same figure. Balances and prices move while the test reads, so it compares a reading
// that the entity total did not change around.
func TestBalancesSimulatedExchangeTotals(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	exchange, members := simExchange(t)
	entityTotal := func() (float64, error) {
		r := p.Get(t, "/balances/entity/"+url.PathEscape(exchange))
		var b struct {
			TotalBalance map[string]float64 `json:"totalBalance"`
			Entities     map[string]any     `json:"entities"`
		}
		if r.Status != 200 {
			return 0, fmt.Errorf("/balances/entity/%s: %d %s", exchange, r.Status, r.Body)
		}
		r.JSON(t, &b)
		if b.Entities[exchange] == nil {
			return 0, fmt.Errorf("entities lacks %s: %s", exchange, r.Body)
		}
		return sumMap(b.TotalBalance), nil
	}
	// Wait for the exchange's balances to be priced.
	Eventually(t, 90*time.Second, func() error {
		v, err := entityTotal()
		if err == nil && v == 0 {
			err = fmt.Errorf("%s has no priced balance yet", exchange)
		}
		return err
	})
	var last string
	for try := 0; try < 30; try++ {
		before, err := entityTotal()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, a := range members {
			r := p.Get(t, "/balances/address/"+url.PathEscape(a))
			if r.Status != 200 {
				t.Fatalf("/balances/address/%s: %d %s", a, r.Status, r.Body)
			}
			var b struct {
				TotalBalance map[string]float64 `json:"totalBalance"`
			}
			r.JSON(t, &b)
			sum += sumMap(b.TotalBalance)
		}
		r := p.Get(t, "/intelligence/entity/"+url.PathEscape(exchange)+"/summary")
		if r.Status != 200 {
			t.Fatalf("summary: %d %s", r.Status, r.Body)
		}
		var s struct {
			BalanceUSD float64 `json:"balanceUsd"`
		}
		r.JSON(t, &s)
		after, err := entityTotal()
		if err != nil {
			t.Fatal(err)
		}
		if before == after && near(before, sum) && near(before, s.BalanceUSD) {
			t.Logf("%s: %d addresses, total %.2f USD", exchange, len(members), before)
			return
		}
		last = fmt.Sprintf("entity %v then %v, addresses sum %v, summary balanceUsd %v", before, after, sum, s.BalanceUSD)
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: no consistent reading in 30 tries; last: %s", exchange, last)
}

// simExchange is a curated exchange of the stack's simulated world and its addresses.
func simExchange(t *testing.T) (string, []string) {
	var gc ingest.Config
	if err := config.Defaults(&gc); err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(ingest.SimConfig(gc, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	cur := w.CuratedData()
	members := map[string][]string{}
	for _, a := range cur.Addresses {
		members[a.Entity] = append(members[a.Entity], a.Address)
	}
	exchange := ""
	for _, e := range cur.Entities {
		if e.Type == "cex" && len(members[e.ID]) > 0 {
			exchange = e.ID
			break
		}
	}
	if exchange == "" {
		t.Fatal("the simulated world has no curated exchange with addresses")
	}
	return exchange, members[exchange]
}

// Every balances route answers through the edge on the simulator's world, with the shapes of
// API.md, and refuses bad input with the edge passing the service's 400 and 404 through.
func TestBalancesRoutesThroughEdge(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	exchange, members := simExchange(t)
	addr := url.PathEscape(members[0])
	Eventually(t, 90*time.Second, func() error {
		r := p.Get(t, "/token/holders/ethereum")
		var h struct {
			TotalSupply map[string]float64 `json:"totalSupply"`
		}
		if r.Status != 200 {
			return fmt.Errorf("holders: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &h)
		if len(h.TotalSupply) == 0 {
			return fmt.Errorf("no ethereum holders yet: %s", r.Body)
		}
		return nil
	})
	ms := time.Now().UnixMilli()
	for path, keys := range map[string][]string{
		"/balances/address/" + addr:                                        {"addresses", "balances", "totalBalance", "totalBalance24hAgo"},
		"/balances/entity/" + exchange + "?cheap=true":                     {"entities", "balances", "totalBalance", "totalBalance24hAgo"},
		"/history/address/" + addr:                                         nil,
		"/history/entity/" + exchange:                                      nil,
		fmt.Sprintf("/portfolio/address/%s?time=%d", addr, ms):             nil,
		fmt.Sprintf("/portfolio/entity/%s?time=%d", exchange, ms):          nil,
		"/portfolio/timeSeries/address/" + addr + "?pricingId=ethereum":    nil,
		"/portfolio/timeSeries/entity/" + exchange + "?pricingId=ethereum": nil,
		"/token/balance/ethereum?entityID=" + exchange:                     {"pricingID", "name", "symbol", "balance", "price", "usd"},
		"/token/holders/ethereum?groupByEntity=true&limit=5":               {"token", "totalSupply", "addressTopHolders", "entityTopHolders"},
	} {
		r := p.Get(t, path)
		if r.Status != 200 {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
			continue
		}
		var m map[string]any
		r.JSON(t, &m)
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %q in %s", path, k, r.Body)
			}
		}
	}
	for _, path := range []string{"/balances/solana/subaccounts/entity/" + exchange + "?pricingID=solana",
		"/balances/solana/subaccounts/address/So11111111111111111111111111111111111111112?pricingID=solana"} {
		if r := p.Get(t, path); r.Status != 200 || r.Body[0] != '[' {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	for path, want := range map[string]string{
		"/token/holders/ethereum?limit=101":                          "limit: must be between 1 and 100, got 101",
		"/portfolio/timeSeries/entity/" + exchange:                   "pricingId: required",
		"/balances/entity/no-such-entity-anywhere":                   `entity "no-such-entity-anywhere" not found`,
		"/token/balance/ethereum/" + members[0] + "?address=" + addr: "", // a token contract nobody knows: 404
	} {
		r := p.Get(t, path)
		if r.Status != 400 && r.Status != 404 || (want != "" && r.Error() != want) {
			t.Errorf("%s: %d %s, want the error %q", path, r.Status, r.Body, want)
		}
	}
}
