package eventbus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A fresh consumer exports its counters at 0 under its topic and group before any record, so
// increase() in ChainintelDeadLettered and ChainintelDeadLetterRefused sees the first record
// dead-lettered (a series born at 1 shows no increase). For a group consumer and a broadcast
// one (group ""). eventbus_consumer_broker_errors_total starts at 0 for each op too.
func TestFreshConsumerExportsCountersAtZero(t *testing.T) {
	const topic = "test.seeded.v1"
	brokers := startBroker(t, topic)
	for _, o := range []ConsumerOptions{
		{Group: "g-seeded"},
		{Group: "ignored", Broadcast: true},
	} {
		reg := prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			t.Fatal(err)
		}
		o.Brokers, o.Topic, o.Logger = brokers, topic, quiet
		o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
		c := NewConsumer(o, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
			func(context.Context, []Message[*wrapperspb.StringValue]) error { return nil })
		srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		s, err := promscrape.Scrape(context.Background(), http.DefaultClient, srv.URL)
		srv.Close()
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
		group := o.Group
		if o.Broadcast {
			group = ""
		}
		for _, name := range []string{"eventbus_consumed_total", "eventbus_dlq_total", "eventbus_dlq_refused_total", "eventbus_handler_failures_total"} {
			if v, ok := s.Value(name, map[string]string{"topic": topic, "group": group}); !ok || v != 0 {
				t.Errorf("%s{topic=%q,group=%q} = %v (exported: %v), want 0", name, topic, group, v, ok)
			}
		}
		// ChainintelConsumerBrokerErrors sees the first failure to reach the brokers.
		for _, op := range []string{"fetch", "lag", "reader"} {
			l := map[string]string{"topic": topic, "group": group, "op": op}
			if v, ok := s.Value("eventbus_consumer_broker_errors_total", l); !ok || v != 0 {
				t.Errorf("eventbus_consumer_broker_errors_total%v = %v (exported: %v), want 0", l, v, ok)
			}
		}
	}
}
