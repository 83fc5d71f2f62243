package http

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Observer counts every call the route table matches, authentication refusals and rate limits
// included, by route class, route and status, for the platform dashboard:
//
//	edge_requests_total{class,route,status}      calls answered
//	edge_request_duration_seconds{class,route}   time to the last byte
//	edge_credits_total{class,route}              credits charged (X-Credits-Used)
type Observer struct {
	requests metric.Int64Counter
	credits  metric.Int64Counter
	duration metric.Float64Histogram
}

// NewObserver returns an Observer recording on meter.
func NewObserver(meter metric.Meter) *Observer {
	o := &Observer{}
	o.requests, _ = meter.Int64Counter("edge_requests_total", metric.WithDescription("public calls answered, by route class, route and status"))
	o.credits, _ = meter.Int64Counter("edge_credits_total", metric.WithDescription("credits charged, by route class and route"))
	o.duration, _ = meter.Float64Histogram("edge_request_duration_seconds", metric.WithDescription("time to answer a public call"),
		metric.WithExplicitBucketBoundaries(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	return o
}

// Wrap observes rt's calls through h.
func (o *Observer) Wrap(rt routes.Route, h http.Handler) http.Handler {
	if o == nil {
		return h
	}
	base := []attribute.KeyValue{attribute.String("class", string(rt.Class)), attribute.String("route", rt.Key())}
	set := metric.WithAttributeSet(attribute.NewSet(base...))
	// The attribute sets by status are built once per route and status, not per call.
	var byStatus sync.Map // int → metric.MeasurementOption
	withStatus := func(status int) metric.MeasurementOption {
		if v, ok := byStatus.Load(status); ok {
			return v.(metric.MeasurementOption)
		}
		opt := metric.WithAttributeSet(attribute.NewSet(append(base[:2:2], attribute.String("status", strconv.Itoa(status)))...))
		byStatus.Store(status, opt)
		return opt
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		ctx := r.Context()
		o.requests.Add(ctx, 1, withStatus(status))
		o.duration.Record(ctx, time.Since(start).Seconds(), set)
		if v := w.Header()["X-Credits-Used"]; len(v) == 1 && v[0] != "0" {
			if c, err := strconv.ParseInt(v[0], 10, 64); err == nil && c > 0 {
				o.credits.Add(ctx, c, set)
			}
		}
	})
}

// statusWriter remembers the status; it passes Flush and Unwrap through, so streaming and
// WebSocket upgrades (http.ResponseController) still work.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack forwards to the underlying writer (WebSocket upgrades).
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
