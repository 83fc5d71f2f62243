package eventbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// countRetries counts the consumer's "broker unavailable" warnings.
type countRetries struct{ n *atomic.Int64 }

func (h countRetries) Enabled(context.Context, slog.Level) bool { return true }
func (h countRetries) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "broker unavailable; retrying" {
		h.n.Add(1)
	}
	return nil
}
func (h countRetries) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countRetries) WithGroup(string) slog.Handler      { return h }

// A broker that goes away (every connection closed) is waited out: the consumer keeps running
// and consumes what is published once the broker is back, instead of stopping its service. The
// outage shows: eventbus_consumer_broker_errors_total grows, LastBrokerError names it, and
// eventbus_consumer_lag_age_seconds grows past the lag interval while the lag keeps its value.
func TestConsumerOutlivesABrokerOutage(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var down, commitsDown atomic.Bool
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if down.Load() || commitsDown.Load() && req.Key() == kmsg.OffsetCommit.Int16() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	brokers := c.ListenAddrs()
	ctx := context.Background()
	if err := EnsureTopics(ctx, brokers, Security{}, 1, []TopicSpec{{Name: "test.outage.v1", Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	pub := NewPublisher(brokers, PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })
	send := func(v string) {
		if err := pub.Publish(ctx, Event{Topic: "test.outage.v1", Key: v, Msg: wrapperspb.String(v)}); err != nil {
			t.Fatal(err)
		}
	}
	send("a")

	var retries atomic.Int64
	col := &collector{}
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(metrics.Close)
	scrape := func() promscrape.Samples {
		s, err := promscrape.Scrape(ctx, http.DefaultClient, metrics.URL)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cons := NewConsumer(ConsumerOptions{Brokers: brokers, Group: "g-outage", Topic: "test.outage.v1",
		Logger: slog.New(countRetries{&retries}), LagInterval: 100 * time.Millisecond,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))},
		func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} }, col.handle)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cons.Run(rctx) }()
	col.wait(t, 1)
	if e := cons.LastBrokerError(); e != nil {
		t.Fatalf("broker error before the outage: %+v", e)
	}

	down.Store(true)
	// Until the consumer has met the outage at least once (a bound only against a hang).
	deadline := time.Now().Add(2 * time.Minute)
	for retries.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the consumer stopped during the broker outage: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the consumer never noticed the broker outage")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Lag reads fail every 100ms meanwhile; wait until the lag's age is past a few of them.
	brokerErrors := func(s promscrape.Samples, op string) float64 {
		v, _ := s.Value("eventbus_consumer_broker_errors_total", map[string]string{"topic": "test.outage.v1", "group": "g-outage", "op": op})
		return v
	}
	for {
		s := scrape()
		age, _ := s.Value("eventbus_consumer_lag_age_seconds", map[string]string{"topic": "test.outage.v1", "group": "g-outage"})
		if age > 0.5 && brokerErrors(s, "lag") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lag age %v, lag read errors %v during the outage", age, brokerErrors(s, "lag"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := scrape()
	if v := brokerErrors(s, "fetch"); v < 1 {
		t.Errorf("fetch errors during the outage: %v", v)
	}
	if e := cons.LastBrokerError(); e == nil || e.Topic != "test.outage.v1" || e.Group != "g-outage" || e.Error == "" ||
		time.Since(e.Time) > time.Minute {
		t.Errorf("last broker error during the outage: %+v", e)
	}
	down.Store(false)
	send("b")
	col.wait(t, 2)

	// A commit that fails after the batch was handled leaves the batch to be delivered again;
	// the consumer keeps running.
	commitsDown.Store(true)
	send("c")
	col.wait(t, 3)
	commitsDown.Store(false)
	send("d")
	got := col.wait(t, 4)
	select {
	case err := <-done:
		t.Fatalf("the consumer stopped after a failed commit: %v", err)
	default:
	}
	if v := got[len(got)-1].Msg.Value; v != "d" && v != "c" {
		t.Fatalf("last record %q", v)
	}
	// Back to normal, the lag is read again: its age falls under a second.
	for {
		age, _ := scrape().Value("eventbus_consumer_lag_age_seconds", map[string]string{"topic": "test.outage.v1", "group": "g-outage"})
		if age < 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lag age %v after the outage", age)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after the outage: %v", err)
	}
}

// TestStartIsNoBrokerError: a consumer's lag reads before it is positioned are not failures
// to reach the brokers: a broadcast consumer's readers position themselves at its first fetch,
// and a group that has not joined or committed yet has no committed offsets (the broker may
// answer GROUP_ID_NOT_FOUND). No LastBrokerError once the lag is read.
func TestStartIsNoBrokerError(t *testing.T) {
	for _, broadcast := range []bool{true, false} {
		t.Run(fmt.Sprint("broadcast=", broadcast), func(t *testing.T) {
			topic := fmt.Sprintf("test.start%v.v1", broadcast)
			brokers := startBroker(t, topic)
			group := "g-start"
			if broadcast {
				group = ""
			}
			c := NewConsumer(ConsumerOptions{Brokers: brokers, Topic: topic, Group: group, Broadcast: broadcast, Logger: quiet,
				LagInterval: 2 * time.Millisecond}, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
				func(context.Context, []Message[*wrapperspb.StringValue]) error { return nil })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			waitFor(t, "the lag read", func() bool { return !c.LagReadAt().IsZero() })
			if e := c.LastBrokerError(); e != nil {
				t.Fatalf("the consumer's start left a broker error: %+v", *e)
			}
		})
	}
}
