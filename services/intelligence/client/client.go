// Package client calls the intelligence service for other services: the tags of addresses,
// which intel.attributions.v1 does not carry (an address's entity, label and deposit service
// are on the topic), through intelligence's internal tags lookup. transfers' /counterparties
// tags filter asks it about the counterparties it considers.
//
// Calls act for the identity in the context (httpx.WithIdentity), as the caller's own request
// to intelligence would.
package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/httpx"
	"go.opentelemetry.io/otel/trace"
)

// MaxBatch is the most addresses intelligence's batch routes take in one call; Tags splits
// larger lists into calls of this size.
const MaxBatch = 1000

// RiskMaxBatch is the most addresses POST /risk/address/batch takes, and RiskMaxEntityBatch the
// most entity ids POST /risk/entity/batch takes: each address is a bounded graph search, not a
// cache read, and an exchange entity is up to 25 of them from its hot wallets, each reading the
// wallet's pairs, so four such entities fit the edge's 30 s (docs/intelligence.md "Risk
// scores"). The edge's credit hold relies on them.
const (
	RiskMaxBatch       = 100
	RiskMaxEntityBatch = 4
)

// Client is safe for concurrent use.
type Client struct{ c *httpx.InternalClient }

// New returns a client for the intelligence service at baseURL.
func New(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*Client, error) {
	c, err := httpx.NewInternalClient("intelligence", baseURL, signer, tp, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

type tagBatch struct {
	Addresses map[string][]string `json:"addresses"`
}

// Tags returns the tag ids each of addrs carries on chain: its populatedTags as
// /intelligence/address_enriched shows them (the address's own tags, those of another chain
// left out), keyed by the address as given. Addresses without tags are absent. It asks
// POST /internal/tags, which reads only the tags (no attribution, no user labels).
func (c *Client) Tags(ctx context.Context, chain string, addrs []string) (map[string][]string, error) {
	out := map[string][]string{}
	// An address the chain does not accept (stored as given) carries no tags, and intelligence
	// refuses a batch holding one: it is not asked about.
	valid := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if _, err := address.NormalizeForChain(chain, a); err == nil {
			valid = append(valid, a)
		}
	}
	q := url.Values{"chain": {chain}}
	for start := 0; start < len(valid); start += MaxBatch {
		var part tagBatch
		chunk := valid[start:min(start+MaxBatch, len(valid))]
		if err := c.c.Do(ctx, http.MethodPost, "/internal/tags", q, map[string]any{"addresses": chunk}, &part); err != nil {
			// Whatever intelligence answers (a chain it does not serve, say), the caller's
			// request was valid: the dependency failed it, a 503 naming intelligence.
			var ue *httpx.UpstreamError
			if errors.As(err, &ue) {
				return nil, httpx.Unavailable("intelligence", err)
			}
			return nil, err
		}
		for a, ids := range part.Addresses {
			out[a] = append(out[a], ids...)
		}
	}
	return out, nil
}

// Entities is what intelligence knows of some entity ids.
type Entities struct {
	Known map[string]bool // the ids intelligence holds, with or without attributed addresses
	Types []string        // every entity type operator entities have
}

// Entities asks POST /internal/entities which of ids are operator entities (in calls of
// MaxBatch ids; with no ids, one call for the types).
func (c *Client) Entities(ctx context.Context, ids []string) (Entities, error) {
	out := Entities{Known: map[string]bool{}}
	for start := 0; start == 0 || start < len(ids); start += MaxBatch {
		var part struct {
			Known []string `json:"known"`
			Types []string `json:"types"`
		}
		chunk := ids[start:min(start+MaxBatch, len(ids))]
		if err := c.c.Do(ctx, http.MethodPost, "/internal/entities", nil, map[string]any{"ids": chunk}, &part); err != nil {
			return out, err
		}
		for _, id := range part.Known {
			out.Known[id] = true
		}
		out.Types = part.Types
	}
	return out, nil
}
