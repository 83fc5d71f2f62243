package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
)

// Alert is a caller's alert rule as its deliverer reads it (GET /internal/alerts): the filter
// fields of a stream filter, values as the caller gave them (lists split on commas and
// distinct, an exclusion as "!<value>"; names unresolved), the bounds as decimal strings ("" when
// unset), and the delivery method with its signing secret.
type Alert struct {
	ID      int64    `json:"id"`
	Owner   string   `json:"owner"` // the user id, as X-Caller names the caller
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Base    []string `json:"base"`
	From    []string `json:"from"`
	To      []string `json:"to"`
	Tokens  []string `json:"tokens"`
	// Chains are the chains the alert is limited to; empty for every chain.
	Chains   []string    `json:"chains"`
	USDGte   string      `json:"usdGte,omitempty"`
	USDLte   string      `json:"usdLte,omitempty"`
	ValueGte string      `json:"valueGte,omitempty"`
	ValueLte string      `json:"valueLte,omitempty"`
	Method   AlertMethod `json:"method"`
	// OrgID and Tier are who pays the alert's deliveries: the org id and tier of the caller who
	// created or last replaced it; OrgID empty (omitted) bills the user alone, as an
	// individual's calls are.
	OrgID     string    `json:"orgId,omitempty"`
	Tier      string    `json:"tier,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AlertMethod is where an alert's matches go: a webhook URL and the secret that signs them.
type AlertMethod struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"` // "webhook"
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// ServiceRole is the role of the identity the alert calls are signed with: the alert routes,
// which read every caller's alerts and their secrets, answer only a request signed with the
// internal secret for this role, which the edge never gives a caller.
const ServiceRole = "service"

// serviceIdentity is who the alert calls act as: no caller, the service itself.
var serviceIdentity = httpx.Identity{KeyID: "service", UserID: "service", Role: ServiceRole}

// MaxAlertsPage is the most alerts one Alerts call returns.
const MaxAlertsPage = 1000

// Alerts returns every caller's alerts with id > after, by id, at most limit (1 to
// MaxAlertsPage; fewer than limit means there are no more), enabled or not. A deliverer reads
// them all by calling again with the last id until a short page.
func (c *Client) Alerts(ctx context.Context, after int64, limit int) ([]Alert, error) {
	var out struct {
		Alerts []Alert `json:"alerts"`
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	err := c.c.Do(httpx.WithIdentity(ctx, serviceIdentity), http.MethodGet, "/internal/alerts", q, nil, &out)
	if out.Alerts == nil {
		out.Alerts = []Alert{}
	}
	return out.Alerts, err
}

// Alert returns alert id, or an error satisfying errors.Is(err, ErrNotFound) when it does not
// exist (never did, or was deleted).
func (c *Client) Alert(ctx context.Context, id int64) (Alert, error) {
	var a Alert
	err := c.c.Do(httpx.WithIdentity(ctx, serviceIdentity), http.MethodGet, "/internal/alerts/"+strconv.FormatInt(id, 10), nil, nil, &a)
	return a, notFound(err)
}
