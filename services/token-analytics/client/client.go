// Package client calls the token-analytics service's internal API for other services: the
// market data of a token (name, symbol, price now and 24 h ago, deployments) by pricing id or by
// contract, and which of a list of pricing ids the registry knows.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"go.opentelemetry.io/otel/trace"
)

// ErrNotFound is a token the registry does not know.
var ErrNotFound = errors.New("token not in the registry")

// ErrRefused is a pricing id or contract the service refuses (400, 414, 422: malformed, too
// long, a chain it does not serve): the caller's input, not the service, is at fault, and the
// registry holds no such token. Returned wrapping the service's answer.
var ErrRefused = errors.New("token-analytics refused the id or contract")

// Deployment is where a token is deployed ("" address for a chain's native coin).
type Deployment struct {
	Chain    string `json:"chain"`
	Address  string `json:"address"`
	Decimals int32  `json:"decimals"`
}

// Market is a token's market data. Price and Price24hAgo are nil when unknown.
type Market struct {
	Identifier struct {
		PricingID string `json:"pricingID"`
		Chain     string `json:"chain,omitempty"`
		Address   string `json:"address,omitempty"`
	} `json:"identifier"`
	Name        string       `json:"name"`
	Symbol      string       `json:"symbol"`
	Price       *float64     `json:"price,omitempty"`
	Price24hAgo *float64     `json:"price24hAgo,omitempty"`
	Deployments []Deployment `json:"deployments"`
}

// Client is safe for concurrent use.
type Client struct{ c *httpx.InternalClient }

// New returns a client for the token-analytics service at baseURL.
func New(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*Client, error) {
	c, err := httpx.NewInternalClient("token-analytics", baseURL, signer, tp, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// Market returns the market data of a pricing id, or ErrNotFound, or ErrRefused.
func (c *Client) Market(ctx context.Context, pricingID string) (Market, error) {
	return c.get(ctx, "/internal/tokens/"+url.PathEscape(pricingID))
}

// MarketByContract returns the market data of the token deployed at address on chain, or
// ErrNotFound, or ErrRefused.
func (c *Client) MarketByContract(ctx context.Context, chain, address string) (Market, error) {
	return c.get(ctx, "/internal/tokens/"+url.PathEscape(chain)+"/"+url.PathEscape(address))
}

// Known returns the pricing ids among ids the registry holds (one call, at most 1000 ids: the
// service's MaxKnownIDs); the others are unknown.
func (c *Client) Known(ctx context.Context, ids []string) (map[string]bool, error) {
	var out struct {
		Known []string `json:"known"`
	}
	if err := c.c.Do(ctx, http.MethodPost, "/internal/tokens/known", nil, struct {
		IDs []string `json:"ids"`
	}{ids}, &out); err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(out.Known))
	for _, id := range out.Known {
		known[id] = true
	}
	return known, nil
}

func (c *Client) get(ctx context.Context, path string) (Market, error) {
	var m Market
	err := c.c.Do(ctx, http.MethodGet, path, nil, nil, &m)
	var ue *httpx.UpstreamError
	if errors.As(err, &ue) {
		switch ue.Status {
		case http.StatusNotFound:
			return Market{}, ErrNotFound
		case http.StatusBadRequest, http.StatusRequestURITooLong, http.StatusUnprocessableEntity:
			return Market{}, fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	return m, err
}
