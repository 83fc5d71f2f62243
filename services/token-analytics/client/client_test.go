package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/chainintel/chainintel/services/token-analytics/client"
)

func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal/tokens/known":
			b, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || string(b) != `{"ids":["ethereum","nope"]}` {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"known":["ethereum"]}`))
		case "/internal/tokens/ethereum":
			_, _ = w.Write([]byte(`{"identifier":{"pricingID":"ethereum"},"name":"Ethereum","symbol":"ETH","price":3000,
				"deployments":[{"chain":"ethereum","address":"","decimals":18}]}`))
		case "/internal/tokens/ethereum/0xabc":
			_, _ = w.Write([]byte(`{"identifier":{"pricingID":"x","chain":"ethereum","address":"0xabc"},"name":"X","symbol":"X","deployments":[]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"token nope: not found"}`))
		}
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := c.Market(ctx, "ethereum")
	if err != nil || m.Name != "Ethereum" || m.Price == nil || *m.Price != 3000 || m.Price24hAgo != nil || len(m.Deployments) != 1 || m.Deployments[0].Decimals != 18 {
		t.Errorf("%+v %v", m, err)
	}
	m, err = c.MarketByContract(ctx, "ethereum", "0xabc")
	if err != nil || m.Identifier.Address != "0xabc" || m.Price != nil {
		t.Errorf("%+v %v", m, err)
	}
	if _, err := c.Market(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	if known, err := c.Known(ctx, []string{"ethereum", "nope"}); err != nil || !reflect.DeepEqual(known, map[string]bool{"ethereum": true}) {
		t.Errorf("known: %v %v", known, err)
	}
}
