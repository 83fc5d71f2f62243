// Package client calls the balances service's internal API (docs/balances.md) for other
// services: the USD value of the current balances of a set of addresses and of operator
// entities.
package client

import (
	"context"
	"net/http"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"go.opentelemetry.io/otel/trace"
)

// AddressRef names an address on a chain type.
type AddressRef struct {
	ChainType string `json:"chainType"`
	Address   string `json:"address"`
}

// Key is the "<chainType>:<address>" form Totals.Addresses is keyed by.
func (a AddressRef) Key() string { return a.ChainType + ":" + a.Address }

// Totals are USD values of current balances at current prices.
type Totals struct {
	TotalUSD  float64            `json:"totalUsd"`  // the addresses' sum
	Addresses map[string]float64 `json:"addresses"` // by AddressRef.Key() (normalized address)
	Entities  map[string]float64 `json:"entities"`  // by operator entity id
}

// Limits of one call; USDTotals splits bigger requests.
const (
	MaxAddresses = 10000
	MaxEntities  = 1000
)

// Client is safe for concurrent use.
type Client struct{ c *httpx.InternalClient }

// New returns a client for the balances service at baseURL.
func New(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*Client, error) {
	c, err := httpx.NewInternalClient("balances", baseURL, signer, tp, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// USDTotals values the current balances of each address of addrs and of each operator entity.
func (c *Client) USDTotals(ctx context.Context, addrs []AddressRef, entities []string) (Totals, error) {
	out := Totals{Addresses: map[string]float64{}, Entities: map[string]float64{}}
	call := func(as []AddressRef, es []string) error {
		var part Totals
		body := map[string]any{"addresses": as, "entities": es}
		if err := c.c.Do(ctx, http.MethodPost, "/internal/balances/usd", nil, body, &part); err != nil {
			return err
		}
		out.TotalUSD += part.TotalUSD
		for k, v := range part.Addresses {
			out.Addresses[k] = v
		}
		for k, v := range part.Entities {
			out.Entities[k] = v
		}
		return nil
	}
	for start := 0; start < len(addrs); start += MaxAddresses {
		if err := call(addrs[start:min(start+MaxAddresses, len(addrs))], []string{}); err != nil {
			return out, err
		}
	}
	for start := 0; start < len(entities); start += MaxEntities {
		if err := call([]AddressRef{}, entities[start:min(start+MaxEntities, len(entities))]); err != nil {
			return out, err
		}
	}
	return out, nil
}
