package tokenanalytics

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// metrics are what an operator watches of the hour close and the price source (exported as
// token_analytics_close_lag_seconds, token_analytics_close_rows_total,
// token_analytics_close_duration_seconds, token_analytics_close_failures_total,
// token_analytics_price_polls_total, token_analytics_price_throttled_total,
// token_analytics_price_quote_age_seconds and token_analytics_price_polling).
type metrics struct {
	closeRows, closeFailures metric.Int64Counter
	closeDuration            metric.Float64Histogram
	polls, throttled         metric.Int64Counter
	// newestQuote is the newest quote time the poller stored (unix nanoseconds; 0: none yet).
	newestQuote atomic.Int64
	// polling is 1 while this replica holds the price poller's lease, 0 while another does, -1
	// before the first try (not exported).
	polling atomic.Int64

	mu sync.Mutex
	// until is each chain's end of the closed hours as the close loop last read it.
	until map[string]time.Time
}

// closeBuckets bound the close's duration histogram, in seconds: a run that closes nothing
// reads the marks in milliseconds; one that closes a backlog builds up to closeChunk hours per
// transaction.
var closeBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// newMetrics creates the metrics; with prices (a price API is polled) the poll counters are
// exported from the start at 0, without them not at all.
func newMetrics(ctx context.Context, m metric.Meter, now func() time.Time, prices bool) (*metrics, error) {
	var x metrics
	x.polling.Store(-1)
	var errs [8]error
	x.closeRows, errs[0] = m.Int64Counter("token_analytics.close.rows",
		metric.WithDescription("flow_address_hours rows the hour close built"))
	x.closeFailures, errs[1] = m.Int64Counter("token_analytics.close.failures",
		metric.WithDescription("hour close runs that failed for at least one chain"))
	x.closeDuration, errs[2] = m.Float64Histogram("token_analytics.close.duration", metric.WithUnit("s"),
		metric.WithDescription("duration of the hour close runs that had hours due or failed"),
		metric.WithExplicitBucketBoundaries(closeBuckets...))
	x.polls, errs[3] = m.Int64Counter("token_analytics.price.polls",
		metric.WithDescription("price poll cycles by result (ok: every polled id is current; failed: the cycle stopped at a failure)"))
	x.throttled, errs[4] = m.Int64Counter("token_analytics.price.throttled",
		metric.WithDescription("429 answers of the price API (each is retried after its Retry-After)"))
	_, errs[5] = m.Float64ObservableGauge("token_analytics.close.lag", metric.WithUnit("s"),
		metric.WithDescription("seconds from the end of a chain's closed hours (flow_marks.rolled_until) to now"),
		metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
			// From the ends the close loop last read, so a scrape runs no query; a close that
			// fails or stalls leaves them as they were, and the lag grows with the clock.
			x.mu.Lock()
			lags := closeLag(now(), x.until)
			x.mu.Unlock()
			for chain, lag := range lags {
				o.Observe(lag, metric.WithAttributes(attribute.String("chain", chain)))
			}
			return nil
		}))
	_, errs[6] = m.Float64ObservableGauge("token_analytics.price.quote_age", metric.WithUnit("s"),
		metric.WithDescription("seconds from the newest quote the price poller stored to now (on the replica that polls)"),
		metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
			// A replica that lost the poller's lease stores no quotes: its age would only grow,
			// so only the polling replica's is exported.
			if ns := x.newestQuote.Load(); ns != 0 && x.polling.Load() != 0 {
				o.Observe(max(0, now().Sub(time.Unix(0, ns)).Seconds()))
			}
			return nil
		}))
	_, errs[7] = m.Int64ObservableGauge("token_analytics.price.polling",
		metric.WithDescription("1 while this replica holds the price poller's lease and polls the price API, 0 while another replica does"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			if v := x.polling.Load(); v >= 0 {
				o.Observe(v)
			}
			return nil
		}))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The counters exist from the start at 0, so an alert on a rate or an increase sees the first
	// failure.
	x.closeRows.Add(ctx, 0)
	x.closeFailures.Add(ctx, 0)
	if prices {
		x.throttled.Add(ctx, 0)
		x.polls.Add(ctx, 0, metric.WithAttributes(attribute.String("result", "ok")))
		x.polls.Add(ctx, 0, metric.WithAttributes(attribute.String("result", "failed")))
	}
	return &x, nil
}

// closeLag is, per chain, the seconds from the end of its closed hours to now. A healthy close
// keeps it below an hour plus closeGrace plus the close interval: the hour of now is open, and
// the one before closes once a transfer of the next is delivered or the grace has passed,
// whether or not the chain delivers. It grows past that only when the close fails or cannot
// keep up. An end past now (CloseAllHours closes the newest delivered hour) is a lag of 0.
func closeLag(now time.Time, until map[string]time.Time) map[string]float64 {
	out := make(map[string]float64, len(until))
	for chain, u := range until {
		out[chain] = max(0, now.Sub(u).Seconds())
	}
	return out
}

// closed records one close run: its rows, and when it had hours due or failed, its duration
// (and the failure).
func (x *metrics) closed(ctx context.Context, c store.Closed, err error, took time.Duration) {
	x.closeRows.Add(ctx, c.Rows)
	if err != nil {
		x.closeFailures.Add(ctx, 1)
	}
	if c.Chains > 0 || err != nil {
		x.closeDuration.Record(ctx, took.Seconds())
	}
}

// closedUntil keeps each chain's end of the closed hours (store.ClosedUntil) for the lag gauge.
func (x *metrics) closedUntil(until map[string]time.Time) {
	x.mu.Lock()
	x.until = maps.Clone(until)
	x.mu.Unlock()
}

// polled records how a price poll cycle ended.
func (x *metrics) polled(ctx context.Context, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	x.polls.Add(ctx, 1, metric.WithAttributes(attribute.String("result", result)))
}

// quoted keeps the newest quote time stored.
func (x *metrics) quoted(t time.Time) {
	ns := t.UnixNano()
	for {
		old := x.newestQuote.Load()
		if ns <= old || x.newestQuote.CompareAndSwap(old, ns) {
			return
		}
	}
}

// holding records whether this replica holds the price poller's lease.
func (x *metrics) holding(ok bool) {
	if ok {
		x.polling.Store(1)
	} else {
		x.polling.Store(0)
	}
}

func (x *metrics) throttledOnce(ctx context.Context) { x.throttled.Add(ctx, 1) }
