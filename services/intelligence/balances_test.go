package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	balclient "github.com/chainintel/chainintel/services/balances/client"
)

// fakeBalances answers USD totals from fixed figures, as the balances service would.
type fakeBalances struct {
	addrs    map[string]float64
	entities map[string]float64
}

func (f fakeBalances) USDTotals(_ context.Context, refs []balclient.AddressRef, entities []string) (balclient.Totals, error) {
	out := balclient.Totals{Addresses: map[string]float64{}, Entities: map[string]float64{}}
	for _, r := range refs {
		out.Addresses[r.Key()] = f.addrs[r.Key()]
		out.TotalUSD += f.addrs[r.Key()]
	}
	for _, e := range entities {
		out.Entities[e] = f.entities[e]
	}
	return out, nil
}

// With the balances service wired, the summary shows its balanceUsd and predictions sort by its
// USD balances.
func TestSummaryAndPredictionsUseBalances(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	hot, p1, p2 := addr(0x100), addr(0xa1), addr(0xa2)
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}],
		"addresses":[{"chainType":"evm","address":"`+hot+`","entity":"acme","label":"Hot Wallet 1"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := pgtest.Pool(t).Exec(ctx, `INSERT INTO intel.addresses (chain_type, address, predicted_entity_id, version)
		VALUES ('evm', $1, 'acme', 1000), ('evm', $2, 'acme', 1001)`, p1, p2); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	api.app.Balances = fakeBalances{addrs: map[string]float64{"evm:" + p1: 10, "evm:" + p2: 2500.5}, entities: map[string]float64{"acme": 123456.75}}
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	code, body := api.do(t, "GET", "/intelligence/entity/acme/summary", "", caller)
	if code != 200 {
		t.Fatalf("summary: %d %s", code, body)
	}
	assertJSON(t, "summary", body, `{"entityId":"acme","numAddresses":1,"balanceUsd":123456.75,"volumeUsd":0,"firstTx":null,"lastTx":null}`)
	code, body = api.do(t, "GET", "/intelligence/entity_predictions/acme", "", caller)
	if code != 200 {
		t.Fatalf("predictions: %d %s", code, body)
	}
	assertJSON(t, "predictions", body, `[{"address":"`+p2+`","entityID":"acme","usdBalance":2500.5},{"address":"`+p1+`","entityID":"acme","usdBalance":10}]`)
}
