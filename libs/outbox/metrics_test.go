package outbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// exported returns a meter whose metrics scrape() reads as Prometheus exports them.
func exported(t *testing.T) (*sdkmetric.MeterProvider, func() promscrape.Samples) {
	t.Helper()
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)), func() promscrape.Samples {
		t.Helper()
		s, err := promscrape.Scrape(context.Background(), http.DefaultClient, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// A relay whose broker refuses shows its rows pending, the oldest one's age and the failed
// round; once the broker is back, the rows published and nothing pending. Exported under the
// names and the outbox label the dashboards and alerts read.
func TestRelayMetricsMove(t *testing.T) {
	ctx := context.Background()
	tb := table(t)
	mp, scrape := exported(t)
	rec := &recorder{fail: true}
	relay := NewRelay(tb, rec, msgs, Options{Logger: quiet, Meter: mp.Meter("test")})
	lbl := map[string]string{"outbox": "relaytest.outbox"}
	check := func(step string, want map[string]float64) {
		t.Helper()
		s := scrape()
		for name, w := range want {
			if v, ok := s.Value(name, lbl); !ok || v != w {
				t.Errorf("%s: %s = %v (exported: %v), want %v", step, name, v, ok, w)
			}
		}
	}
	check("at start", map[string]float64{"outbox_published_total": 0, "outbox_publish_failures_total": 0})

	write(t, topicNames, []string{"a", "b"}, wrapperspb.String("1"), wrapperspb.String("2"))
	write(t, topicCount, []string{"c"}, wrapperspb.Int64(3))
	// The oldest row was written an hour ago (on the database's clock, as the relay reads it).
	if _, err := pgtest.Pool(t).Exec(ctx, `UPDATE relaytest.outbox SET created_at = now() - interval '1 hour'
		WHERE id = (SELECT min(id) FROM relaytest.outbox)`); err != nil {
		t.Fatal(err)
	}
	if err := relay.Drain(ctx); err == nil {
		t.Fatal("drain with a failing broker succeeded")
	}
	relay.ObserveBacklog(ctx)
	check("broker down", map[string]float64{"outbox_published_total": 0, "outbox_publish_failures_total": 1, "outbox_pending_rows": 3})
	if age, ok := scrape().Value("outbox_oldest_pending_age_seconds", lbl); !ok || age < 3600 || age > 7200 {
		t.Errorf("oldest pending age %v (exported: %v), want the hour since the oldest row was written", age, ok)
	}

	rec.fail = false
	if err := relay.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	relay.ObserveBacklog(ctx)
	check("broker back", map[string]float64{"outbox_published_total": 3, "outbox_publish_failures_total": 1,
		"outbox_pending_rows": 0, "outbox_oldest_pending_age_seconds": 0})
}
