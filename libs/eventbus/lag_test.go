package eventbus

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// gate is a handler that, once closed, blocks in the next batch until opened, as a handler
// waiting on a lock or a database does.
type gate struct {
	collector
	gmu     sync.Mutex
	closed  bool
	entered chan struct{} // receives when a batch blocks
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 1), open: make(chan struct{})} }

func (g *gate) handle(ctx context.Context, batch []Message[*wrapperspb.StringValue]) error {
	g.gmu.Lock()
	closed := g.closed
	g.gmu.Unlock()
	if closed {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.open:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.collector.handle(ctx, batch)
}

// consumerGauges reads the consumer's lag (ok false while it has no series) and batch age.
func consumerGauges(t *testing.T, r *sdkmetric.ManualReader) (lag int64, ok bool, age float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	age = -1
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				if m.Name == "eventbus_consumer_lag" && len(d.DataPoints) == 1 {
					lag, ok = d.DataPoints[0].Value, true
				}
			case metricdata.Gauge[float64]:
				if m.Name == "eventbus_batch_age" && len(d.DataPoints) == 1 {
					age = d.DataPoints[0].Value
				}
			}
		}
	}
	return lag, ok, age
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// A handler stuck on one batch while records keep coming shows a lag that grows with them (every
// record of every partition after the last commit) and a batch age above 0; once it gets
// through, both go back to 0. For a consumer group and for a broadcast consumer, whose lag
// counts from the records it handled; exported under the names the dashboards and alerts use.
func TestLagGrowsWhileHandlerIsStuck(t *testing.T) {
	for _, broadcast := range []bool{false, true} {
		t.Run(fmt.Sprintf("broadcast=%v", broadcast), func(t *testing.T) {
			topic := fmt.Sprintf("test.lag%v.v1", broadcast)
			brokers := startBroker(t, topic)
			pub := NewPublisher(brokers, PublisherOptions{})
			defer pub.Close()
			publish := func(n int, prefix string) {
				t.Helper()
				evs := make([]Event, n)
				for i := range evs {
					evs[i] = Event{Topic: topic, Key: fmt.Sprint(prefix, i), Msg: wrapperspb.String(fmt.Sprint(prefix, i))}
				}
				if err := pub.Publish(context.Background(), evs...); err != nil {
					t.Fatal(err)
				}
			}

			mr := sdkmetric.NewManualReader()
			reg := prometheus.NewRegistry()
			exp, err := otelprom.New(otelprom.WithRegisterer(reg))
			if err != nil {
				t.Fatal(err)
			}
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr), sdkmetric.WithReader(exp))
			g := newGate()
			group := "g-lag"
			if broadcast {
				group = ""
			}
			runHandler(t, ConsumerOptions{Brokers: brokers, Group: group, Topic: topic, Logger: quiet, Broadcast: broadcast,
				MeterProvider: mp, LagInterval: 20 * time.Millisecond}, g.handle)
			lagIs := func(want int64) func() bool {
				return func() bool { lag, ok, _ := consumerGauges(t, mr); return ok && lag == want }
			}

			// Running, positioned (a broadcast consumer at the end), nothing behind.
			waitFor(t, "lag 0 on an empty topic", lagIs(0))
			publish(5, "a")
			g.wait(t, 5)
			waitFor(t, "lag 0 after the records were handled", lagIs(0))

			// Stuck on a batch of one record while 20 more arrive: 21 behind.
			g.gmu.Lock()
			g.closed = true
			g.gmu.Unlock()
			publish(1, "b")
			select {
			case <-g.entered:
			case <-time.After(20 * time.Second):
				t.Fatal("the handler never got the record")
			}
			publish(20, "c")
			waitFor(t, "lag 21 while the handler is stuck", lagIs(21))
			waitFor(t, "a batch age while the handler is stuck", func() bool { _, _, age := consumerGauges(t, mr); return age > 0 })

			// Through: both back to 0.
			close(g.open)
			g.wait(t, 26)
			waitFor(t, "lag 0 once the handler got through", lagIs(0))
			waitFor(t, "batch age 0 between batches", func() bool { _, _, age := consumerGauges(t, mr); return age == 0 })

			// The names and labels the dashboards and alerts query.
			srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
			defer srv.Close()
			s, err := promscrape.Scrape(context.Background(), http.DefaultClient, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"eventbus_consumer_lag", "eventbus_batch_age_seconds"} {
				if v, ok := s.Value(name, map[string]string{"topic": topic, "group": group}); !ok || v != 0 {
					t.Errorf("%s{topic=%q,group=%q} = %v (exported: %v)", name, topic, group, v, ok)
				}
			}
		})
	}
}

// A handler call cut by HandlerTimeout (a lock wait, a database that stopped answering) is
// retried with a deadline of its own: once the cause is gone the batch goes through, however
// long it failed. The deadline is not the batch's, which would leave every later retry an
// expired context.
func TestHandlerTimeoutIsPerCall(t *testing.T) {
	const topic = "test.handlertimeout.v1"
	brokers := startBroker(t, topic)
	pub := NewPublisher(brokers, PublisherOptions{})
	defer pub.Close()
	if err := pub.Publish(context.Background(), Event{Topic: topic, Key: "k", Msg: wrapperspb.String("v")}); err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	var mu sync.Mutex
	calls := 0
	runHandler(t, ConsumerOptions{Brokers: brokers, Group: "g-timeout", Topic: topic, Logger: quiet, HandlerTimeout: 200 * time.Millisecond},
		func(ctx context.Context, batch []Message[*wrapperspb.StringValue]) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n <= 3 {
				<-ctx.Done() // stuck until the deadline cuts the call
				return ctx.Err()
			}
			if err := ctx.Err(); err != nil {
				return err // as a database call would fail on an expired context
			}
			return col.handle(ctx, batch)
		})
	if got := col.wait(t, 1); got[0].Msg.Value != "v" {
		t.Fatalf("got %+v", got[0])
	}
}
