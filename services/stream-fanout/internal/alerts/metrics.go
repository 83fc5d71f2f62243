package alerts

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// instruments are the deliverer's metrics.
type instruments struct {
	deliveries metric.Int64Counter // by outcome and reason
	transfers  metric.Int64Counter // by outcome and reason
	attempts   metric.Int64Counter // by result
	invalids   metric.Int64Counter // by reason
}

func newInstruments(mt metric.Meter, states func() map[string]int64) (*instruments, error) {
	if mt == nil {
		mt = noop.NewMeterProvider().Meter("")
	}
	m := &instruments{}
	var err error
	if m.deliveries, err = mt.Int64Counter("stream_alert_deliveries_total",
		metric.WithDescription("webhook deliveries (POSTs of an alert's matches in a batch) that ended, by outcome: delivered, or given_up with the reason (status_4xx, redirect, refused_address, url, retries_exhausted, window_passed, webhook_suspended, hourly_limit, monthly_limit, credit_limit); the batch's offsets are committed either way")); err != nil {
		return nil, err
	}
	if m.transfers, err = mt.Int64Counter("stream_alert_transfers_total",
		metric.WithDescription("transfers in the deliveries of stream_alert_deliveries_total, by the same outcome and reason (delivered ones are charged one credit each), and transfers not sent again because their alert delivered them already (outcome already_delivered: a batch read again after a replica stopped)")); err != nil {
		return nil, err
	}
	if m.attempts, err = mt.Int64Counter("stream_alert_delivery_attempts_total",
		metric.WithDescription("webhook POSTs made, by result: ok, retry (a 5xx, 408, 429 or network error) or final")); err != nil {
		return nil, err
	}
	if m.invalids, err = mt.Int64Counter("stream_alert_invalid_total",
		metric.WithDescription("alerts found to match nothing when compiled, by reason: decode (not a valid filter), unknown_name (an entity, type or user entity that does not exist for its owner), url")); err != nil {
		return nil, err
	}
	_, err = mt.Int64ObservableGauge("stream_alerts",
		metric.WithDescription("alerts held by this replica, by state: active (matched), disabled, invalid (match nothing), pending (not compiled yet: user-labels failed)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			for s, n := range states() {
				o.Observe(n, metric.WithAttributes(attribute.String("state", s)))
			}
			return nil
		}))
	return m, err
}

func (m *instruments) delivered(ctx context.Context, n int) {
	attrs := metric.WithAttributes(attribute.String("outcome", "delivered"), attribute.String("reason", ""))
	m.deliveries.Add(ctx, 1, attrs)
	m.transfers.Add(ctx, int64(n), attrs)
}

func (m *instruments) givenUp(ctx context.Context, reason string, n int) {
	attrs := metric.WithAttributes(attribute.String("outcome", "given_up"), attribute.String("reason", reason))
	m.deliveries.Add(ctx, 1, attrs)
	m.transfers.Add(ctx, int64(n), attrs)
}

func (m *instruments) alreadyDelivered(ctx context.Context, n int) {
	m.transfers.Add(ctx, int64(n), metric.WithAttributes(attribute.String("outcome", "already_delivered"), attribute.String("reason", "")))
}

func (m *instruments) attempt(ctx context.Context, a attempt) {
	res := "final"
	switch {
	case a.ok:
		res = "ok"
	case a.retry:
		res = "retry"
	}
	m.attempts.Add(ctx, 1, metric.WithAttributes(attribute.String("result", res)))
}

func (m *instruments) invalid(ctx context.Context, reason string) {
	m.invalids.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}
