package outbox

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Backlog is what an outbox holds unsent: how many rows, and how long the oldest one has waited
// (0 when none waits).
type Backlog struct {
	Pending   int64
	OldestAge time.Duration
}

// Backlogger is a Store that can tell its backlog; a Relay of one exports it as gauges. A relay
// that cannot publish only retries, and downstream consumer lag stays 0 because nothing is
// produced: the backlog is what shows a stuck outbox.
type Backlogger interface {
	Backlog(ctx context.Context) (Backlog, error)
}

//go:embed sql/backlog.sql
var backlogSQL string

// Backlog counts the unsent rows and reads the oldest one's age on the database's clock, both
// through the table's partial index on id WHERE sent_at IS NULL, so it reads only unsent rows.
func (t Table) Backlog(ctx context.Context) (Backlog, error) {
	var b Backlog
	var age float64
	if err := t.db.QueryRow(ctx, t.backlog).Scan(&b.Pending, &age); err != nil {
		return Backlog{}, fmt.Errorf("outbox backlog: %w", err)
	}
	b.OldestAge = time.Duration(age * float64(time.Second))
	return b, nil
}

// Name is the table's name as metrics label it: schema.table, unquoted.
func (t Table) Name() string { return t.label }

// Metrics are a relay's instruments, each labelled outbox=<name>. A Relay makes its own; a
// service relaying another kind of outbox (intelligence's publish cursor) makes them with
// NewMetrics, so its relay shows on the same dashboards and alerts.
type Metrics struct {
	attrs     metric.MeasurementOption
	published metric.Int64Counter
	failures  metric.Int64Counter
	parked    metric.Int64Counter
	pending   metric.Int64Gauge
	age       metric.Float64Gauge
}

// NewMetrics makes the instruments of the outbox name with m (nil: a meter recording nothing).
func NewMetrics(m metric.Meter, name string) *Metrics {
	if m == nil {
		m = noop.NewMeterProvider().Meter("outbox")
	}
	x := &Metrics{attrs: metric.WithAttributeSet(attribute.NewSet(attribute.String("outbox", name)))}
	// Errors only come from invalid names, which these are not; a failed instrument is a no-op.
	x.published, _ = m.Int64Counter("outbox_published_total", metric.WithDescription("outbox rows published and marked sent"))
	x.failures, _ = m.Int64Counter("outbox_publish_failures_total",
		metric.WithDescription("relay rounds that failed (claiming, publishing or marking rows); the rows stay unsent and are retried"))
	x.parked, _ = m.Int64Counter("outbox_parked_total",
		metric.WithDescription("outbox rows the brokers refuse for good (too large, invalid), parked with the reason so the rows after them flow"))
	x.pending, _ = m.Int64Gauge("outbox_pending_rows", metric.WithDescription("outbox rows not yet published"))
	x.age, _ = m.Float64Gauge("outbox_oldest_pending_age", metric.WithUnit("s"),
		metric.WithDescription("seconds the oldest unpublished outbox row has waited; 0 when none waits"))
	// The counters exist from the start, so rate() and increase() see the first failure.
	ctx := context.Background()
	x.published.Add(ctx, 0, x.attrs)
	x.failures.Add(ctx, 0, x.attrs)
	x.parked.Add(ctx, 0, x.attrs)
	return x
}

// Published counts n rows published.
func (x *Metrics) Published(ctx context.Context, n int) { x.published.Add(ctx, int64(n), x.attrs) }

// Failed counts a failed relay round.
func (x *Metrics) Failed(ctx context.Context) { x.failures.Add(ctx, 1, x.attrs) }

// Parked counts n rows parked.
func (x *Metrics) Parked(ctx context.Context, n int) {
	if n > 0 {
		x.parked.Add(ctx, int64(n), x.attrs)
	}
}

// Backlog records what the outbox holds unsent.
func (x *Metrics) Backlog(ctx context.Context, b Backlog) {
	x.pending.Record(ctx, b.Pending, x.attrs)
	x.age.Record(ctx, b.OldestAge.Seconds(), x.attrs)
}
