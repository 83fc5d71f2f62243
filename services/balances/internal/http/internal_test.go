package http

import (
	"context"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/balances/client"
)

// The internal totals route through the client other services use.
func TestInternalUSDTotalsThroughClient(t *testing.T) {
	ev := newEnv(t)
	srv := httptest.NewServer(ev.h)
	defer srv.Close()
	c, err := client.New(srv.URL, httpx.NewSigner("test-secret-0123456789"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.USDTotals(context.Background(), []client.AddressRef{{ChainType: "evm", Address: a1}, {ChainType: "evm", Address: a3},
		{ChainType: "evm", Address: "0x4444444444444444444444444444444444444444"}}, []string{"binance", "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	want := client.Totals{TotalUSD: 6000,
		Addresses: map[string]float64{"evm:" + a1: 4900, "evm:" + a3: 1100, "evm:0x4444444444444444444444444444444444444444": 0},
		Entities:  map[string]float64{"binance": 11500, "nobody": 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("totals = %+v, want %+v", got, want)
	}
	ev.expect(t, "/internal/balances/usd", 405, `{"error":"method GET not allowed on /internal/balances/usd"}`)
}

func TestInternalUSDTotalsRefusesBadInput(t *testing.T) {
	ev := newEnv(t)
	for body, want := range map[string]string{
		`{"addresses":[{"chainType":"mars","address":"x"}]}`:  `{"error":"addresses: unknown chain type \"mars\" (want one of evm, bitcoin, tron, solana, dogecoin, ton)"}`,
		`{"addresses":[{"chainType":"evm","address":"0x1"}]}`: `{"error":"addresses: \"0x1\" is not a evm address"}`,
	} {
		ev.post(t, "/internal/balances/usd", body, 400, want)
	}
}
