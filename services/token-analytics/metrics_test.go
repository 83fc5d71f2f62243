package tokenanalytics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The lag is now minus each chain's end of the closed hours, 0 for an end past now (a close of
// every delivered hour).
func TestCloseLag(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	got := closeLag(now, map[string]time.Time{
		"ethereum": now.Truncate(time.Hour), "bsc": now.Add(-3 * time.Hour).Truncate(time.Hour), "base": now.Add(time.Hour).Truncate(time.Hour)})
	want := map[string]float64{"ethereum": 1800, "bsc": 3*3600 + 1800, "base": 0}
	if len(got) != len(want) {
		t.Fatalf("lag %v, want %v", got, want)
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("%s: lag %v, want %v", c, got[c], w)
		}
	}
}

// The metrics as the service's /metrics exports them: the names the dashboard and the alerts
// use, the counters at 0 from the start, a close's rows, a failed close, the poll results, a
// 429 and the quote age.
func TestMetricsAsExported(t *testing.T) {
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, Name, telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	until := map[string]time.Time{"ethereum": now.Add(-2 * time.Hour).Truncate(time.Hour)}
	mx, err := newMetrics(ctx, tel.Meter(), func() time.Time { return now }, true)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(tel.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	scrape := func() promscrape.Samples {
		s, err := promscrape.Scrape(ctx, http.DefaultClient, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type want struct {
		name  string
		match map[string]string
		value float64
	}
	check := func(step string, s promscrape.Samples, ws []want) {
		t.Helper()
		for _, w := range ws {
			if v, ok := s.Value(w.name, w.match); !ok || v != w.value {
				t.Errorf("%s: %s%v = %v (exported: %v), want %v", step, w.name, w.match, v, ok, w.value)
			}
		}
	}
	ok, failed := map[string]string{"result": "ok"}, map[string]string{"result": "failed"}
	if scrape().Names()["token_analytics_close_lag_seconds"] {
		t.Error("a close lag before the close loop read the closed hours")
	}
	mx.closedUntil(until) // what the close loop reads after its first run
	check("at start", scrape(), []want{
		{"token_analytics_close_rows_total", nil, 0}, {"token_analytics_close_failures_total", nil, 0},
		{"token_analytics_price_throttled_total", nil, 0}, {"token_analytics_price_polls_total", ok, 0},
		{"token_analytics_price_polls_total", failed, 0},
		{"token_analytics_close_lag_seconds", map[string]string{"chain": "ethereum"}, 9000},
	})
	if scrape().Names()["token_analytics_price_quote_age_seconds"] {
		t.Error("a quote age before any quote was stored")
	}
	if scrape().Names()["token_analytics_price_polling"] {
		t.Error("a polling gauge before the poller tried the lease")
	}
	// Without a price API, no price metric at all.
	other, err := telemetry.Setup(ctx, Name, telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newMetrics(ctx, other.Meter(), time.Now, false); err != nil {
		t.Fatal(err)
	}
	mfs, err := other.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "token_analytics_price_") {
			t.Errorf("without a price API: %s exported", mf.GetName())
		}
	}

	mx.closed(ctx, store.Closed{}, nil, time.Millisecond) // nothing due: no duration
	mx.closed(ctx, store.Closed{Rows: 40, Transfers: 90, Chains: 1}, nil, time.Second)
	mx.closed(ctx, store.Closed{Rows: 2, Chains: 1}, errors.New("close flow hours of bsc: timeout"), 3*time.Second)
	mx.polled(ctx, nil)
	mx.polled(ctx, errors.New("429 too many requests"))
	mx.polled(ctx, nil)
	mx.throttledOnce(ctx)
	mx.quoted(now.Add(-90 * time.Second))
	mx.quoted(now.Add(-10 * time.Minute)) // older: the newest stays
	mx.holding(false)
	check("another replica polls", scrape(), []want{{"token_analytics_price_polling", nil, 0}})
	if scrape().Names()["token_analytics_price_quote_age_seconds"] {
		t.Error("a quote age on a replica that does not poll")
	}
	mx.holding(true)
	check("after", scrape(), []want{
		{"token_analytics_close_rows_total", nil, 42}, {"token_analytics_close_failures_total", nil, 1},
		{"token_analytics_close_duration_seconds_count", nil, 2}, {"token_analytics_close_duration_seconds_sum", nil, 4},
		{"token_analytics_price_throttled_total", nil, 1}, {"token_analytics_price_polls_total", ok, 2},
		{"token_analytics_price_polls_total", failed, 1}, {"token_analytics_price_quote_age_seconds", nil, 90},
		{"token_analytics_price_polling", nil, 1},
	})
}
