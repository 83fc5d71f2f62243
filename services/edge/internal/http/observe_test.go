package http_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	edgehttp "github.com/chainintel/chainintel/services/edge/internal/http"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
)

// The observer counts calls by class, route and status (a handler that never writes a status
// counts as 200), times them, and adds the credits the response reports.
func TestObserverCountsByClassRouteAndStatus(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	o := edgehttp.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("edge"))
	heavy := routes.Route{Method: "GET", Pattern: "/transfers", Class: routes.Heavy, Credits: 5}
	public := routes.Route{Method: "GET", Pattern: "/chains", Class: routes.Public}
	charged := o.Wrap(heavy, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Credits-Used", "5")
		_, _ = w.Write([]byte("{}"))
	}))
	refused := o.Wrap(heavy, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Credits-Used", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	silent := o.Wrap(public, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, h := range []http.Handler{charged, charged, refused, silent} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	attrs := func(kv ...string) attribute.Set {
		var a []attribute.KeyValue
		for i := 0; i < len(kv); i += 2 {
			a = append(a, attribute.String(kv[i], kv[i+1]))
		}
		return attribute.NewSet(a...)
	}
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: "edge_requests_total", Description: "public calls answered, by route class, route and status",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: attrs("class", "heavy", "route", "GET /transfers", "status", "200"), Value: 2},
			{Attributes: attrs("class", "heavy", "route", "GET /transfers", "status", "429"), Value: 1},
			{Attributes: attrs("class", "public", "route", "GET /chains", "status", "200"), Value: 1},
		}},
	}, got["edge_requests_total"], metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: "edge_credits_total", Description: "credits charged, by route class and route",
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: attrs("class", "heavy", "route", "GET /transfers"), Value: 10},
		}},
	}, got["edge_credits_total"], metricdatatest.IgnoreTimestamp())
	h, ok := got["edge_request_duration_seconds"].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("edge_request_duration_seconds: %+v", got["edge_request_duration_seconds"])
	}
	counts := map[string]uint64{}
	for _, p := range h.DataPoints {
		counts[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Count
	}
	heavySet, publicSet := attrs("class", "heavy", "route", "GET /transfers"), attrs("class", "public", "route", "GET /chains")
	if counts[heavySet.Encoded(attribute.DefaultEncoder())] != 3 || counts[publicSet.Encoded(attribute.DefaultEncoder())] != 1 {
		t.Errorf("duration counts %v", h.DataPoints)
	}
}

// The observer's writer still hijacks (WebSocket upgrades) and flushes.
func TestObserverKeepsHijackAndFlush(t *testing.T) {
	o := edgehttp.NewObserver(sdkmetric.NewMeterProvider().Meter("edge"))
	var hijacked, flushed bool
	h := o.Wrap(routes.Route{Method: "GET", Pattern: "/ws/transfers", Class: routes.Standard}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.NewResponseController(w).Flush()
		_, _, err := w.(http.Hijacker).Hijack()
		hijacked = err == nil
	}))
	rec := &hijackRecorder{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/ws/transfers", nil))
	flushed = rec.Flushed
	if !hijacked || !flushed {
		t.Fatalf("hijacked %v, flushed %v", hijacked, flushed)
	}
}

type hijackRecorder struct{ *httptest.ResponseRecorder }

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, _ := net.Pipe()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

// The cost the observer adds to a call, beside the bare handler.
func BenchmarkObserver(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	rt := routes.Route{Method: "GET", Pattern: "/transfers", Class: routes.Heavy}
	for name, h := range map[string]http.Handler{
		"bare":     bare,
		"observed": edgehttp.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())).Meter("edge")).Wrap(rt, bare),
	} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/transfers", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
