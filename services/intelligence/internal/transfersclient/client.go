// Package transfersclient calls the transfers service's internal API (docs/contracts.md) for the
// activity of a set of addresses, which user-entity summaries are computed from.
package transfersclient

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

// Activity is the transfer activity of a set of addresses over every configured chain.
type Activity struct {
	VolumeUSD     float64    `json:"volumeUsd"`
	TransferCount int64      `json:"transferCount"`
	FirstTx       *time.Time `json:"firstTx,omitempty"`
	LastTx        *time.Time `json:"lastTx,omitempty"`
}

// MaxAddresses is the most addresses one call may ask about.
const MaxAddresses = 1000

// Client is safe for concurrent use.
type Client struct{ c *httpx.InternalClient }

// New returns a client for the transfers service at baseURL.
func New(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*Client, error) {
	c, err := httpx.NewInternalClient("transfers", baseURL, signer, tp, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// Activity returns the activity of addrs (at most MaxAddresses).
func (c *Client) Activity(ctx context.Context, addrs []AddressRef) (Activity, error) {
	var out Activity
	if len(addrs) == 0 {
		return out, nil
	}
	err := c.c.Do(ctx, http.MethodPost, "/internal/activity", nil, map[string]any{"addresses": addrs}, &out)
	return out, err
}
