package alerts

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"go.opentelemetry.io/otel/trace"
)

// Alert is one caller's alert rule as user-labels' internal API gives it (GET /internal/alerts):
// the filter fields of a stream filter, its owner and the webhook it is delivered to.
type Alert struct {
	ID      int64    `json:"id"`
	Owner   string   `json:"owner"` // the user id, as X-Caller names the caller
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Base    []string `json:"base"`
	From    []string `json:"from"`
	To      []string `json:"to"`
	Tokens  []string `json:"tokens"`
	Chains  []string `json:"chains"`
	// The bounds are decimal strings, empty when unset.
	USDGte    string    `json:"usdGte,omitempty"`
	USDLte    string    `json:"usdLte,omitempty"`
	ValueGte  string    `json:"valueGte,omitempty"`
	ValueLte  string    `json:"valueLte,omitempty"`
	Method    Method    `json:"method"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Method is where an alert is delivered: a webhook URL and the secret its POSTs are signed with.
type Method struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"` // webhook
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// Source is where the alerts are read: user-labels (services/user-labels/client's Alerts and
// Alert, or HTTPSource).
type Source interface {
	// Alerts returns every caller's alerts with an id above after, enabled or not, ordered by
	// id, at most limit.
	Alerts(ctx context.Context, after int64, limit int) ([]Alert, error)
	// Alert returns alert id; an error satisfying errors.Is(err, ErrNotFound) when it was
	// deleted.
	Alert(ctx context.Context, id int64) (Alert, error)
}

// ErrNotFound is an alert that does not exist (deleted).
var ErrNotFound = errors.New("alert not found")

// HTTPSource reads user-labels' internal alert routes (GET /internal/alerts,
// GET /internal/alerts/{id}) with a signed identity, as the service's other internal calls to
// user-labels are made. It is safe for concurrent use.
type HTTPSource struct{ c *httpx.InternalClient }

// NewHTTPSource returns a source reading the user-labels service at baseURL.
func NewHTTPSource(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*HTTPSource, error) {
	c, err := httpx.NewInternalClient("user-labels", baseURL, signer, tp, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &HTTPSource{c: c}, nil
}

// serviceIdentity is who the alert reads are made for: no caller (they read every caller's
// alerts), so the service itself, signed with the internal secret like every internal call.
var serviceIdentity = httpx.Identity{KeyID: "stream-fanout", UserID: "stream-fanout"}

// Alerts reads one page of GET /internal/alerts.
func (s *HTTPSource) Alerts(ctx context.Context, after int64, limit int) ([]Alert, error) {
	var out struct {
		Alerts []Alert `json:"alerts"`
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	err := s.c.Do(httpx.WithIdentity(ctx, serviceIdentity), http.MethodGet, "/internal/alerts", q, nil, &out)
	return out.Alerts, err
}

// Alert reads GET /internal/alerts/{id}; ErrNotFound on a 404.
func (s *HTTPSource) Alert(ctx context.Context, id int64) (Alert, error) {
	var a Alert
	err := s.c.Do(httpx.WithIdentity(ctx, serviceIdentity), http.MethodGet, "/internal/alerts/"+strconv.FormatInt(id, 10), nil, nil, &a)
	var ue *httpx.UpstreamError
	if errors.As(err, &ue) && ue.Status == http.StatusNotFound {
		return a, ErrNotFound
	}
	return a, err
}
