package metering

import (
	"context"
	"log/slog"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
)

// UsageStore is where the aggregator writes (usage.Store).
type UsageStore interface {
	Apply(ctx context.Context, calls []usage.Call) ([]usage.Call, error)
}

// Aggregator is the edge's metering consumer: it folds usage.calls.v1 into hourly rollups and
// billing periods, idempotently on the event id.
type Aggregator struct {
	Store UsageStore
	// Included returns the credits a tier includes per period (0 for an unknown tier).
	Included func(tier string) int64
	// External reports whether a route's credits are metered outside the edge's request path
	// (stream transfers); those are also added to the ledger's shared totals.
	External func(route string) bool
	Ledger   *CreditLedger // may be nil
	Log      *slog.Logger
}

// Handle is the consumer's batch handler.
func (a *Aggregator) Handle(ctx context.Context, batch []eventbus.Message[*eventsv1.UsageCall]) error {
	calls := make([]usage.Call, 0, len(batch))
	for _, m := range batch {
		if m.Tombstone || m.EventID == "" {
			continue
		}
		u := m.Msg
		if u.GetKeyId() == "" || u.GetUserId() == "" || u.GetRoute() == "" || u.GetCredits() < 0 {
			a.Log.Warn("usage event ignored: missing key, user or route", "event_id", m.EventID)
			continue
		}
		at := time.UnixMilli(u.GetTimeMs())
		if u.GetTimeMs() <= 0 {
			at = m.Time
		}
		calls = append(calls, usage.Call{
			EventID: m.EventID, KeyID: u.GetKeyId(), UserID: u.GetUserId(), OrgID: u.GetOrgId(),
			Route: u.GetRoute(), Credits: u.GetCredits(), Time: at, Included: a.Included(u.GetTier()),
		})
	}
	fresh, err := a.Store.Apply(ctx, calls)
	if err != nil {
		return err
	}
	if a.Ledger != nil && a.External != nil {
		for _, c := range fresh {
			if c.Credits > 0 && a.External(c.Route) {
				if err := a.Ledger.AddExternal(ctx, usage.BilledEntity(c.UserID, c.OrgID), c.Time, c.Credits); err != nil {
					a.Log.Warn("stream credits not added to the live ledger", "error", err)
				}
			}
		}
	}
	return nil
}
