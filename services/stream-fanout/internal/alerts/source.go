package alerts

import (
	"context"

	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Alert is one caller's alert rule as user-labels' internal API gives it (GET /internal/alerts):
// the filter fields of a stream filter, its owner and the webhook it is delivered to.
type Alert = ulclient.Alert

// Method is where an alert is delivered: a webhook URL and the secret its POSTs are signed with.
type Method = ulclient.AlertMethod

// Source is where the alerts are read: user-labels (*services/user-labels/client.Client, whose
// Alerts and Alert sign the service identity its alert routes require).
type Source interface {
	// Alerts returns every caller's alerts with an id above after, enabled or not, ordered by
	// id, at most limit.
	Alerts(ctx context.Context, after int64, limit int) ([]Alert, error)
	// Alert returns alert id; an error satisfying errors.Is(err, ErrNotFound) when it was
	// deleted.
	Alert(ctx context.Context, id int64) (Alert, error)
}

// ErrNotFound is an alert that does not exist (deleted): user-labels' client's not-found.
var ErrNotFound = ulclient.ErrNotFound
