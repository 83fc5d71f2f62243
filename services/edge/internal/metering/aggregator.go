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
// billing periods, idempotently on the event id, then copies the billing periods' totals to the
// live ledger's shared totals (CreditLedger.Publish).
type Aggregator struct {
	Store UsageStore
	// Included returns the credits a tier includes per period (0 for an unknown tier).
	Included func(tier string) int64
	Ledger   *CreditLedger // may be nil
	Log      *slog.Logger
}

// Handle is the consumer's batch handler.
func (a *Aggregator) Handle(ctx context.Context, batch []eventbus.Message[*eventsv1.UsageCall]) error {
	return eventbus.WriteRows(a.call, a.write)(ctx, batch)
}

// call is the usage call a record carries; records without an event id (nothing to
// de-duplicate on) or without key, user or route are left out.
func (a *Aggregator) call(m eventbus.Message[*eventsv1.UsageCall]) (usage.Call, bool) {
	if m.EventID == "" {
		return usage.Call{}, false
	}
	u := m.Msg
	if u.GetKeyId() == "" || u.GetUserId() == "" || u.GetRoute() == "" || u.GetCredits() < 0 {
		a.Log.Warn("usage event ignored: missing key, user or route", "event_id", m.EventID)
		return usage.Call{}, false
	}
	at := time.UnixMilli(u.GetTimeMs())
	if u.GetTimeMs() <= 0 {
		at = m.Time
	}
	return usage.Call{
		EventID: m.EventID, KeyID: u.GetKeyId(), UserID: u.GetUserId(), OrgID: u.GetOrgId(),
		Route: u.GetRoute(), Credits: u.GetCredits(), Time: at, Included: a.Included(u.GetTier()),
	}, true
}

func (a *Aggregator) write(ctx context.Context, calls []usage.Call) error {
	if _, err := a.Store.Apply(ctx, calls); err != nil {
		return err
	}
	if a.Ledger != nil {
		// Every call of the batch, counted now or before (a retry after Redis failed): the
		// totals are absolute, so publishing them again is harmless.
		return a.Ledger.Publish(ctx, calls)
	}
	return nil
}
