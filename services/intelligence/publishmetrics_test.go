package intelligence

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type downBus struct{}

func (downBus) Publish(context.Context, ...eventbus.Event) error {
	return errors.New("broker unreachable")
}

// The attribution relay exports its publish cursor as an outbox (outbox="intel.attributions"):
// while the broker refuses, the versions above the cursor are pending, the oldest one's age is
// that of its change, and the failed rounds count; once the broker is back, they are published
// and nothing is pending.
func TestAttributionRelayMetricsMove(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := store.New(pool)
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCurated(ctx, testConfig(t), strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+hot1+",acme,Hot,1\nevm,"+hot2+",acme,Cold,1\n")); err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(ctx, Name, telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(tel.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	metric := func(name string) float64 {
		t.Helper()
		s, err := promscrape.Scrape(ctx, http.DefaultClient, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := s.Value(name, map[string]string{"outbox": publish.OutboxName})
		return v
	}
	m := outbox.NewMetrics(tel.Meter(), publish.OutboxName)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	relay := func(bus publish.Bus, until func() bool) {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- publish.Relay(rctx, st, bus, 10*time.Millisecond, quiet, m) }()
		for deadline := time.Now().Add(20 * time.Second); !until(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatal("the relay's metrics never moved")
			}
		}
		cancel()
		<-done
	}

	relay(downBus{}, func() bool { return metric("outbox_publish_failures_total") >= 1 })
	if p, n := metric("outbox_pending_rows"), metric("outbox_published_total"); p != 2 || n != 0 {
		t.Fatalf("broker down: pending %v, published %v; want 2 and 0", p, n)
	}
	if _, err := pool.Exec(ctx, `UPDATE intel.addresses SET updated_at = now() - interval '1 hour'
		WHERE version = (SELECT min(version) FROM intel.addresses)`); err != nil {
		t.Fatal(err)
	}
	publish.ObserveBacklog(ctx, st, m, quiet)
	if a := metric("outbox_oldest_pending_age_seconds"); a < 3600 || a > 7200 {
		t.Fatalf("oldest unpublished age %v, want the hour since the change", a)
	}

	relay(&topicLog{}, func() bool { return metric("outbox_published_total") == 2 })
	publish.ObserveBacklog(ctx, st, m, quiet)
	if p, a := metric("outbox_pending_rows"), metric("outbox_oldest_pending_age_seconds"); p != 0 || a != 0 {
		t.Fatalf("after publishing: pending %v, oldest age %v; want 0 and 0", p, a)
	}
}
